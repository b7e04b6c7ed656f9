#!/usr/bin/env bash
# selftest.sh RUNTIME OBJ CC — check.sh catches each kind of violation: it
# is run on a copy of the runtime with one planted at a time, and must fail
# naming it (a check that cannot fail checks nothing).
set -u
here=$(dirname "$0")
runtime=${1:?usage: selftest.sh RUNTIME OBJ CC}
obj=${2:?usage: selftest.sh RUNTIME OBJ CC}
cc=${3:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
caught=0
missed=0

# expect WHAT MESSAGE: check.sh on the copy fails, printing MESSAGE.
expect() {
    local what=$1 message=$2 out
    if out=$("$here/check.sh" "$tmp/runtime" "$tmp/obj" 2>&1); then
        printf 'structure selftest: %s went unnoticed\n' "$what"
        missed=$((missed + 1))
    elif ! grep -qF -- "$message" <<<"$out"; then
        printf 'structure selftest: %s: expected "%s", got:\n%s\n' "$what" "$message" "$out"
        missed=$((missed + 1))
    else
        caught=$((caught + 1))
    fi
}

fresh() {
    rm -rf "$tmp/runtime" "$tmp/obj"
    cp -r "$runtime" "$tmp/runtime"
    mkdir -p "$tmp/obj"
    cp -r "$obj/core" "$obj/services" "$obj/node" "$tmp/obj/"
}

# Puts an include line at the top of a file of the copy.
plant_include() { sed -i "1i #include \"$2\"" "$tmp/runtime/$1"; }

# Puts an object calling function $2 into the copy's objects of layer $1.
plant_call() {
    printf 'int %s(void);\nint planted(void);\nint planted(void) { return %s(); }\n' "$2" "$2" \
        > "$tmp/planted.c"
    "$cc" -c "$tmp/planted.c" -o "$tmp/obj/$1/planted.o"
}

fresh
if ! out=$("$here/check.sh" "$tmp/runtime" "$tmp/obj" 2>&1); then
    printf 'structure selftest: the unchanged copy fails:\n%s\n' "$out"
    failed=1
fi

fresh; plant_include core/actor.c ../services/timers.h
expect "a core file including a service's header" "core/actor.c includes services/timers.h"

fresh; plant_include core/sched.h ../services/services.h
expect "a core header including the service list" "core/sched.h includes services/services.h"

fresh; plant_include services/names.c ../core/runtime.h
expect "a service including a core internal" "services/names.c includes core/runtime.h"

fresh; plant_include lib/table.c ../core/actor.h
expect "lib including the core" "lib/table.c includes core/actor.h"

fresh; plant_call core ac_timer_cancel
expect "a core object calling a service" "planted.o uses ac_timer_cancel"

fresh; plant_include services/monitors.c ../node/frame.h
expect "a service including the node's wire" "services/monitors.c includes node/frame.h"

fresh; plant_include core/actor.c ../node/node.h
expect "the core including the node" "core/actor.c includes node/node.h"

fresh; plant_include node/node.c ../core/runtime.h
expect "the node including a core internal" "node/node.c includes core/runtime.h"

fresh; plant_include lib/quota.c ../node/cluster.h
expect "lib including the node" "lib/quota.c includes node/cluster.h"

fresh; plant_call services ac__frame_open
expect "a service object calling into the node" "planted.o uses ac__frame_open, which runtime/node defines"

fresh; plant_call core ac__node_receive
expect "a core object calling the node" "planted.o uses ac__node_receive"

fresh; printf '#define PLANTED(a) ((a)->oflags |= 1u)\n' >> "$tmp/runtime/services/ask.c"
expect "a service writing the owner's byte" "services/ask.c:$(($(wc -l < "$runtime/services/ask.c") + 1)) touches the owner's byte"

echo "structure selftest: $caught planted violations caught, $missed missed"
[ $missed -eq 0 ] && exit $failed
exit 1
