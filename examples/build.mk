# Examples: every folder examples/NAME holds NAME.actor and the C files of
# one program, built into $(BUILD)/examples/NAME/NAME the way a user would:
# actorc generates NAME.actor.[ch], the C compiler builds the rest.

EXAMPLES := $(patsubst examples/%/,%,$(sort $(dir $(wildcard examples/*/*.actor))))
EXAMPLE_BINS := $(foreach e,$(EXAMPLES),$(BUILD)/examples/$(e)/$(e))

define example_rules
$$(eval $$(call actorc_rules,examples/$(1),$(BUILD)/examples/$(1),))

$(1)_OBJ := $$(patsubst %.c,$(BUILD)/obj/%.o,$$(wildcard examples/$(1)/*.c)) \
            $$(patsubst examples/$(1)/%.actor,$(BUILD)/examples/$(1)/%.actor.o,$$(wildcard examples/$(1)/*.actor))
$$(patsubst %.c,$(BUILD)/obj/%.o,$$(wildcard examples/$(1)/*.c)): CPPFLAGS += -I$(BUILD)/examples/$(1)
$$(patsubst %.c,$(BUILD)/obj/%.o,$$(wildcard examples/$(1)/*.c)): $$(patsubst examples/$(1)/%.actor,$(BUILD)/examples/$(1)/%.actor.h,$$(wildcard examples/$(1)/*.actor))

$(BUILD)/examples/$(1)/$(1): $$($(1)_OBJ) $(BUILD)/libactorc.a
	$(CC) $(LDFLAGS) -o $$@ $$^ $(RUNTIME_LIBS)
endef
$(foreach e,$(EXAMPLES),$(eval $(call example_rules,$(e))))

examples: $(EXAMPLE_BINS)

# The README's first command: build everything, then play 1,000,000 round
# trips of ping-pong on every core.
demo: all $(BUILD)/examples/pingpong/pingpong
	$(BUILD)/examples/pingpong/pingpong 1000000

# examples/cluster: three nodes (processes) on this machine, a node killed
# and restarted (docs/NODES.md).
cluster-demo: $(BUILD)/examples/cluster/cluster
	$(BUILD)/examples/cluster/cluster
