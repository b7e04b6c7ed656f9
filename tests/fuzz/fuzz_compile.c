/*
 * fuzz_compile.c — libFuzzer target: any bytes, compiled as an .actor file
 * through the compiler library, must give a coherent result (output
 * without errors, an error message with them) and never crash, leak or
 * read out of bounds (built with ASan and UBSan by `make fuzz`); run by
 * `make fuzz-run` with -timeout and -rss_limit_mb, so that a hang or a
 * blow-up in memory is a finding too.
 *
 * Imports resolve on disk: the input is compiled as fuzz.actor in a
 * scratch folder made at start-up, which holds a few modules to import
 * (lib.actor, with structs, an enum and an actor; chain.actor, which
 * imports it; loop_a.actor and loop_b.actor, which import each other), and
 * is also the -I folder. An input with a line "//--" splits in two: what
 * comes before it is written to that folder as dyn.actor, for the rest to
 * import, so that the importing side of an import is fuzzed as well as the
 * imported one.
 *
 *     make fuzz-run FUZZ_TIME=300     # then keep what it found:
 *     build/fuzz/fuzz_compile -merge=1 -use_counters=0 -max_len=400000 \
 *         tests/fuzz/corpus build/fuzz/corpus   (tests/fuzz/fuzz.mk says why)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actorc_compiler.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char main_name[96], dyn_name[96];
static const char *include_dirs[1];

static void put(const char *name, const char *text, size_t len)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0)
        abort();
}

static const char *const files[] = {
    "lib.actor", "chain.actor", "loop_a.actor", "loop_b.actor", "dyn.actor",
};

/* The scratch folder goes when the fuzzer exits normally. */
static void remove_dir(void)
{
    char path[128];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof(dir), "/tmp/actorc-fuzz-XXXXXX");
    if (mkdtemp(dir) == NULL)
        abort();
    snprintf(main_name, sizeof(main_name), "%s/fuzz.actor", dir);
    snprintf(dyn_name, sizeof(dyn_name), "%s/dyn.actor", dir);
    include_dirs[0] = dir;
    atexit(remove_dir);
    static const char lib[] =
        "module lib;\n"
        "enum Color { red, green = 5, blue }\n"
        "struct Point { i32 x; i32 y; }\n"
        "struct Shape { Point[4] corners; Color color; string name; "
        "Shape[] parts; }\n"
        "actor Store { state { u64 n; } on put(Shape s, ref<Store> next); "
        "on get(u32 id) -> (Shape s); }\n";
    static const char chain[] =
        "module chain;\nimport \"lib.actor\";\n"
        "struct Wrap { lib.Shape s; lib.Point p; }\n"
        "actor Relay { on pass(Wrap w, ref<lib.Store> to); }\n";
    static const char loop_a[] = "module loop_a;\nimport \"loop_b.actor\";\n";
    static const char loop_b[] = "module loop_b;\nimport \"loop_a.actor\";\n";
    put("lib.actor", lib, sizeof(lib) - 1);
    put("chain.actor", chain, sizeof(chain) - 1);
    put("loop_a.actor", loop_a, sizeof(loop_a) - 1);
    put("loop_b.actor", loop_b, sizeof(loop_b) - 1);
    return 0;
}

static const uint8_t *find_split(const uint8_t *data, size_t size)
{
    static const char mark[] = "\n//--\n";
    size_t n = sizeof(mark) - 1;
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(data + i, mark, n) == 0)
            return data + i;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *split = find_split(data, size);
    if (split != NULL) {
        put("dyn.actor", (const char *)data, (size_t)(split - data));
        size -= (size_t)(split - data) + 6;
        data = split + 6;
    } else {
        unlink(dyn_name);
    }
    acc_options opt;
    acc_result r;
    acc_options_init(&opt);
    opt.include_dirs = include_dirs;
    opt.include_dir_count = 1;
    /* Inputs of a few hundred KB can ask for gigabytes of code: a lower
     * cap keeps each run within -rss_limit_mb, and exercises the limit. */
    opt.max_output = (size_t)32 << 20;
    int rc = acc_compile_buffer(main_name, (const char *)data, size, &opt, &r);
    if (r.diagnostics == NULL || strlen(r.diagnostics) != r.diagnostics_len)
        abort();
    if (rc == 0 && (r.errors != 0 || r.header == NULL || r.source == NULL ||
                    strstr(r.diagnostics, "error: ") != NULL))
        abort();
    if (rc != 0 && (r.errors <= 0 || r.errors > ACC_MAX_ERRORS ||
                    r.header != NULL || strstr(r.diagnostics, "error") == NULL))
        abort();
    /* An input that compiles is drawn too (actorc --graph): every ref of
     * a checked input resolves, and the walk must hold to its budget. */
    if (rc == 0) {
        acc_result_free(&r);
        opt.graph = true;
        rc = acc_compile_buffer(main_name, (const char *)data, size, &opt, &r);
        if (r.diagnostics == NULL || (rc == 0 && r.graph == NULL) ||
            (rc != 0 && strstr(r.diagnostics, "error: ") == NULL))
            abort();
    }
    acc_result_free(&r);
    return 0;
}
