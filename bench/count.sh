#!/bin/sh
# count.sh — instructions per unit of work, counted by callgrind on one
# worker: the A/B of a change to the local send path that load cannot
# blur (bench/README.md, "The hot path", has the method and the figures).
#
#   bench/count.sh DIR...
#
# Each DIR is a build's bench directory (build/bench, or a `git archive`
# export's built with `make bench-build`). For each it prints one line:
#
#   DIR ring_hop=I pingpong_round_trip=I skynet4=M
#
# ring_hop: (ring 1000 600000 - ring 1000 200000) / 400000 hops;
# pingpong_round_trip: (pingpong 300000 - pingpong 100000) / 200000;
# skynet4: the whole of `skynet 4` (11,111 actors), in millions, which
# moves by about 0.1 M between runs (the addresses are random). The
# differences cancel what a run pays once (start, stop, loading). Every
# benchmark checks its own result; a run that fails stops the script.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "$0: valgrind is needed (apt install valgrind)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The instructions one run executes (callgrind's total).
count() {
    AC_WORKERS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$@" \
        >"$tmp/stdout" 2>"$tmp/stderr" || {
        echo "$0: $* failed:" >&2
        cat "$tmp/stdout" "$tmp/stderr" >&2
        exit 1
    }
    sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/out"
}

for dir in "$@"; do
    ring_lo=$(count "$dir/ring" 1000 200000)
    ring_hi=$(count "$dir/ring" 1000 600000)
    pp_lo=$(count "$dir/pingpong" 100000)
    pp_hi=$(count "$dir/pingpong" 300000)
    sky=$(count "$dir/skynet" 4)
    awk -v d="$dir" -v rl="$ring_lo" -v rh="$ring_hi" -v pl="$pp_lo" -v ph="$pp_hi" -v s="$sky" \
        'BEGIN { printf "%s ring_hop=%.1f pingpong_round_trip=%.1f skynet4=%.2fM\n",
                 d, (rh - rl) / 400000, (ph - pl) / 200000, s / 1e6 }'
done
