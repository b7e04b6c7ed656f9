/*
 * clusternode.h — what clusternode.c (the process, its command loop and the
 * stations) shares with the files of the other scenarios, whose commands
 * are rows of its `commands` table.
 */
#ifndef TESTS_CLUSTER_NODE_CLUSTERNODE_H
#define TESTS_CLUSTER_NODE_CLUSTERNODE_H

#include <actorc.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long a command waits for an answer from an actor of this node or
 * another: far past any healthy answer, so that only a fault runs out. */
#define ASK_MS 10000

/* A command gets its words after its name and writes the reply (without
 * "ok " or "err "); it returns false for an error. */
typedef bool (*command_fn)(char **argv, int argc, char *reply, size_t cap);

/* The context of the node's main thread, which runs the commands. */
ac_ctx *main_ctx(void);
/* CLOCK_MONOTONIC in µs: the clock of every at= of a reply. */
uint64_t now_us(void);
/* An address as ac_addr_format writes it: 64 lower-case hex digits. */
bool parse_addr(const char *hex, ac_addr *out);

/* services.c: asks, names, groups, monitors and links across nodes. */
bool cmd_oracle(char **argv, int argc, char *reply, size_t cap);
bool cmd_watcher(char **argv, int argc, char *reply, size_t cap);
bool cmd_ask(char **argv, int argc, char *reply, size_t cap);
bool cmd_askwait(char **argv, int argc, char *reply, size_t cap);
bool cmd_whereis(char **argv, int argc, char *reply, size_t cap);
bool cmd_members(char **argv, int argc, char *reply, size_t cap);
bool cmd_publish(char **argv, int argc, char *reply, size_t cap);
bool cmd_watch(char **argv, int argc, char *reply, size_t cap);
bool cmd_bind(char **argv, int argc, char *reply, size_t cap);
bool cmd_hold(char **argv, int argc, char *reply, size_t cap);
bool cmd_farewell(char **argv, int argc, char *reply, size_t cap);
bool cmd_seen(char **argv, int argc, char *reply, size_t cap);

#endif
