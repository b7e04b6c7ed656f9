/* The handlers, in a file of their own: rebuilding main.o alone after
 * money.actor changes would leave this one reading the old layout. */
#include "bank.actor.h"

#include <inttypes.h>
#include <stdio.h>

int bank_Account_on_deposit(bank_Account *self, ac_ctx *cx, const bank_Account_deposit *m)
{
    self->balance += m->amount.cents;
    money_Money balance = m->amount;
    balance.cents = self->balance;
    return bank_Teller_send_receipt(cx, m->teller, balance);
}

int bank_Teller_on_pay(bank_Teller *self, ac_ctx *cx, const bank_Teller_pay *m)
{
    (void)self;
    return bank_Account_send_deposit(cx, m->account, m->amount, bank_Teller_ref_self(cx));
}

int bank_Teller_on_receipt(bank_Teller *self, ac_ctx *cx, const bank_Teller_receipt *m)
{
    (void)self;
    (void)cx;
    printf("balance %" PRId64 "\n", m->balance.cents);
    return 0;
}
