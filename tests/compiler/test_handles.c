/*
 * test_handles.c — handles.actor through the runtime: a ptr<Tally> given to
 * spawn reaches the start hook as a `struct Tally *`, the state keeps it,
 * and a handler writes through it into the program's memory.
 */
#include <criterion/criterion.h>

#include "handles.actor.h"
#include "helpers.h"

struct Tally {
    uint64_t total;
    int adds;
};

int handles_Counter_hook_start(handles_Counter *self, ac_ctx *cx,
                               const handles_Counter_start_args *args)
{
    (void)cx;
    self->tally = args->tally;
    self->next = args->next;
    self->step = args->step;
    return 0;
}

int handles_Counter_on_add(handles_Counter *self, ac_ctx *cx,
                           const handles_Counter_add *m)
{
    (void)cx;
    self->tally->total += (uint64_t)self->step * m->times;
    self->tally->adds++;
    return 0;
}

Test(handles, a_ptr_in_state_points_at_the_programs_memory)
{
    /* The types are the C program's: no cast is needed. */
    struct Tally tally = { 0, 0 };
    struct Tally *typed = &tally;

    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    int marker = 0;
    handles_Counter_ref c;
    cr_assert_eq(handles_Counter_spawn(cx, &c, typed, &marker, 3), 0);
    cr_assert_eq(handles_Counter_send_add(cx, c, 2), 0);
    cr_assert_eq(handles_Counter_send_add(cx, c, 5), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(tally.adds, 2);
    cr_expect_eq(tally.total, 3 * 2 + 3 * 5);
    ac_runtime_destroy(rt);
}
