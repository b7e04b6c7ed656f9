/*
 * fuzz_compile.c — libFuzzer target: any bytes, compiled as an .actor file
 * through the compiler library, must give a coherent result (output
 * without errors, an error message with them) and never crash, leak or
 * read out of bounds (built with ASan and UBSan by `make fuzz`).
 *
 * The file name puts the input in a folder that does not exist, so that
 * `import "..."` can find nothing on the machine running the fuzzer.
 *
 *     make fuzz-run FUZZ_TIME=300     # then keep what it found:
 *     build/fuzz/fuzz_compile -merge=1 tests/fuzz/corpus build/fuzz/corpus
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_options opt;
    acc_result r;
    acc_options_init(&opt);
    int rc = acc_compile_buffer("/nonexistent-actorc-fuzz/fuzz.actor",
                                (const char *)data, size, &opt, &r);
    if (r.diagnostics == NULL || strlen(r.diagnostics) != r.diagnostics_len)
        abort();
    if (rc == 0 && (r.errors != 0 || r.header == NULL || r.source == NULL ||
                    strstr(r.diagnostics, "error: ") != NULL))
        abort();
    if (rc != 0 && (r.errors <= 0 || r.errors > ACC_MAX_ERRORS ||
                    r.header != NULL || strstr(r.diagnostics, "error") == NULL))
        abort();
    acc_result_free(&r);
    return 0;
}
