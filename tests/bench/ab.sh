#!/usr/bin/env bash
# tests/bench/ab.sh — bench/ab.sh on two fake build directories: each
# "inject" stub prints a '#' line before its measurement, as the real one
# does, and only the measurement may count (ab.sh once took both lines as
# two rows). The medians and the ratio are known exactly.
#
#   tests/bench/ab.sh            (run by make test)
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/a" "$work/b"
# stub DIR MSGS_PER_SEC: prints a handler line, then the measurement.
stub() {
    printf '#!/bin/sh\necho "# inject_handler 2x3 0.050 999 1 outside/handler 1.00"\necho "inject 2x3 0.100 %s 1"\n' "$2" >"$1/inject"
    chmod +x "$1/inject"
}
stub "$work/a" 1000000
stub "$work/b" 3000000
out=$(AB_BENCHES="inject 2 3" "$root/bench/ab.sh" -r 3 "$work/a" "$work/b" 2>/dev/null)
fail=0
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "ab: want one row, got:"; echo "$out"; fail=1; }
case "$out" in
"inject 2x3"*"[0]    1.000 M/s x1.00 (paired x1.00)"*"[1]    3.000 M/s x3.00 (paired x3.00)"*) ;;
*) echo "ab: wrong row: $out"; fail=1 ;;
esac
[ $fail -eq 0 ] && echo "ab: 2 checks passed"
exit $fail
