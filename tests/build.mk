# Criterion suites. Each folder under tests/ is one test binary:
#   tests/compiler -> $(BUILD)/tests/test_compiler  (links the compiler library)
#   tests/runtime  -> $(BUILD)/tests/test_runtime
#   tests/cluster  -> $(BUILD)/tests/test_cluster   (starts $(CLUSTERNODE) processes)
# A suite's *.actor files are compiled by $(BUILD)/actorc into
# $(BUILD)/tests/gen/<suite>/ and linked into that suite.

TEST_SUITES := compiler runtime cluster
# Criterion cannot run under ThreadSanitizer (see tests/support/
# tsan-include/criterion/criterion.h): that build compiles the concurrent
# suites against a stand-in header and its own runner. The compiler suite is
# single-threaded; AddressSanitizer covers it.
ifneq ($(findstring thread,$(SANITIZE)),)
TEST_SUITES := runtime cluster
TEST_CRITERION_CFLAGS := -Itests/support/tsan-include
TEST_CRITERION_LIBS :=
TEST_MAIN := $(BUILD)/obj/tests/support/tsan_main.o
$(TEST_MAIN): CPPFLAGS += $(TEST_CRITERION_CFLAGS)
TEST_RUN_ARGS :=
else
TEST_CRITERION_CFLAGS := $(CRITERION_CFLAGS)
TEST_CRITERION_LIBS := $(CRITERION_LIBS)
TEST_MAIN :=
TEST_RUN_ARGS := --jobs=1
endif
TEST_BINS := $(TEST_SUITES:%=$(BUILD)/tests/test_%)

