/*
 * cnames.c — the rules a name must follow to appear in generated C: not a
 * keyword of C11, C23 or C++ (the header is also compiled as C++), not a
 * name the included standard headers or the runtime own, and the edit
 * distance used for "did you mean" suggestions.
 */
#include <string.h>

#include "acc.h"

static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while",
    /* C23, and the <stdbool.h> macros of C11 */
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr",
    "static_assert", "thread_local", "true", "typeof", "typeof_unqual",
    /* GNU */
    "asm",
};

static const char *const cxx_keywords[] = {
    "and", "and_eq", "bitand", "bitor", "catch", "char8_t", "char16_t",
    "char32_t", "class", "co_await", "co_return", "co_yield", "compl",
    "concept", "const_cast", "consteval", "constinit", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace",
    "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq", "private",
    "protected", "public", "reinterpret_cast", "requires", "static_cast",
    "template", "this", "throw", "try", "typeid", "typename", "using",
    "virtual", "wchar_t", "xor", "xor_eq",
};

/* Names of <stddef.h>, <stdint.h>, <stdbool.h> (which actorc.h includes)
 * that the patterns below do not cover, and the <string.h> functions the
 * generated code calls (a parameter of that name would hide them). */
static const char *const std_names[] = {
    "NULL", "offsetof", "size_t", "ptrdiff_t", "max_align_t",
    "memcpy", "memset",
};

static bool in_list(const char *const *list, size_t n, const char *s,
                    size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
            return true;
    return false;
}

#define IN(list, s, len) in_list(list, sizeof(list) / sizeof(list[0]), s, len)

static bool starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

static bool ends(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

const char *acc_c_keyword(const char *name, size_t len)
{
    if (IN(c_keywords, name, len))
        return "a C keyword";
    if (IN(cxx_keywords, name, len))
        return "a C++ keyword";
    return NULL;
}

/* C11 7.31.10: <stdint.h> reserves typedef names int*_t and uint*_t, and
 * macro names INT* and UINT* ending in _MAX, _MIN, _WIDTH or _C. */
static bool stdint_reserved(const char *s, size_t len)
{
    if ((starts(s, len, "int") || starts(s, len, "uint")) && ends(s, len, "_t"))
        return true;
    static const char *const prefixes[] = {
        "INT", "UINT", "SIZE_", "PTRDIFF_", "SIG_ATOMIC_", "WCHAR_", "WINT_",
    };
    static const char *const suffixes[] = { "_MAX", "_MIN", "_WIDTH", "_C" };
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        if (!starts(s, len, prefixes[i]))
            continue;
        for (size_t j = 0; j < sizeof(suffixes) / sizeof(suffixes[0]); j++)
            if (ends(s, len, suffixes[j]) &&
                len > strlen(prefixes[i]) + strlen(suffixes[j]) - 1)
                return true;
    }
    return false;
}

const char *acc_c_reserved(const char *name, size_t len)
{
    const char *kw = acc_c_keyword(name, len);
    if (kw != NULL)
        return kw;
    if (starts(name, len, "ac_") || starts(name, len, "AC_"))
        return "reserved for the actorc runtime (prefix 'ac_')";
    if (IN(std_names, name, len) || stdint_reserved(name, len))
        return "reserved by the C standard library";
    return NULL;
}

size_t acc_edit_distance(const char *a, size_t an, const char *b, size_t bn,
                         size_t cap)
{
    enum { MAX = 64 };
    size_t diff = an > bn ? an - bn : bn - an;
    if (diff > cap || an > MAX || bn > MAX)
        return cap + 1;
    size_t prev[MAX + 1], cur[MAX + 1];
    for (size_t j = 0; j <= bn; j++)
        prev[j] = j;
    for (size_t i = 1; i <= an; i++) {
        cur[0] = i;
        size_t best = cur[0];
        for (size_t j = 1; j <= bn; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            size_t v = sub < del ? sub : del;
            cur[j] = v < ins ? v : ins;
            if (cur[j] < best)
                best = cur[j];
        }
        if (best > cap)
            return cap + 1;
        memcpy(prev, cur, (bn + 1) * sizeof(prev[0]));
    }
    return prev[bn] > cap ? cap + 1 : prev[bn];
}

bool acc_parse_int(const char *s, size_t len, uint64_t *value, bool *overflow)
{
    uint64_t v = 0;
    unsigned base = 10;
    size_t i = 0;
    *overflow = false;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i >= len)
        return false;
    for (; i < len; i++) {
        unsigned d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return false;
        if (v > (UINT64_MAX - d) / base)
            *overflow = true;
        else
            v = v * base + d;
    }
    /* A decimal literal with a leading zero would read as octal in C. */
    if (base == 10 && len > 1 && s[0] == '0')
        return false;
    *value = v;
    return true;
}
