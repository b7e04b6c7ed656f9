/* fragment.h — what a `c fragment` block of the docs may take as given
 * (tests/docs/README.md): check.sh compiles each fragment as the body of a
 * function after this header. The variables stand for what the text
 * around a fragment speaks of ("a handler's context", "the worker", "an
 * account"); they are declared, never defined, since fragments are
 * compiled but not linked. */
#ifndef DOCS_FRAGMENT_H
#define DOCS_FRAGMENT_H

#include <actorc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A context, its runtime and an envelope, as in a handler or in main. */
extern ac_ctx *cx;
extern ac_runtime *rt;
extern ac_envelope *e;

/* Actors the text names by their address. */
extern ac_addr worker, peer, a, alice, bob;

/* A fragment that follows a complete `actor` block of its file sees that
 * module's header instead (check.sh passes it with -include); the others
 * see the stand-in modules of tests/docs/standin/, whose names the docs'
 * fragments use (bank_Account, shop_Db, chat_User, m_A ...). */
#ifdef DOCS_STANDIN
#include "bank.actor.h"
#include "chat.actor.h"
#include "m.actor.h"
#include "shop.actor.h"

extern bank_Account_ref acct;
extern bank_Money amount;
extern bank_Account_start_args args, args2;
#endif

#endif