define suite_rules
$(1)_SRC := $$(wildcard tests/$(1)/*.c)
$(1)_IDL := $$(wildcard tests/$(1)/*.actor)
$(1)_GEN_DIR := $(BUILD)/tests/gen/$(1)
$(1)_GEN_C := $$($(1)_IDL:tests/$(1)/%.actor=$$($(1)_GEN_DIR)/%.actor.c)
$(1)_OBJ := $$($(1)_SRC:%.c=$(BUILD)/obj/%.o) $$($(1)_GEN_C:%.c=%.o)

$$(eval $$(call actorc_rules,tests/$(1),$$($(1)_GEN_DIR),))

$$($(1)_SRC:%.c=$(BUILD)/obj/%.o): CPPFLAGS += -I$$($(1)_GEN_DIR) -Itests/$(1) $(COMPILER_CPPFLAGS) $(TEST_CRITERION_CFLAGS) \
    -DACTORC_BIN='"$(BUILD)/actorc"' -DTEST_SRC_DIR='"tests/$(1)"' -DTEST_BUILD_DIR='"$(BUILD)/tests"'
$$($(1)_SRC:%.c=$(BUILD)/obj/%.o): $$($(1)_GEN_C)

$(BUILD)/tests/test_$(1): $$($(1)_OBJ) $(TEST_MAIN) $(if $(filter compiler,$(1)),$(BUILD)/libactorc-compiler.a) $(BUILD)/libactorc.a
	@mkdir -p $$(@D)
	$(CC) $$(LDFLAGS) -o $$@ $$^ $(RUNTIME_LIBS) $(TEST_CRITERION_LIBS)
endef
$(foreach s,$(TEST_SUITES),$(eval $(call suite_rules,$(s))))

# test_deque.c takes the deque alone, through the core's own header;
# test_amap.c the services' tables, through lib's;
# test_node.c and test_node_files.c the cluster file's parser, through lib's;
# test_steal.c the monitor's test hooks, through the core's sched.h;
# test_hub.c the hub's, the same way;
# test_sched_stats.c the same hook (whether the monitor exists);
# test_footprint.c the control block, the pools and the routing table;
# test_ask.c and test_records.c the ask store's record count;
# test_quota.c the per-peer counts;
# test_addr.c the address stream, test_route.c the routing table.
$(BUILD)/obj/tests/runtime/test_deque.o $(BUILD)/obj/tests/runtime/test_node.o \
    $(BUILD)/obj/tests/runtime/test_node_files.o \
    $(BUILD)/obj/tests/runtime/test_addr.o $(BUILD)/obj/tests/runtime/test_route.o \
    $(BUILD)/obj/tests/runtime/test_amap.o $(BUILD)/obj/tests/runtime/test_steal.o \
    $(BUILD)/obj/tests/runtime/test_hub.o \
    $(BUILD)/obj/tests/runtime/test_sched_stats.o \
    $(BUILD)/obj/tests/runtime/test_footprint.o $(BUILD)/obj/tests/runtime/test_ask.o \
    $(BUILD)/obj/tests/runtime/test_records.o $(BUILD)/obj/tests/runtime/test_quota.o: CPPFLAGS += -Iruntime
$(BUILD)/obj/tests/runtime/test_node.o $(BUILD)/obj/tests/compiler/test_services.o \
    $(BUILD)/obj/tests/runtime/test_node_files.o $(BUILD)/obj/tests/runtime/test_node_gate.o \
    $(BUILD)/obj/tests/runtime/test_remote.o $(BUILD)/obj/tests/runtime/test_stats.o \
    $(BUILD)/obj/tests/runtime/test_priority.o $(BUILD)/obj/tests/runtime/test_mistyped.o \
    $(BUILD)/obj/tests/runtime/test_quota.o: CPPFLAGS += -Itests/support
$(BUILD)/obj/tests/runtime/test_node.o: CPPFLAGS += -Itests/fuzz
$(BUILD)/obj/tests/runtime/test_node_files.o $(BUILD)/obj/tests/runtime/test_node_gate.o: \
    CPPFLAGS += $(ZMQ_CFLAGS)
$(BUILD)/obj/tests/runtime/test_node.o: CPPFLAGS += $(ZMQ_CFLAGS) -DKEYGEN_BIN='"$(BUILD)/actorc-keygen"' \
    -DBUILD_DIR='"$(BUILD)"' -DTEST_CC='"$(CC)"' -DTEST_LINK='"$(SANFLAGS) -pthread $(RUNTIME_LIBS)"'

# The cluster suite's node program (tests/cluster/node): a runtime made a
# node of a cluster file and driven over stdin/stdout. It is built with the
# suite's flags, sanitizers included, and is what netns.sh runs too: every
# .c and .actor of tests/cluster/node (one scenario's topic a file).
CLUSTERNODE := $(BUILD)/tests/clusternode
CLUSTERNODE_GEN := $(BUILD)/tests/gen/cluster-node
CLUSTERNODE_IDL := $(wildcard tests/cluster/node/*.actor)
CLUSTERNODE_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/cluster/node/*.c)) \
    $(CLUSTERNODE_IDL:tests/cluster/node/%.actor=$(CLUSTERNODE_GEN)/%.actor.o)
$(eval $(call actorc_rules,tests/cluster/node,$(CLUSTERNODE_GEN),))
$(filter $(BUILD)/obj/%,$(CLUSTERNODE_OBJ)): CPPFLAGS += -I$(CLUSTERNODE_GEN)
$(filter $(BUILD)/obj/%,$(CLUSTERNODE_OBJ)): \
    $(CLUSTERNODE_IDL:tests/cluster/node/%.actor=$(CLUSTERNODE_GEN)/%.actor.h)
$(CLUSTERNODE): $(CLUSTERNODE_OBJ) $(BUILD)/libactorc.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(RUNTIME_LIBS)
$(cluster_SRC:%.c=$(BUILD)/obj/%.o): CPPFLAGS += -Itests/support -DCLUSTERNODE_BIN='"$(CLUSTERNODE)"'

# The cases that need network namespaces (a cut link, a slow one): root
# only, so not part of make test; .ci/run runs them.
.PHONY: test-netns
test-netns: $(CLUSTERNODE) $(BUILD)/actorc-keygen
	tests/cluster/netns.sh $(CLUSTERNODE) $(BUILD)/actorc-keygen

# tests/runtime/alloc_count.c counts every heap allocation of the runtime
# suite, the runtime's own included, through the linker; and
# tests/runtime/fake_clock.c lets a test freeze its CLOCK_MONOTONIC.
$(BUILD)/tests/test_runtime: private LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc \
    -Wl,--wrap=aligned_alloc,--wrap=posix_memalign,--wrap=clock_gettime

# --jobs=1: the runtime tests start their own worker threads, and the
# machines have two cores; parallel test processes only add noise.
# The examples are part of the suite: each runs to completion and verifies
# its own result (pingpong its round-trip count, chat what each user heard,
# bank every balance); a failing one shows its whole output.
EXAMPLE_TEST_ARGS_pingpong := 20000
# Examples that run in deterministic mode also run under seeded schedules
# (docs/RUNTIME.md, Systematic testing): one program, 200 interleavings,
# and a failing seed is printed for replay. bank is not among them: it
# waits out real timeouts, which a deterministic runtime's clock never
# reaches (its logic is explored by tests/runtime/test_explore.c).
EXAMPLES_SEEDED := chat
EXAMPLE_SEEDS := 200
# tests/structure: the runtime's dependencies point one way (check.sh, on
# the sources and the objects just built), and the check catches a planted
# violation of each kind (selftest.sh).
# tests/bench: make bench-compare's arithmetic (per-round ratios, their
# median and spread, the verdicts), bench/ab.sh's rows and bench/count.sh's
# differences on stub programs, no real benchmark; bench/scale.sh's curve on stubs, and a real bundle of
# pairs run with an empty environment.
# tests/docs: every fenced block of README.md and docs/*.md is checked as its
# info string says (tests/docs/README.md), and a planted wrong one is caught.
test: all $(TEST_BINS) $(CLUSTERNODE) examples $(if $(SANITIZE),,test-user $(BUILD)/bench/pairs)
	@echo "== structure"; tests/structure/check.sh runtime $(BUILD)/obj/runtime
	@tests/structure/selftest.sh runtime $(BUILD)/obj/runtime $(CC)
	@tests/structure/exports.sh runtime/include/actorc.h $(BUILD)/libactorc.so
	@echo "== bench compare"; tests/bench/compare.sh
	@tests/bench/ab.sh
	@tests/bench/count.sh
	@$(if $(SANITIZE),:,tests/bench/scale.sh $(BUILD))
	@echo "== man"; $(MAN_LINT)
	@echo "== docs"; tests/docs/check.sh $(BUILD) "$(CC)" "$(SANFLAGS)" "$(RUNTIME_LIBS)" README.md $(wildcard docs/*.md) $(wildcard examples/*/README.md)
	@tests/docs/selftest.sh $(BUILD) "$(CC)" "$(SANFLAGS)" "$(RUNTIME_LIBS)"
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; $$t $(TEST_RUN_ARGS) $(TEST_ARGS); done
	@echo "== examples"; set -e; $(foreach e,$(EXAMPLES),\
	    $(BUILD)/examples/$(e)/$(e) $(EXAMPLE_TEST_ARGS_$(e)) > $(BUILD)/examples/$(e)/$(e).out \
	        || { cat $(BUILD)/examples/$(e)/$(e).out; exit 1; }; \
	    tail -1 $(BUILD)/examples/$(e)/$(e).out;)
	@echo "== examples under seeded schedules"; set -e; $(foreach e,$(EXAMPLES_SEEDED),\
	    for s in $$(seq 1 $(EXAMPLE_SEEDS)); do \
	        AC_WORKERS=0 AC_SEED=$$s $(BUILD)/examples/$(e)/$(e) > $(BUILD)/examples/$(e)/$(e).seeded.out 2>&1 \
	            || { cat $(BUILD)/examples/$(e)/$(e).seeded.out; \
	                 echo "$(e) failed with seed $$s: AC_WORKERS=0 AC_SEED=$$s $(BUILD)/examples/$(e)/$(e) to replay"; exit 1; }; \
	    done; echo "$(e): ok in $(EXAMPLE_SEEDS) seeded schedules";)

