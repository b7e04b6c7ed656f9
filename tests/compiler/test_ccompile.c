/*
 * test_ccompile.c — generated code compiles cleanly, with warnings as
 * errors, as C11 under gcc and clang and as C++17 under g++ and clang++.
 * Every golden input and the suite's sample are generated afresh into a
 * scratch folder and compiled there. A compiler that is not installed is
 * skipped, not failed.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"
#include "helpers.h"

static const char *const inputs[] = {
    "sample.actor", "golden/pingpong.actor", "golden/types.actor",
    "golden/edge.actor", "wirelib.actor", "wire.actor", "golden/units.actor",
    "golden/full.actor", "services.actor", "sendmsg.actor",
    "handles.actor", "hooknames.actor", "golden/behaviour.actor",
    "../runtime/startargs.actor",  /* a struct only start arguments hold */
};

/* Generates every input into `dir`; returns the names of the sources. */
static void generate_all(const char *dir, char **sources)
{
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        char *path = str_printf("%s/%s", TEST_SRC_DIR, inputs[i]);
        acc_result r;
        cr_assert_eq(acc_compile_file(path, NULL, &r), 0, "%s:\n%s", path,
                     r.diagnostics);
        char *h = str_printf("%s/%s", dir, r.header_name);
        char *c = str_printf("%s/%s", dir, r.source_name);
        cr_assert(write_file(h, r.header, r.header_len));
        cr_assert(write_file(c, r.source, r.source_len));
        sources[i] = c;
        acc_result_free(&r);
        free(h);
        free(path);
    }
}

static void compile_with(const char *program, const char *flags)
{
    require_repo_root();
    if (!have_program(program))
        cr_skip_test("%s is not installed", program);
    char *root = realpath(".", NULL);
    char *dir = make_tmpdir();
    char *sources[sizeof(inputs) / sizeof(inputs[0])];
    generate_all(dir, sources);
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        cmd_result r;
        cr_assert(cmd_run(&r, dir, NULL,
                          "%s %s -Wall -Wextra -Wpedantic -Werror -I'%s/runtime/include' "
                          "-I. -c '%s' -o out.o",
                          program, flags, root, sources[i]));
        cr_expect_eq(r.status, 0, "%s %s %s:\n%s", program, flags, inputs[i],
                     r.err);
        cr_expect_str_eq(r.err, "", "%s warns on %s", program, inputs[i]);
        cmd_free(&r);
        free(sources[i]);
    }
    remove_tree(dir);
    free(dir);
    free(root);
}

/* The C flags add what the project's own code is built with. */
#define STRICT_C "-std=c11 -Wshadow -Wstrict-prototypes -Wmissing-prototypes " \
                 "-Wconversion -Wsign-conversion"

Test(ccompile, gcc_c11) { compile_with("gcc", STRICT_C); }
Test(ccompile, clang_c11) { compile_with("clang", STRICT_C); }
Test(ccompile, gxx_cxx17) { compile_with("g++", "-std=c++17 -x c++"); }
Test(ccompile, clangxx_cxx17) { compile_with("clang++", "-std=c++17 -x c++"); }

/* The header alone, included first in a C++ file, stands on its own. */
Test(ccompile, header_alone_in_cxx)
{
    require_repo_root();
    if (!have_program("g++"))
        cr_skip_test("g++ is not installed");
    char *root = realpath(".", NULL);
    char *dir = make_tmpdir();
    char *sources[sizeof(inputs) / sizeof(inputs[0])];
    generate_all(dir, sources);
    char *tu = str_printf("%s/tu.cc", dir);
    const char *text =
        "#include \"sample.actor.h\"\n"
        "#include \"sample.actor.h\"\n"       /* the guard works */
        "static_assert(sizeof(sample_B_ref) == sizeof(ac_addr), \"ref\");\n"
        "int main() { return sample_A_TAG_poke == 5 ? 0 : 1; }\n";
    cr_assert(write_file(tu, text, strlen(text)));
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "g++ -std=c++17 -Wall -Wextra -Wpedantic "
                      "-Werror -I'%s/runtime/include' -I. -fsyntax-only tu.cc", root));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
        free(sources[i]);
    remove_tree(dir);
    free(tu);
    free(dir);
    free(root);
}

