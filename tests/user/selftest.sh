#!/usr/bin/env bash
# selftest.sh PREFIX WORK — run.sh catches what the issue found broken in
# the make rules: each fault is planted in a copy of the installed
# actorc.mk, and run.sh must fail on it with the expected message.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$1 work=$2
passed=0 failed=0

plant() {   # name, sed script for actorc.mk, message run.sh must print
    local copy=$work/$1
    rm -rf "$copy" && mkdir -p "$copy" && cp -a "$prefix"/. "$copy"/
    sed -i "s|$prefix|$copy|g" "$copy/lib/pkgconfig/actorc.pc"
    sed -i "$2" "$copy/share/actorc/actorc.mk"
    cmp -s "$copy/share/actorc/actorc.mk" "$prefix/share/actorc/actorc.mk" && { echo "selftest: $1: the plant changed nothing"; failed=$((failed + 1)); return; }
    local out
    out=$("$here/run.sh" "$copy" "$copy/work" make 2>&1)
    if [ $? -ne 0 ] && grep -q "$3" <<<"$out"; then
        passed=$((passed + 1))
    else
        echo "selftest: $1: run.sh did not catch it (wanted '$3'):"; echo "$out" | tail -3
        failed=$((failed + 1))
    fi
}

# User objects without depfiles: the old main.o survives an edit of money.actor.
plant no-depfiles 's|^ACTORC__DEPFLAGS = .*|ACTORC__DEPFLAGS =|' 'after a rebuild\|stale object'
# Objects not waiting for the generated headers: the first -j1 build fails.
plant no-header-order 's/^\(%\.o: %\.c\) | \$(ACTORC_HEADERS)$/\1/' 'make -j1 failed'
# The default goal not given back: the first target actorc.mk (or a
# depfile) defines is what make builds, not app.
plant default-goal 's/^\.DEFAULT_GOAL := .*//' 'program failed\|no-op\|after a rebuild'

echo "user selftest: $passed passed, $failed failed"
[ $failed = 0 ]