# tests/user: the new user's path (docs/BUILD.md). actorc installed into a
# fresh prefix, then programs built from empty folders with the build files
# docs/BUILD.md gives (run.sh says what is checked), examples/chat through
# its own Makefile, and DESTDIR staging undone by make uninstall. Not under
# the sanitizers: it tests the build, not the runtime.
USER_WORK := $(abspath $(BUILD))/user
USER_WAYS := make make-lto cmake-ninja cmake-make cmake-static meson
.PHONY: test-user
test-user: all
	@echo "== user"; rm -rf $(USER_WORK); mkdir -p $(USER_WORK)
	@$(MAKE) --no-print-directory install PREFIX=$(USER_WORK)/prefix > $(USER_WORK)/install.log
	@tests/user/run.sh $(USER_WORK)/prefix $(USER_WORK) $(USER_WAYS)
	@tests/user/selftest.sh $(USER_WORK)/prefix $(USER_WORK)/selftest
	@cp -r examples/chat $(USER_WORK)/chat
	@env -u MAKEFLAGS -u MAKELEVEL PKG_CONFIG_PATH=$(USER_WORK)/prefix/lib/pkgconfig \
	    make -C $(USER_WORK)/chat -j4 > $(USER_WORK)/chat.log 2>&1 || { cat $(USER_WORK)/chat.log; exit 1; }
	@$(USER_WORK)/chat/chat > $(USER_WORK)/chat.out || { cat $(USER_WORK)/chat.out; exit 1; }
	@echo "user: examples/chat built through its Makefile: $$(tail -1 $(USER_WORK)/chat.out)"
	@$(MAKE) --no-print-directory install PREFIX=/usr/local DESTDIR=$(USER_WORK)/stage > /dev/null
	@tests/user/staging.sh $(USER_WORK)/stage
	@$(MAKE) --no-print-directory uninstall PREFIX=/usr/local DESTDIR=$(USER_WORK)/stage > /dev/null
	@tests/user/staging.sh $(USER_WORK)/stage --after
