#!/usr/bin/env bash
# tests/bench/scale.sh — bench/scale.sh: its medians and speed-ups on a
# fake bundle whose loader runs stubs with known times, then a real bundle
# of the pairs benchmark run with an empty environment, as it would run
# on a machine that has none of our libraries.
#
#   tests/bench/scale.sh BUILD   (run by make test; BUILD/bench/pairs built)
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:?usage: tests/bench/scale.sh BUILD}
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
fail=0

# The fake bundle: the "loader" drops --library-path and runs the stub,
# which takes 1.2, 1.0 or 0.5 s over 1 worker's 2 s in rounds 1, 2, 3 (a
# counter file): the median is the second round's, the mean is not.
fake=$work/fake
mkdir -p "$fake/bin" "$fake/lib"
printf '#!/bin/sh\nshift 2\nexec "$@"\n' >"$fake/lib/ld-linux-x86-64.so.2"
cat >"$fake/bin/spin" <<'EOF'
#!/bin/sh
n=$(cat "$COUNTER" 2>/dev/null || echo 0)
echo $((n + 1)) >"$COUNTER"
round=$((n / 2 + 1))
awk -v w="$AC_WORKERS" -v r="$round" 'BEGIN {
    s = w == 1 ? 2 : (r == 1 ? 1.2 : r == 2 ? 1.0 : 0.5)
    printf "spin 7x3 %.3f 1000 100\n", s }'
EOF
chmod +x "$fake/lib/ld-linux-x86-64.so.2" "$fake/bin/spin"
echo "spin 7 3" >"$fake/benches"
out=$(COUNTER=$work/count SCALE_ROUNDS=3 "$root/bench/scale.sh" run "$fake" 1 4 2>/dev/null)
want='| benchmark | workers | seconds | speed-up |
|---|---:|---:|---:|
| spin 7x3 | 1 | 2.000 | 1.00× |
| spin 7x3 | 4 | 1.000 | 2.00× |'
[ "$out" = "$want" ] || { echo "scale: want"; echo "$want"; echo "got"; echo "$out"; fail=1; }

# A real bundle, run by its own loader with nothing in the environment.
SCALE_BENCHES="pairs 10 100" BUILD=$build "$root/bench/scale.sh" bundle "$work/real" >/dev/null ||
    { echo "scale: bundle failed"; fail=1; }
out=$(env -i "$root/bench/scale.sh" run "$work/real" 1 2 2>"$work/err")
rows=$(printf '%s\n' "$out" | grep -c '^| pairs 10x100 |')
[ "$rows" -eq 2 ] || { echo "scale: want 2 pairs rows, got:"; echo "$out"; cat "$work/err"; fail=1; }
case "$out" in
*"| pairs 10x100 | 1 | "*" | 1.00× |"*) ;;
*) echo "scale: no 1-worker row at 1.00×:"; echo "$out"; fail=1 ;;
esac
[ $fail -eq 0 ] && echo "scale: 3 checks passed"
exit $fail
