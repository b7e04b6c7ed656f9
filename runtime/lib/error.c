/* error.c — descriptions of the AC_E* codes. */
#include "actorc.h"

const char *ac_strerror(int code)
{
    switch (code) {
    case AC_OK: return "success";
    case AC_ENOMEM: return "out of memory";
    case AC_EINVAL: return "invalid argument";
    case AC_ENOTFOUND: return "no live actor at that address";
    case AC_ESHUTDOWN: return "the runtime is shutting down";
    case AC_EFULL: return "the mailbox is full";
    case AC_ETIMEDOUT: return "timed out";
    case AC_EBADTAG: return "message tag not handled by the actor type";
    case AC_EFAILED: return "the actor failed";
    case AC_ESTATE: return "not valid in the current state";
    case AC_EEXIST: return "the name is already taken";
    case AC_ENOCONNECTION: return "the target's node is unreachable";
    }
    return "unknown error";
}
