#!/usr/bin/env bash
# tests/bench/count.sh — bench/count.sh's arithmetic, on stub programs and
# a stub valgrind (on PATH) whose callgrind totals are known: a fixed cost
# plus a cost per unit of work, which the differences must recover
# exactly; and a benchmark that fails must stop the script.
#
#   tests/bench/count.sh            (run by make test)
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/good" "$work/bad"
# valgrind --tool=callgrind --callgrind-out-file=F PROGRAM ARGS: runs the
# program, then writes its "totals" as callgrind does.
cat >"$work/bin/valgrind" <<'STUB'
#!/bin/sh
out=${2#--callgrind-out-file=}
shift 2
"$@" || exit 1
case "$(basename "$1")" in
ring) n=$((1000000 + 375 * $3)) ;;
pingpong) n=$((2000000 + 701 * $2)) ;;
skynet) n=23456789 ;;
esac
printf 'events: Ir\nsummary: %s\ntotals: %s\n' "$n" "$n" >"$out"
STUB
chmod +x "$work/bin/valgrind"
for p in ring pingpong skynet; do
    printf '#!/bin/sh\nexit 0\n' >"$work/good/$p"
    printf '#!/bin/sh\nexit 0\n' >"$work/bad/$p"
done
printf '#!/bin/sh\necho "ring: wrong sum" >&2\nexit 1\n' >"$work/bad/ring"
chmod +x "$work"/good/* "$work"/bad/*
fail=0
out=$(PATH="$work/bin:$PATH" "$root/bench/count.sh" "$work/good" 2>&1)
[ "$out" = "$work/good ring_hop=375.0 pingpong_round_trip=701.0 skynet4=23.46M" ] ||
    { echo "count: wrong line: $out"; fail=1; }
if out=$(PATH="$work/bin:$PATH" "$root/bench/count.sh" "$work/bad" 2>&1); then
    echo "count: a failing benchmark went unnoticed: $out"; fail=1
elif ! grep -q "ring: wrong sum" <<<"$out"; then
    echo "count: the failing benchmark's output is not shown: $out"; fail=1
fi
[ $fail -eq 0 ] && echo "count: 2 checks passed"
exit $fail
