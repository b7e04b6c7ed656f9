/*
 * chat — rooms as process groups, users found by name, and monitors that
 * announce departures.
 *
 * main registers three users by name, puts them in the "lobby" room, has
 * them talk, then stops one: the room, which monitors its members, hears
 * the `down` and tells the others. At the end main asks every user what it
 * heard (a blocking ask) and checks each answer.
 *
 *   usage: chat        (AC_WORKERS=n picks the number of worker threads)
 */
#include "chat.actor.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------- */

/* Copies a string view into a fixed, NUL-terminated field. */
static void set_name(uint8_t dst[24], ac_string s)
{
    size_t n = s.len < 23 ? s.len : 23;
    memcpy(dst, s.data, n);
    dst[n] = '\0';
}

static const char *name_of(const uint8_t name[24])
{
    return (const char *)name;
}

/* Group names: "room:<room name>". */
static void group_of(const chat_Room *room, char *buf, size_t size)
{
    snprintf(buf, size, "room:%s", name_of(room->name));
}

/* Says `text` from `from` to every member of the room: one publish to the
 * room's group, which copies the message for each member. */
static int broadcast(chat_Room *self, ac_ctx *cx, const char *from, const char *text)
{
    char group[40];
    group_of(self, group, sizeof group);
    int rc = chat_User_publish_line(cx, group, ac_string_of(name_of(self->name)),
                                    ac_string_of(from), ac_string_of(text));
    return rc < 0 ? rc : 0;  /* otherwise: how many members it reached */
}

/* ---- User ----------------------------------------------------------------- */

int chat_User_hook_start(chat_User *self, ac_ctx *cx, const chat_User_start_args *args)
{
    set_name(self->name, args->name);
    /* Users are found by name: the room looks them up when they join. */
    return ac_register(cx, name_of(self->name), ac_self(cx));
}

int chat_User_on_enter(chat_User *self, ac_ctx *cx, const chat_User_enter *m)
{
    return chat_Room_send_join(cx, m->room, ac_string_of(name_of(self->name)));
}

int chat_User_on_line(chat_User *self, ac_ctx *cx AC_UNUSED, const chat_User_line *m)
{
    if (m->from.len == 0) {
        self->notices++;
        printf("  [%s] %s sees: %s\n", m->room.data, name_of(self->name), m->text.data);
    } else {
        self->lines++;
        printf("  [%s] %s hears %s: %s\n", m->room.data, name_of(self->name), m->from.data,
               m->text.data);
    }
    return 0;
}

int chat_User_on_report(chat_User *self, ac_ctx *cx, const chat_User_report *m)
{
    return chat_User_reply_report(cx, &m->reply_to, self->lines, self->notices);
}

/* ---- Room ----------------------------------------------------------------- */

int chat_Room_hook_start(chat_Room *self, ac_ctx *cx AC_UNUSED,
                         const chat_Room_start_args *args)
{
    set_name(self->name, args->name);
    return 0;
}

int chat_Room_on_join(chat_Room *self, ac_ctx *cx, const chat_Room_join *m)
{
    chat_User_ref user;
    int rc = chat_User_whereis(cx, m->user.data, &user);
    if (rc != 0)
        return 0;  /* nobody by that name (any more): nothing to do */
    if (self->count == 16)
        return 0;  /* full */
    char group[40], text[64];
    group_of(self, group, sizeof group);
    if ((rc = ac_group_join(cx, group, &user.addr)) != 0 ||
        (rc = ac_monitor(cx, ac_self(cx), &user.addr, NULL)) != 0)
        return rc;
    chat_Member *slot = &self->members[self->count++];
    slot->who = user;
    set_name(slot->name, m->user);
    snprintf(text, sizeof text, "%s joined", m->user.data);
    return broadcast(self, cx, "", text);
}

int chat_Room_on_say(chat_Room *self, ac_ctx *cx, const chat_Room_say *m)
{
    return broadcast(self, cx, m->user.data, m->text.data);
}

int chat_Room_hook_down(chat_Room *self, ac_ctx *cx, const ac_down *m)
{
    /* The group dropped the member already; the room still knows its name. */
    for (uint32_t i = 0; i < self->count; i++) {
        if (!ac_addr_eq(&self->members[i].who.addr, &m->who))
            continue;
        char text[64];
        snprintf(text, sizeof text, "%s left", name_of(self->members[i].name));
        self->members[i] = self->members[--self->count];
        return broadcast(self, cx, "", text);
    }
    return 0;
}

/* ---- main ----------------------------------------------------------------- */

static int fail(const char *what, int rc)
{
    fprintf(stderr, "chat: %s: %s\n", what, ac_strerror(rc));
    return 1;
}

int main(void)
{
    ac_runtime *rt;
    int rc = ac_runtime_create(&rt, NULL);
    if (rc != 0)
        return fail("cannot start the runtime (check AC_WORKERS)", rc);
    ac_ctx *cx = ac_runtime_ctx(rt);

    const char *names[] = {"alice", "bob", "carol"};
    chat_User_ref users[3];
    chat_Room_ref lobby;
    if ((rc = chat_Room_spawn(cx, &lobby, ac_string_of("lobby"))) != 0)
        return fail("spawn", rc);
    for (int i = 0; i < 3; i++)
        if ((rc = chat_User_spawn(cx, &users[i], ac_string_of(names[i]))) != 0)
            return fail("spawn a user", rc);

    printf("chat: three users join the lobby\n");
    for (int i = 0; i < 3; i++) {
        chat_User_send_enter(cx, users[i], lobby);
        ac_runtime_run(rt);  /* one at a time, so the transcript reads in order */
    }
    /* Two strings: sent by name, so that who and what cannot be swapped. */
    chat_Room_send_say_msg(cx, lobby, &(chat_Room_say){.user = ac_string_of("alice"),
                                                       .text = ac_string_of("hello, all")});
    ac_runtime_run(rt);
    chat_Room_send_say_msg(cx, lobby, &(chat_Room_say){.user = ac_string_of("bob"),
                                                       .text = ac_string_of("hi alice")});
    ac_runtime_run(rt);

    printf("chat: carol leaves\n");
    ac_stop(cx, &users[2].addr);
    ac_runtime_run(rt);
    ac_addr gone;
    if (ac_whereis(cx, "carol", &gone) != AC_ENOTFOUND)
        return fail("carol's name outlived her", AC_ESTATE);

    /* alice: 2 lines (hers and bob's), 4 notices (three joins, carol's
     * departure); bob: 2 lines, 3 notices (his join, carol's, the departure). */
    const uint32_t want_lines[2] = {2, 2}, want_notices[2] = {4, 3};
    int wrong = 0;
    for (int i = 0; i < 2; i++) {
        chat_User_report_reply *r;
        if ((rc = chat_User_ask_report_wait(cx, users[i], 10000, &r)) != 0)
            return fail("ask a user what it heard", rc);
        printf("  %s heard %" PRIu32 " lines and %" PRIu32 " notices\n", names[i], r->lines,
               r->notices);
        if (r->lines != want_lines[i] || r->notices != want_notices[i]) {
            fprintf(stderr, "chat: %s: expected %u lines, %u notices; got %u, %u\n", names[i],
                    want_lines[i], want_notices[i], r->lines, r->notices);
            wrong = 1;
        }
        ac_reply_free(cx, r);
    }
    ac_runtime_destroy(rt);
    if (wrong)
        return 1;
    printf("chat: ok\n");
    return 0;
}
