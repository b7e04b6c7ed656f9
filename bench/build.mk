# Benchmarks: bench/NAME.c (+ its .actor) -> $(BUILD)/bench/NAME.
# ring_multi shares ring.actor; route links the runtime's internals; the
# remote_* run two processes (bench/remote.h); remote_floor and mesh_idle
# have no actors of their own.

BENCH_NAMES := pingpong ring ring_multi skynet fanin pairs stream inject mesh ask spawn broker \
               spawn_idle route idle remote_pingpong remote_floor remote_stream remote_down mesh_idle
BENCH_NO_IDL := route remote_floor mesh_idle
BENCH_BINS := $(BENCH_NAMES:%=$(BUILD)/bench/%)
BENCH_GEN := $(BUILD)/bench/gen
bench_idl = $(if $(filter ring_multi,$(1)),ring,$(1))

# Built as a user who wants speed builds: with link-time optimisation
# (gcc release builds; see LTO_CFLAGS in the Makefile).
$(eval $(call actorc_rules,bench,$(BENCH_GEN),$(LTO_CFLAGS)))

$(BUILD)/obj/bench/%.o: CPPFLAGS += -I$(BENCH_GEN) -Ibench $(SODIUM_CFLAGS)
$(BUILD)/obj/bench/%.o: OBJ_CFLAGS := $(LTO_CFLAGS)
$(BUILD)/obj/bench/route.o: CPPFLAGS += -Iruntime
$(BUILD)/obj/bench/remote_floor.o: CPPFLAGS += $(ZMQ_CFLAGS)
$(foreach b,$(filter-out $(BENCH_NO_IDL),$(BENCH_NAMES)),\
  $(eval $(BUILD)/obj/bench/$(b).o: $(BENCH_GEN)/$(call bench_idl,$(b)).actor.h))
$(foreach b,$(filter-out $(BENCH_NO_IDL),$(BENCH_NAMES)),\
  $(eval $(BUILD)/bench/$(b): $(BUILD)/obj/bench/$(b).o $(BENCH_GEN)/$(call bench_idl,$(b)).actor.o $(BUILD)/libactorc.a))
$(foreach b,$(BENCH_NO_IDL),$(eval $(BUILD)/bench/$(b): $(BUILD)/obj/bench/$(b).o $(BUILD)/libactorc.a))

$(BENCH_BINS):
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(LTO_LDFLAGS) -o $@ $^ $(RUNTIME_LIBS)

# Sizes from bench/README.md; BENCH_SIZE=small runs a tenth of each.
ifeq ($(BENCH_SIZE),small)
BENCH_ARGS_pingpong := 100000
BENCH_ARGS_ring := 1000 1000000
BENCH_ARGS_ring_multi := 1000 1000 1000000
BENCH_ARGS_skynet := 5
BENCH_ARGS_fanin := 100 10000
BENCH_ARGS_pairs := 1000 1000
BENCH_ARGS_stream := 1000000
BENCH_ARGS_inject := 60 10000
BENCH_ARGS_mesh := 120 100 100
BENCH_ARGS_ask := 1000 100
BENCH_ARGS_spawn := 10000
BENCH_ARGS_broker := 100 10000
BENCH_ARGS_spawn_idle := 100000
BENCH_ARGS_remote_pingpong := 10000
BENCH_ARGS_remote_floor := 10000
BENCH_ARGS_remote_stream := 100000 64
else
BENCH_ARGS_pingpong := 1000000
BENCH_ARGS_ring := 1000 10000000
BENCH_ARGS_ring_multi := 1000 1000 10000000
BENCH_ARGS_skynet := 6
BENCH_ARGS_fanin := 100 100000
BENCH_ARGS_pairs := 1000 10000
BENCH_ARGS_stream := 10000000
BENCH_ARGS_inject := 60 100000
BENCH_ARGS_mesh := 120 100 1000
BENCH_ARGS_ask := 1000 1000
BENCH_ARGS_spawn := 100000
BENCH_ARGS_broker := 100 100000
BENCH_ARGS_spawn_idle := 1000000
BENCH_ARGS_remote_pingpong := 100000
BENCH_ARGS_remote_floor := 100000
BENCH_ARGS_remote_stream := 1000000 64
endif
BENCH_ARGS_route :=
BENCH_ARGS_idle := $(if $(filter small,$(BENCH_SIZE)),1 50,5 200)
BENCH_ARGS_mesh_idle := $(if $(filter small,$(BENCH_SIZE)),4 1,16 5)
# remote_down runs twice, after a kill and after a freeze, with the link
# timeout at its default (ms).
BENCH_DOWN_MS := 800
BENCH_ARGS_remote_down := kill $(BENCH_DOWN_MS)

.PHONY: bench bench-build
bench-build: $(BENCH_BINS)

bench: all bench-build
	@set -e; $(foreach b,$(BENCH_NAMES),$(BUILD)/bench/$(b) $(BENCH_ARGS_$(b));) \
	  $(BUILD)/bench/remote_down stop $(BENCH_DOWN_MS)

# The spin/park sweep (bench/spin_sweep.sh): every AC_SPIN_ROUNDS setting
# built in its own folder under $(BUILD)/spin, run interleaved.
.PHONY: bench-spin
bench-spin: all
	SPIN_BUILD=$(BUILD)/spin BENCH_SIZE=$(BENCH_SIZE) bench/spin_sweep.sh
