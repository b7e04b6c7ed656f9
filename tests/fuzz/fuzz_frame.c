/*
 * fuzz_frame.c — libFuzzer target over the node protocol's batch parser
 * (runtime/node/frame.c): any bytes, as they would arrive from an
 * authenticated peer, must keep the properties of frame_check.h and never
 * read out of bounds (built with ASan and UBSan by `make fuzz-frame`).
 *
 *     make fuzz-frame-run FUZZ_TIME=300   # then keep what it found:
 *     build/fuzz/fuzz_frame -merge=1 tests/fuzz/frame-corpus build/fuzz/frame-corpus
 * (tests/fuzz/fuzz.mk says more).
 */
#include "frame_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (frame_check(data, size) != 0)
        abort();
    return 0;
}
