#!/usr/bin/env bash
# selftest.sh BUILD CC CFLAGS LIBS — check.sh catches each kind of wrong
# block: it is run on a copy of a doc with one wrong snippet planted at a
# time (the mistakes the docs really had among them), and must fail naming
# it (a check that cannot fail checks nothing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: selftest.sh BUILD CC CFLAGS LIBS}" && pwd)
cc=${2:?usage: selftest.sh BUILD CC CFLAGS LIBS}
cflags=${3-}
libs=${4-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0

# expect WHAT MESSAGE FILE: check.sh on the copy FILE fails, printing MESSAGE.
expect() {
    local what=$1 message=$2 file=$3 out
    if out=$(cd "$tmp" && "$here/check.sh" "$build" "$cc" "$cflags" "$libs" "$file" 2>&1); then
        printf 'docs selftest: %s went unnoticed\n' "$what"
        failed=$((failed + 1))
    elif ! grep -qF -- "$message" <<<"$out"; then
        printf 'docs selftest: %s: expected "%s", got:\n%s\n' "$what" "$message" "$out"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}

# fresh FILE: a copy of the repository's FILE, under the same name.
fresh() {
    mkdir -p "$tmp/$(dirname "$1")"
    cp "$root/$1" "$tmp/$1"
}

# plant FILE SED: the copy of FILE, edited by the sed script SED (which
# must change it: a plant that misses checks nothing either).
plant() {
    fresh "$1"
    sed -i -e "$2" "$tmp/$1"
    if cmp -s "$root/$1" "$tmp/$1"; then
        printf 'docs selftest: the plant "%s" does not change %s\n' "$2" "$1"
        failed=$((failed + 1))
    fi
}

# write NAME: a small doc of its own, from standard input.
write() { cat > "$tmp/$1"; }

fresh README.md
if ! out=$(cd "$tmp" && "$here/check.sh" "$build" "$cc" "$cflags" "$libs" README.md 2>&1); then
    printf 'docs selftest: the unchanged copy of README.md fails:\n%s\n' "$out"
    failed=$((failed + 1))
fi

line=$(grep -n '^```c unit' "$root/README.md" | head -1 | cut -d: -f1)
plant README.md 's/pingpong_Pinger_send_pong(/pingpong_Pinger_send_pongs(/'
expect "a C unit calling a function the IDL does not generate" \
    "README.md:$((line + 1)): c unit: does not compile" README.md

plant README.md 's/^module pingpong;$/module pingpong/'
expect "an IDL block with a syntax error" "actor: actorc rejects the block" README.md

plant README.md 's/^```text$/```/'
expect "a block without an info string" "a block without an info string" README.md

plant README.md 's/^```text$/```python/'
expect "a block in a language nobody checks" "unknown info string 'python'" README.md

plant README.md 's/^```c unit$/```c unit nocheck/'
expect "an attribute the checker does not know" "c: unknown attribute 'nocheck'" README.md

plant README.md 's/^```sh norun$/```sh/'
expect "README's make demo run as a shell block" "sh: exits with" README.md

plant docs/RUNTIME.md 's/case bank_Account_TAG_deposit:/case bank_Account_deposit:/'
expect "a C fragment using a message struct as its tag" "c fragment: does not compile" docs/RUNTIME.md

plant docs/IDL.md 's/^bad\.actor:3:18:/bad.actor:3:17:/'
expect "a diagnostic that is not what actorc prints" "text stderr: not what the block before it printed" docs/IDL.md

plant docs/IDL.md 's/^    on ping(u64 n;$/    on ping(u64 n);/'
expect "an IDL block meant to fail that compiles" "actor fails: actorc accepted the block" docs/IDL.md

plant docs/IDL.md 's/^  -w           suppress warnings$/  -w           suppress all warnings/'
expect "a usage text that is not actorc's" "text stdout: not what the block before it printed" docs/IDL.md

plant docs/IDL.md 's/^on withdraw(Money amount) -> (bool ok, Money balance);$/on withdraw(Money amount) -> (bool ok, Mony balance);/'
expect "an IDL fragment naming an unknown type" "actor: actorc rejects the block" docs/IDL.md

write warns.md <<'EOF'
```actor
module warns;
import "money.actor";
actor Lonely { on hello(ref<Lonely> me); }
```
EOF
expect "a complete IDL block that actorc warns about" "actor: actorc warns about the block" warns.md

write program.md <<'EOF'
```c program
int main(void) { return 3; }
```
EOF
expect "a C program that fails" "c program: exits with 3" program.md

write output.md <<'EOF'
```sh
echo two ticks
```

```text stdout
three ticks
```
EOF
expect "an output that is not what the block printed" "text stdout: not what the block before it printed" output.md

write unrun.md <<'EOF'
```sh norun
echo hello
```

```text stdout
hello
```
EOF
expect "an output after a block that is not run" "text stdout: the block before it was not run" unrun.md

write open.md <<'EOF'
```text
never closed
EOF
expect "a block never closed" "a block is never closed" open.md

write indented.md <<'EOF'
- a list item:

  ```c fragment
  return 1;
  ```
EOF
expect "an indented fence" "an indented fence is not checked" indented.md

# What the docs do not use today must work too: a fragment and a program
# tied to the IDL block above them, and the program's output compared.
write tied.md <<'EOF2'
```actor
module hello;
actor Greeter {
    on greet(string who, ref<Greeter> back);
}
```

```c fragment
hello_Greeter_ref g;
hello_Greeter_spawn(cx, &g);
hello_Greeter_send_greet(cx, g, ac_string_of("you"), g);
```

```c program
#include "hello.actor.h"
#include <stdio.h>

int hello_Greeter_on_greet(hello_Greeter *self, ac_ctx *cx, const hello_Greeter_greet *m)
{
    (void)self;
    (void)cx;
    printf("hello, %s\n", m->who.data);
    return 0;
}

int main(void)
{
    ac_runtime *rt;
    if (ac_runtime_create(&rt, NULL) != 0)
        return 1;
    ac_ctx *cx = ac_runtime_ctx(rt);
    hello_Greeter_ref g;
    hello_Greeter_spawn(cx, &g);
    hello_Greeter_send_greet(cx, g, ac_string_of("world"), g);
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    return 0;
}
```

```text stdout
hello, world
```
EOF2
if ! out=$(cd "$tmp" && "$here/check.sh" "$build" "$cc" "$cflags" "$libs" tied.md 2>&1); then
    printf 'docs selftest: C blocks tied to an IDL block fail:\n%s\n' "$out"
    failed=$((failed + 1))
fi
sed -i -e 's/^hello, world$/hello, you/' "$tmp/tied.md"
expect "a tied program's output that is not what it prints" \
    "text stdout: not what the block before it printed" tied.md

# A block tests/user runs is left to it, whatever it would do here.
write user.md <<'EOF'
```sh user
false
```
EOF
if ! out=$(cd "$tmp" && "$here/check.sh" "$build" "$cc" "$cflags" "$libs" user.md 2>&1) ||
        ! grep -qF "1 left to tests/user" <<<"$out"; then
    printf 'docs selftest: a `sh user` block is not left to tests/user:\n%s\n' "$out"
    failed=$((failed + 1))
fi

# An example's diagram left behind by a change to its IDL (a message
# renamed), and a diagram that does not say what it draws.
fresh examples/bank/README.md
plant examples/bank/bank.actor 's/on crash(i32 code);/on fail(i32 code);/'
expect "a diagram out of date with the IDL" \
    "the diagram is out of date with examples/bank/bank.actor: run 'make update-graphs'" \
    examples/bank/README.md
fresh examples/bank/bank.actor
plant examples/bank/README.md 's/^```dot graph=bank.actor$/```dot/'
expect "a diagram without the file it draws" "dot: say graph=FILE.actor" \
    examples/bank/README.md

if [ $failed -eq 0 ]; then
    echo "docs selftest: $passed passed, 0 failed"
fi
exit $((failed > 0))
