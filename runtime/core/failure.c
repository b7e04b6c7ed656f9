/*
 * failure.c — an actor's failure, reported: the hook a program sets (or
 * the default line on stderr, Erlang's crash report) and the report's
 * text. die() (actor.c) reports an unsupervised actor as it fails; a
 * supervisor reports its child once it knows what it did about it.
 */
#include "actor.h"
#include "runtime.h"
#include "service.h"

#include <stdio.h>
#include <string.h>

/* The name of the message (or system tag) a failure happened in: the type
 * table's name when the generator gave one, else NULL. */
static const char *tag_name_of(const ac_actor_type *type, uint32_t tag)
{
    switch (tag) {
    case AC_TAG_START: return "start";
    case AC_TAG_DOWN: return "down";
    case AC_TAG_EXIT: return "exit";
    case AC_TAG_REPLY: return "reply";
    case AC__TAG_STOP: return "stop";
    default: break;
    }
    if (type != NULL && type->message_names != NULL && tag < type->message_count)
        return type->message_names[tag];
    return NULL;
}

static const char *action_text(uint32_t action)
{
    switch (action) {
    case AC_FAILURE_RESTARTED: return "restarted";
    case AC_FAILURE_GAVE_UP: return "gave up (too many restarts)";
    case AC_FAILURE_NOT_RESTARTED: return "not restarted";
    case AC_FAILURE_START_FAILED: return "a failed restart";
    default: return "none";
    }
}

int ac_failure_format(const ac_failure *f, char *buf, size_t cap)
{
    if (f == NULL)
        return snprintf(buf, cap, "%s", "");
    char who[17];
    ac_addr_format(&f->who, who, 8);
    const char *type = f->type != NULL && f->type->name != NULL ? f->type->name : "?";
    char tag[16];
    const char *name = f->tag_name;
    if (name == NULL) {
        snprintf(tag, sizeof tag, "tag %u", (unsigned)f->tag);
        name = tag;
    }
    /* A program's own codes are positive: ac_strerror knows only AC_E*. */
    char why[96];
    if (f->code < 0)
        snprintf(why, sizeof why, "%s (%d)", ac_strerror(f->code), (int)f->code);
    else
        snprintf(why, sizeof why, "code %d", (int)f->code);
    return snprintf(buf, cap, "actorc: actor %s %s failed handling %s: %s; supervisor: %s",
                    type, who, name, why, action_text(f->action));
}

void ac_failure_print(ac_ctx *cx, const ac_failure *f, void *arg)
{
    (void)cx;
    (void)arg;
    char line[512];
    ac_failure_format(f, line, sizeof line);
    /* One fprintf: lines of failures on two workers do not interleave. */
    fprintf(stderr, "%s\n", line);
}

void ac_failure_quiet(ac_ctx *cx, const ac_failure *f, void *arg)
{
    (void)cx;
    (void)f;
    (void)arg;
}

void ac_runtime_set_failure_hook(ac_runtime *rt, ac_failure_fn fn, void *arg)
{
    if (rt == NULL)
        return;
    /* Plain stores, as the dead-letter hook's: set before the first spawn,
     * so workers read it after thread creation or a send ordered it. */
    rt->failure_arg = fn != NULL ? arg : NULL;
    rt->failure_fn = fn != NULL ? fn : ac_failure_print;
}

void ac__failure_report(ac_ctx *cx, const ac_addr *who, const ac_actor_type *type,
                        uint32_t tag, int code, unsigned action, const ac_addr *supervisor)
{
    ac_failure f;
    memset(&f, 0, sizeof f);
    f.who = *who;
    f.type = type;
    f.tag = tag;
    f.tag_name = tag_name_of(type, tag);
    f.code = code;
    f.action = action;
    if (supervisor != NULL)
        f.supervisor = *supervisor;
    cx->rt->failure_fn(cx, &f, cx->rt->failure_arg);
}
