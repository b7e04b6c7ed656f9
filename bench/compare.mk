# make bench-compare: actorc's actor benchmarks next to their Erlang/OTP and
# C++ Actor Framework peers (bench/peers/), compared by bench/compare.sh.
#
#   make bench-compare                      README sizes, 3 runs each
#   make bench-compare BENCH_SIZE=small     a tenth of that
#   make bench-compare BENCH_RUNS=5 AC_WORKERS=2
#   make bench-peers                        only build the peers
#
# Included from the top-level Makefile; bench-build (bench/build.mk) builds
# actorc's own $(BUILD)/bench/<name>, and its BENCH_ARGS_<name> (the sizes
# for BENCH_SIZE) are handed to compare.sh, so both use the same sizes.

PEER_BENCHES := pingpong ring ring_multi skynet fanin pairs stream inject mesh ask spawn broker
PEER_CXX ?= g++
PEER_CXXFLAGS ?= -std=c++17 -O2 -pthread -Wall -Wextra
PEER_CAF_LIBS ?= -lcaf_core
PEER_ERLC ?= erlc

PEER_CAF_BINS := $(PEER_BENCHES:%=$(BUILD)/bench/peers/caf/%)
# The two-node peers (bench/peers/erlang/run_remote.sh runs them), against
# actorc's remote_* of bench/build.mk; Erlang only (CAF has no peer here).
PEER_REMOTE_BENCHES := remote_pingpong remote_stream
PEER_ERL_REMOTE := $(PEER_REMOTE_BENCHES) remote_down bench_remote
PEER_ERL_BEAMS := $(PEER_BENCHES:%=$(BUILD)/bench/peers/erlang/%.beam) \
                  $(PEER_ERL_REMOTE:%=$(BUILD)/bench/peers/erlang/%.beam) \
                  $(BUILD)/bench/peers/erlang/bench_peer.beam

.PHONY: bench-deps bench-peers bench-compare

# The peers' packages (erlang-nox, libcaf-dev, gnuplot-nox), installed like
# the base ones: with apt when root, otherwise named, and the build fails.
bench-deps:
	@tools/deps.sh --bench

$(BUILD)/bench/peers/caf/%: bench/peers/caf/%.cpp bench/peers/caf/common.hpp | bench-deps
	@mkdir -p $(@D)
	$(PEER_CXX) $(PEER_CXXFLAGS) $< -o $@ $(PEER_CAF_LIBS)

$(BUILD)/bench/peers/erlang/%.beam: bench/peers/erlang/%.erl | bench-deps
	@mkdir -p $(@D)
	$(PEER_ERLC) -Werror -o $(@D) $<

bench-peers: $(PEER_CAF_BINS) $(PEER_ERL_BEAMS)

bench-compare: bench-build bench-peers
	BUILD=$(BUILD) BENCH_SIZE=$(BENCH_SIZE) BENCH_RUNS=$(BENCH_RUNS) \
	  $(foreach b,$(PEER_BENCHES) $(PEER_REMOTE_BENCHES),$(if $(BENCH_ARGS_$(b)),BENCH_ARGS_$(b)="$(BENCH_ARGS_$(b))")) \
	  bench/compare.sh
