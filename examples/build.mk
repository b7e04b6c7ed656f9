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

# make graphs: each example's actors drawn, into
# $(BUILD)/examples/NAME/NAME.svg: actorc --graph writes the Graphviz
# description (with a depfile, so that an edited import redraws it), and
# Graphviz's dot renders it. The same text is in each example's README.md,
# which make test holds to the IDL; make update-graphs rewrites it there.
EXAMPLE_GRAPHS := $(foreach e,$(EXAMPLES),$(BUILD)/examples/$(e)/$(e).svg)

$(BUILD)/examples/%.actor.dot: examples/%.actor $(BUILD)/actorc
	@mkdir -p $(@D)
	$(BUILD)/actorc --graph -MD -o $(@D) $<

$(BUILD)/examples/%.svg: $(BUILD)/examples/%.actor.dot | deps
	dot -Tsvg -o $@ $<

-include $(EXAMPLE_GRAPHS:.svg=.actor.dot.d)

graphs: $(EXAMPLE_GRAPHS) $(EXAMPLE_GRAPHS:.svg=.actor.dot)

update-graphs: $(BUILD)/actorc
	@tools/update-graphs.sh $(BUILD)/actorc $(wildcard examples/*/README.md)

.PHONY: graphs update-graphs
