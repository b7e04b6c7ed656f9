/*
 * test_sendmsg.c — sendmsg.actor through the runtime: m_A_send_x_msg takes
 * the message struct with designated initializers, so each value lands
 * in the field it names whatever the order written; fields named like C
 * and C++ keywords are there under their mangled names (class_, ...).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "sendmsg.actor.h"
#include "helpers.h"

static struct {
    sendmsg_Bank_transfer transfer;
    sendmsg_Bank_classify classify;
    int transfers, classifies;
} seen;

int sendmsg_Bank_on_transfer(sendmsg_Bank *self, ac_ctx *cx,
                             const sendmsg_Bank_transfer *m)
{
    (void)cx;
    self->balance += m->amount;
    self->fees += m->fee;
    seen.transfer = *m;
    seen.transfers++;
    return 0;
}

int sendmsg_Bank_on_classify(sendmsg_Bank *self, ac_ctx *cx,
                             const sendmsg_Bank_classify *m)
{
    (void)self, (void)cx;
    seen.classify = *m;
    seen.classifies++;
    return 0;
}

int sendmsg_Bank_on_audit(sendmsg_Bank *self, ac_ctx *cx,
                          const sendmsg_Bank_audit *m)
{
    (void)m;
    return sendmsg_Bank_reply_audit(cx, &m->reply_to, self->balance, 7);
}

/* A reply field named `int` is `int_`. */
_Static_assert(sizeof(((sendmsg_Bank_audit_reply *)0)->int_) == 4,
               "the reply field int is int_");

Test(sendmsg, fields_by_name_land_where_they_are_named)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sendmsg_Bank_ref bank, other;
    cr_assert_eq(sendmsg_Bank_spawn(cx, &bank), 0);
    cr_assert_eq(sendmsg_Bank_spawn(cx, &other), 0);

    /* Written in another order than declared: the names decide. */
    cr_assert_eq(sendmsg_Bank_send_transfer_msg(cx, bank,
        &(sendmsg_Bank_transfer){ .fee = 2, .from = other, .amount = 500,
                                  .code = { 1, 2, 3, 4 } }), 0);
    cr_assert_eq(sendmsg_Bank_send_classify_msg(cx, bank,
        &(sendmsg_Bank_classify){ .new_ = -3, .class_ = 9,
                                  .default_ = true }), 0);
    cr_expect_eq(sendmsg_Bank_send_transfer_msg(cx, bank, NULL), AC_EINVAL);
    cr_assert_eq(ac_runtime_run(rt), 0);

    cr_expect_eq(seen.transfers, 1);
    cr_expect_eq(seen.transfer.amount, 500);
    cr_expect_eq(seen.transfer.fee, 2);
    cr_expect(ac_addr_eq(&seen.transfer.from.addr, &other.addr));
    cr_expect_eq(memcmp(seen.transfer.code, (uint8_t[]){ 1, 2, 3, 4 }, 4), 0);
    cr_expect_eq(seen.classifies, 1);
    cr_expect_eq(seen.classify.class_, 9);
    cr_expect(seen.classify.default_);
    cr_expect_eq(seen.classify.new_, -3);

    ac_runtime_destroy(rt);
}
