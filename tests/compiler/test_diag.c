/*
 * test_diag.c — the diagnostics, exactly as a user sees them.
 *
 * Each tests/compiler/diag/NAME.actor is compiled by the real binary
 * (ACTORC_BIN), run in that folder so that messages name the file alone;
 * its standard error must equal NAME.expected and its exit status be 1.
 * ACTORC_UPDATE_GOLDEN=1 rewrites the .expected files instead (review the
 * difference with git).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static const char *const cases[] = {
    "syntax_recovery", "syntax_eof", "no_module", "empty", "unknown_actor",
    "unknown_actor_far", "duplicate_message", "duplicate_field",
    "duplicate_state_field", "duplicate_actor", "duplicate_state_block",
    "reserved_identifier", "c_keyword", "std_name", "collision",
    "collision_actors", "field_shadows_name", "field_is_parameter",
    "module_ac", "unterminated_comment", "bad_character", "invalid_utf8",
    "too_many_errors",
    "unknown_type",
    "duplicate_type",
    "type_names",
    "cross_module_collision",
    "self_containing",
    "array_size",
    "enum_range",
    "enum_repeat",
    "reply", "typed_ask_params",
    "import_errors",
    "import_cycle",
    "empty_types",
    "hooks",
    "hook_fields",
    "too_large",
    "same_module",
    "unterminated_string", "warn_unused_import", "warn_unreachable",
    "warn_from_main", "warn_werror", "hook_unknown", "handles", "handle_star",
    "state_views", "unclosed", "foreign_names", "misspelt_keyword",
    "misspelt_member",
    "mailbox", "priority", "down_exit_hooks", "down_collision", "reply_collision",
    "reply_hook", "service_collision", "service_params",
    "behaviour", "behaviour_syntax",
};

/* The options a case is compiled with: its first line, when that is
 * "// flags: -Wall ..." (malloc'd; "" without). */
static char *case_flags(const char *dir, const char *name)
{
    static const char key[] = "// flags: ";
    char *path = str_printf("%s/%s.actor", dir, name);
    size_t len;
    char *text = read_file(path, &len);
    free(path);
    char *flags = str_printf("%s", "");
    if (text != NULL && strncmp(text, key, sizeof(key) - 1) == 0) {
        free(flags);
        flags = str_printf("%.*s", (int)strcspn(text + sizeof(key) - 1, "\n"),
                           text + sizeof(key) - 1);
    }
    free(text);
    return flags;
}

static void check_diag_status(const char *name, int status)
{
    require_repo_root();
    char *bin = actorc_path();
    char *dir = str_printf("%s/diag", TEST_SRC_DIR);
    char *out = make_tmpdir();
    char *flags = case_flags(dir, name);
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' %s -o '%s' %s.actor", bin, flags,
                      out, name));
    free(flags);

    char *expected_path = str_printf("%s/%s.expected", dir, name);
    if (update_golden()) {
        cr_assert(write_file(expected_path, r.err, r.err_len));
    } else {
        size_t len;
        char *want = read_file(expected_path, &len);
        cr_assert_not_null(want, "missing %s", expected_path);
        cr_expect_str_eq(r.err, want, "diag/%s: standard error differs:\n"
                         "--- want\n%s--- got\n%s", name, want, r.err);
        free(want);
    }
    cr_expect_eq(r.status, status, "diag/%s: exit status %d", name, r.status);
    cr_expect_str_eq(r.out, "");

    /* An input with errors produces no output; warnings do not stop it. */
    char *h = str_printf("%s/%s.actor.h", out, name);
    if (status != 0)
        cr_expect(!file_exists(h), "%s was written despite errors", h);
    else
        cr_expect(file_exists(h), "%s was not written", h);

    cmd_free(&r);
    remove_tree(out);
    free(h);
    free(expected_path);
    free(out);
    free(dir);
    free(bin);
}

static void check_diag(const char *name)
{
    check_diag_status(name, 1);
}

#define DIAG(name) \
    Test(diag, name) { check_diag(#name); }
/* Warnings only: the compilation succeeds. */
#define WARN(name) \
    Test(diag, name) { check_diag_status(#name, 0); }

DIAG(syntax_recovery)
DIAG(syntax_eof)
DIAG(no_module)
DIAG(empty)
DIAG(unknown_actor)
DIAG(unknown_actor_far)
DIAG(duplicate_message)
DIAG(duplicate_field)
DIAG(duplicate_state_field)
DIAG(duplicate_actor)
DIAG(duplicate_state_block)
DIAG(reserved_identifier)
DIAG(c_keyword)
DIAG(std_name)
DIAG(collision)
DIAG(collision_actors)
DIAG(field_shadows_name)
DIAG(field_is_parameter)
DIAG(module_ac)
DIAG(unterminated_comment)
DIAG(bad_character)
DIAG(invalid_utf8)
DIAG(too_many_errors)
DIAG(unknown_type)
DIAG(duplicate_type)
DIAG(type_names)
DIAG(cross_module_collision)
DIAG(self_containing)
DIAG(array_size)
DIAG(enum_range)
DIAG(enum_repeat)
DIAG(reply)
DIAG(typed_ask_params)
DIAG(import_errors)
DIAG(import_cycle)
DIAG(empty_types)
DIAG(hooks)
DIAG(hook_fields)
DIAG(too_large)
DIAG(same_module)
DIAG(unterminated_string)
DIAG(mailbox)
DIAG(priority)
DIAG(down_exit_hooks)
DIAG(down_collision)
DIAG(reply_collision)
DIAG(reply_hook)
DIAG(service_collision)
DIAG(service_params)
WARN(warn_unused_import)
WARN(warn_unreachable)
WARN(warn_from_main)
DIAG(warn_werror)
DIAG(hook_unknown)
DIAG(handles)
DIAG(handle_star)
DIAG(state_views)
DIAG(unclosed)
DIAG(foreign_names)
DIAG(misspelt_keyword)
DIAG(misspelt_member)
DIAG(behaviour)
DIAG(behaviour_syntax)

Test(diag, every_input_has_a_test)
{
    require_repo_root();
    char *dir = str_printf("%s/diag", TEST_SRC_DIR);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 6 || strcmp(e->d_name + n - 6, ".actor") != 0)
            continue;
        bool listed = false;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
            listed |= strlen(cases[i]) == n - 6 &&
                      strncmp(cases[i], e->d_name, n - 6) == 0;
        cr_expect(listed, "diag/%s has no DIAG() test", e->d_name);
    }
    closedir(d);
    free(dir);
}
