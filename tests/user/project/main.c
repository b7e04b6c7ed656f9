/* Pays 500 cents into an account through a teller; tests/user/run.sh
 * checks the output before and after adding a field to money.Money. */
#include "bank.actor.h"

#include <stdio.h>

int main(void)
{
    ac_runtime *rt;
    if (ac_runtime_create(&rt, NULL) != 0)
        return 1;
    ac_ctx *cx = ac_runtime_ctx(rt);
    bank_Account_ref account;
    bank_Teller_ref teller;
    money_Money amount = {0};
    amount.cents = 500;
    if (bank_Account_spawn(cx, &account) != 0 || bank_Teller_spawn(cx, &teller) != 0
        || bank_Teller_send_pay(cx, teller, account, amount) != 0)
        return 1;
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    printf("money is %zu bytes\n", sizeof(money_Money));
    return 0;
}