/* The examples shipped with the project compile without a diagnostic. */
Test(ccompile, examples_compile)
{
    require_repo_root();
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "ls examples/*/*.actor 2>/dev/null"));
    char *save = NULL;
    int count = 0;
    for (char *p = strtok_r(r.out, "\n", &save); p != NULL;
         p = strtok_r(NULL, "\n", &save)) {
        acc_result res;
        cr_expect_eq(acc_compile_file(p, NULL, &res), 0, "%s:\n%s", p,
                     res.diagnostics);
        acc_result_free(&res);
        count++;
    }
    cmd_free(&r);
    if (count == 0)
        cr_skip_test("no examples/*/*.actor");
}

/* A send by name as a user writes it: a compound literal with designated
 * initializers in C11, a const struct with C++20's (which must follow the
 * declaration order), both under -Wpedantic. */
static void compile_send_by_name(const char *program, const char *flags,
                                 const char *body)
{
    require_repo_root();
    if (!have_program(program))
        cr_skip_test("%s is not installed", program);
    char *root = realpath(".", NULL);
    char *dir = make_tmpdir();
    char *path = str_printf("%s/%s", TEST_SRC_DIR, "sendmsg.actor");
    acc_result r;
    cr_assert_eq(acc_compile_file(path, NULL, &r), 0, "%s", r.diagnostics);
    char *h = str_printf("%s/%s", dir, r.header_name);
    cr_assert(write_file(h, r.header, r.header_len));
    char *user = str_printf("%s/user.c", dir);
    char *text = str_printf("#include \"sendmsg.actor.h\"\n"
                            "int send_one(ac_ctx *cx, sendmsg_Bank_ref to, "
                            "sendmsg_Bank_ref me);\n"
                            "int send_one(ac_ctx *cx, sendmsg_Bank_ref to, "
                            "sendmsg_Bank_ref me)\n{\n%s}\n", body);
    cr_assert(write_file(user, text, strlen(text)));
    cmd_result c;
    cr_assert(cmd_run(&c, dir, NULL, "%s %s -Wall -Wextra -Wpedantic -Werror "
                      "-I'%s/runtime/include' -I. -c user.c -o user.o",
                      program, flags, root));
    cr_expect_eq(c.status, 0, "%s %s:\n%s", program, flags, c.err);
    cr_expect_str_eq(c.err, "");
    cmd_free(&c);
    acc_result_free(&r);
    remove_tree(dir);
    free(text);
    free(user);
    free(h);
    free(path);
    free(dir);
    free(root);
}

#define BY_NAME_C "    return sendmsg_Bank_send_transfer_msg(cx, to,\n" \
    "        &(sendmsg_Bank_transfer){ .from = me, .amount = 5 });\n"
/* g++'s -Wextra wants every member named in C++ (clang++ and C do not). */
#define BY_NAME_CXX "    const sendmsg_Bank_transfer m{ .amount = 5, " \
    ".fee = 0, .from = me, .code = {} };\n" \
    "    return sendmsg_Bank_send_transfer_msg(cx, to, &m);\n"

Test(ccompile, send_by_name_gcc_c11)
{
    compile_send_by_name("gcc", STRICT_C, BY_NAME_C);
}
Test(ccompile, send_by_name_clang_c11)
{
    compile_send_by_name("clang", STRICT_C, BY_NAME_C);
}
Test(ccompile, send_by_name_gxx_cxx20)
{
    compile_send_by_name("g++", "-std=c++20 -x c++", BY_NAME_CXX);
}
Test(ccompile, send_by_name_clangxx_cxx20)
{
    compile_send_by_name("clang++", "-std=c++20 -x c++", BY_NAME_CXX);
}
