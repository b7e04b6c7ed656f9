/* values.c — helpers for the variable-length values of messages. */
#include "actorc.h"

#include <string.h>

ac_string ac_string_of(const char *s)
{
    ac_string v = {"", 0};
    if (s != NULL) {
        size_t n = strlen(s);
        v.data = s;
        v.len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    }
    return v;
}
