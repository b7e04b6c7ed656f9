/*
 * actorc_compiler.h — the actorc compiler as a library.
 *
 * The command line (compiler/main.c) and the tests call these functions; the
 * passes behind them (lex, parse, check, generate) are internal (acc.h).
 *
 *     acc_options opt;
 *     acc_result res;
 *     acc_options_init(&opt);
 *     acc_compile_buffer("bank.actor", text, len, &opt, &res);
 *     fputs(res.diagnostics, stderr);
 *     if (res.errors == 0) ... res.header, res.source ...
 *     acc_result_free(&res);
 *
 * Nothing here exits the process or prints: diagnostics are rendered into
 * the result, in the GNU form with the source line and a caret.
 */
#ifndef ACTORC_COMPILER_H
#define ACTORC_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACC_NAME "actorc"
#define ACC_VERSION "0.1.0"

/* Default cap on the errors reported for one compilation. */
#define ACC_MAX_ERRORS 20

/* The most source one compilation reads: the input and every file it
 * imports, together (16 MiB). More is refused with an error, so that a
 * hostile or runaway input cannot make the compiler take memory without
 * bound; real definitions are a few kilobytes. */
#define ACC_MAX_INPUT ((size_t)16 << 20)

/* The cap on the generated code, header and source together (256 MiB:
 * 50,000 messages in one actor make 180 MB): a small input can ask for a
 * great deal of code (each message makes a dozen functions), which is
 * held in memory unless acc_options.write takes it as it is made. An
 * input that would need more is refused with an error. */
#define ACC_MAX_OUTPUT ((size_t)256 << 20)

typedef struct acc_options {
    /* Base name of the outputs, e.g. "bank.actor" gives "bank.actor.h" and
     * "bank.actor.c". NULL: the input's base name, or "<module>.actor" when
     * name_from_module is set. */
    const char *output_name;
    /* Name the outputs after the module (for input without a file name). */
    bool name_from_module;
    /* Errors to report before giving up; 0 means ACC_MAX_ERRORS. */
    int max_errors;
    /* -I directories, in order: where `import "x.actor";` is looked up
     * after the importing file's own folder. */
    const char *const *include_dirs;
    size_t include_dir_count;
    /* Suppress every warning (-w); it outranks the others below. */
    bool no_warnings;
    /* Warnings by name (acc_warning_id; bit 1u << id), over the defaults
     * (acc_warning_default): set in warn_on, a warning is shown
     * (-W<name>); in warn_off, not (-Wno-<name>); in warn_error, it is an
     * error (-Werror=<name>); in warn_no_error, it stays a warning
     * (-Wno-error=<name>) even with warn_all_errors (-Werror). The command
     * line resolves the options in order, so that a bit is in at most one
     * of warn_on and warn_off (and of warn_error and warn_no_error). */
    unsigned warn_on, warn_off, warn_error, warn_no_error;
    bool warn_all_errors;
    /* The cap on the generated code, header and source together; 0 means
     * ACC_MAX_OUTPUT (larger values are held to it as well). */
    size_t max_output;
    /* Where the generated code goes as it is made. NULL: it is held in
     * memory and handed back in acc_result's header and source. Set, the
     * code is handed to `write` in pieces of about 64 KiB as it is
     * generated, in order (all of the header, then the source), `name`
     * being the file's ("bank.actor.h"), each file at least once (an empty
     * piece, if need be): memory then does not grow with the output. The
     * result's header and source are NULL, their lengths the totals
     * written. A compilation can still fail after pieces were written (the
     * output cap, memory): the result's errors say so, and what was
     * written is to be discarded. */
    void (*write)(void *arg, const char *name, const char *data, size_t len);
    void *write_arg;
    /* text[len] is a NUL byte (acc_read_file's buffers end in one), and the
     * text stays as it is until the call returns: it is read where it is
     * rather than copied, so that the input is held once (it is the
     * largest thing a compilation holds after its AST). */
    bool in_place;
    /* Write the Graphviz (dot) description of the actor system instead of
     * the C (actorc --graph): one file, NAME.actor.dot, in acc_result's
     * graph (or handed to `write`); header and source are not made. */
    bool graph;
} acc_options;

typedef struct acc_result {
    int errors;             /* errors reported (0: success) */
    int warnings;           /* warnings reported */
    bool truncated;         /* stopped at max_errors */
    char *diagnostics;      /* rendered diagnostics; never NULL */
    size_t diagnostics_len;
    /* The rest is NULL unless errors == 0. */
    char *module;           /* the module's name */
    char *header_name;      /* "bank.actor.h" */
    char *source_name;      /* "bank.actor.c" */
    /* NULL when acc_options.write took them. */
    char *header;           /* contents of header_name */
    size_t header_len;
    char *source;           /* contents of source_name */
    size_t source_len;
    /* With acc_options.graph, instead of the four above: "bank.actor.dot"
     * and its contents (NULL when `write` took them). */
    char *graph_name;
    char *graph;
    size_t graph_len;
    /* The files imported, directly or not, as opened (for depfiles); set
     * when errors == 0. */
    char **deps;
    size_t dep_count;
} acc_result;

void acc_options_init(acc_options *opt);

/* The warnings, each with a name for -W<name> (acc_warning_name). */
typedef enum acc_warning_id {
    ACC_W_UNUSED_IMPORT,        /* "unused-import": on by default */
    ACC_W_UNREFERENCED_ACTOR,   /* "unreferenced-actor": off by default */
    ACC_W_COUNT
} acc_warning_id;

/* The name of warning `id` ("unused-import"), NULL when there is none. */
const char *acc_warning_name(int id);
/* The id of the warning called `name` (len bytes), or -1. */
int acc_warning_lookup(const char *name, size_t len);
/* Whether warning `id` is shown when no option names it. */
bool acc_warning_default(int id);
/* What warning `id` is about, one line for --help. */
const char *acc_warning_help(int id);

/* Compiles `len` bytes of `text` (need not be NUL-terminated, unless
 * acc_options.in_place says it is). `filename` is
 * what diagnostics show ("<stdin>" for standard input); the banner of the
 * generated files names its base name only. `opt` may be NULL. Returns 0 on
 * success, 1 if the input has errors (out of memory counts as one). The
 * result must be released with acc_result_free() in every case. */
int acc_compile_buffer(const char *filename, const char *text, size_t len,
                       const acc_options *opt, acc_result *out);

/* Reads `path` and compiles it. A file that cannot be read is reported as
 * an error diagnostic ("path: error: cannot read: reason"). */
int acc_compile_file(const char *path, const acc_options *opt,
                     acc_result *out);

void acc_result_free(acc_result *res);

/* Reads a whole file ("-" is standard input) into a NUL-terminated malloc'd
 * buffer. Returns 0, or an errno value. */
int acc_read_file(const char *path, char **text, size_t *len);

/* The base name of a path ("dir/bank.actor" -> "bank.actor"). */
const char *acc_basename(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* ACTORC_COMPILER_H */
