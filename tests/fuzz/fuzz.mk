# The fuzz targets (libFuzzer, clang only): the compiler, and the node
# protocol's batch parser (make fuzz-frame, fuzz-frame-run; corpus in
# tests/fuzz/frame-corpus/, replayed by tests/runtime/test_node.c).
#
# The compiler's:
#   make fuzz                     builds build/fuzz/fuzz_compile
#   make fuzz-run FUZZ_TIME=300   runs it from tests/fuzz/corpus and the seeds,
#                                 on inputs up to a few hundred KB; a run
#                                 over 10 s or 2 GB is a finding (a hang or a
#                                 blow-up), as a crash is
# What it finds is minimized into tests/fuzz/corpus/, which `make test`
# replays through the compiler library (tests/compiler/test_corpus.c).
# Both runs are bounded (FUZZ_TIME seconds) and fail on a crash, a hang
# (-timeout) or a blow-up (-rss_limit_mb), leaving the input that did it in
# build/fuzz/ (-artifact_prefix); .ci/run runs both for 2 minutes each.
#
# Keeping what a run found (only inputs that add coverage):
#   build/fuzz/fuzz_compile -merge=1 -use_counters=0 -max_len=400000 \
#       tests/fuzz/corpus build/fuzz/corpus
#   build/fuzz/fuzz_frame -merge=1 tests/fuzz/frame-corpus build/fuzz/frame-corpus
# The compiler's corpus is merged on edges alone (-use_counters=0): with
# hit counts as features too, one 5-minute run kept 4,600 inputs where
# edges need 820, and make test replays every one.

FUZZ_DIR := build/fuzz
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=all -D_GNU_SOURCE
FUZZ_SRC := $(filter-out compiler/main.c,$(wildcard compiler/*.c)) \
            $(GRAMMAR_OUT)/lexer.c $(GRAMMAR_OUT)/parser.c tests/fuzz/fuzz_compile.c

.PHONY: fuzz fuzz-run
fuzz: $(FUZZ_DIR)/fuzz_compile

$(FUZZ_DIR)/fuzz_compile: $(FUZZ_SRC) $(GRAMMAR_OUT)/parser.h $(wildcard compiler/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Icompiler -I$(GRAMMAR_OUT) $(filter %.c,$^) -o $@

fuzz-run: $(FUZZ_DIR)/fuzz_compile
	@mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/fuzz_compile -max_total_time=$(FUZZ_TIME) -max_len=400000 \
	    -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$(FUZZ_DIR)/ \
	    -dict=tests/fuzz/actor.dict $(FUZZ_DIR)/corpus tests/fuzz/corpus tests/fuzz/seeds

FRAME_SRC := runtime/node/frame.c runtime/lib/wire.c tests/fuzz/fuzz_frame.c

.PHONY: fuzz-frame fuzz-frame-run
fuzz-frame: $(FUZZ_DIR)/fuzz_frame

$(FUZZ_DIR)/fuzz_frame: $(FRAME_SRC) tests/fuzz/frame_check.h runtime/node/frame.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(SODIUM_CFLAGS) -Iruntime/include -Iruntime $(filter %.c,$^) \
	    -o $@ $(SODIUM_LIBS)

fuzz-frame-run: $(FUZZ_DIR)/fuzz_frame
	@mkdir -p $(FUZZ_DIR)/frame-corpus
	$(FUZZ_DIR)/fuzz_frame -max_total_time=$(FUZZ_TIME) -max_len=4096 \
	    -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$(FUZZ_DIR)/ \
	    $(FUZZ_DIR)/frame-corpus tests/fuzz/frame-corpus
