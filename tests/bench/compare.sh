#!/usr/bin/env bash
# tests/bench/compare.sh — bench/compare.sh's arithmetic on a fake BUILD
# tree: every implementation of a benchmark is a stub that prints the next
# of a fixed list of lines (Erlang's through a stand-in `erl` on PATH), so
# the table's medians, per-round ratios, spreads and verdicts are known
# exactly. No real benchmark runs.
#
#   tests/bench/compare.sh            (run by make test)
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
B=$work/build
mkdir -p "$B/bench/peers/caf" "$B/bench/peers/erlang" "$work/bin"

# stub FILE LINE...: a program that prints LINE k on its k-th run; a line
# "exit N" makes that run fail with status N instead.
stub() {
    local f=$1
    shift
    printf '%s\n' "$@" >"$f.lines"
    : >"$f.n"
    cat >"$f" <<'EOS'
#!/usr/bin/env bash
n=$(( $(wc -l <"$0.n") + 1 ))
echo x >>"$0.n"
l=$(sed -n "${n}p" "$0.lines")
case "$l" in "exit "*) echo "stub: failing on purpose" >&2; exit "${l#exit }" ;; esac
echo "$l"
EOS
    chmod +x "$f"
}
# erl: -eval (the version query) prints 25; -pa EBIN -run MOD main ARGS
# runs EBIN/MOD as a stub.
cat >"$work/bin/erl" <<'EOS'
#!/usr/bin/env bash
ebin= mod=
while [ $# -gt 0 ]; do
    case "$1" in
    -eval) printf 25; exit 0 ;;
    -pa) ebin=$2; shift ;;
    -run) mod=$2; shift; break ;;
    esac
    shift
done
exec "$ebin/$mod"
EOS
chmod +x "$work/bin/erl"
: >"$B/bench/peers/erlang/bench_peer.beam"
for b in pingpong fanin skynet pairs; do : >"$B/bench/peers/erlang/$b.beam"; done
A=$B/bench E=$B/bench/peers/erlang C=$B/bench/peers/caf

# pingpong (msgs/s, target 10x): rounds 100/max(10,20) = 5, 300/50 = 6,
# 200/40 = 5: median 5.00, spread 5.00-6.00, MISS. The medians of each
# (200 / max(20, 20)) would make it 10x, a PASS.
stub "$A/pingpong" "pingpong 10 0.100 100 1000" "pingpong 10 0.100 300 1000" "pingpong 10 0.100 200 1000"
stub "$E/pingpong" "pingpong 10 0.100 10 1000" "pingpong 10 0.100 50 1000" "pingpong 10 0.100 20 1000"
stub "$C/pingpong" "pingpong 10 0.100 20 1000" "pingpong 10 0.100 10 1000" "pingpong 10 0.100 40 1000"
# fanin (target 5x): 600/100 = 6, 500/120 = 4.17, 700/100 = 7: 6.00 PASS.
stub "$A/fanin" "fanin 2x3 0.100 600 1" "fanin 2x3 0.100 500 1" "fanin 2x3 0.100 700 1"
stub "$E/fanin" "fanin 2x3 0.100 100 1" "fanin 2x3 0.100 100 1" "fanin 2x3 0.100 100 1"
stub "$C/fanin" "fanin 2x3 0.100 50 1" "fanin 2x3 0.100 120 1" "fanin 2x3 0.100 90 1"
# skynet (time, target 12x): min(10, 20)/1 = 10, min(30, 15)/2 = 7.5,
# min(12, 30)/1.5 = 8: 8.00, spread 7.50-10.00, MISS.
stub "$A/skynet" "skynet 2 1.000 5 1" "skynet 2 2.000 5 1" "skynet 2 1.500 5 1"
stub "$E/skynet" "skynet 2 10.000 5 1" "skynet 2 30.000 5 1" "skynet 2 12.000 5 1"
stub "$C/skynet" "skynet 2 20.000 5 1" "skynet 2 15.000 5 1" "skynet 2 30.000 5 1"
# pairs: CAF fails its verification in round 2: FAILED, exit status 1.
stub "$A/pairs" "pairs 2x2 0.100 900 1" "pairs 2x2 0.100 900 1" "pairs 2x2 0.100 900 1"
stub "$E/pairs" "pairs 2x2 0.100 100 1" "pairs 2x2 0.100 100 1" "pairs 2x2 0.100 100 1"
stub "$C/pairs" "pairs 2x2 0.100 100 1" "exit 1" "pairs 2x2 0.100 100 1"

PATH=$work/bin:$PATH BUILD=$B BENCH_RUNS=3 BENCH_ONLY="pingpong fanin skynet pairs" \
    BENCH_ARGS_pingpong=10 BENCH_ARGS_fanin="2 3" BENCH_ARGS_skynet=2 BENCH_ARGS_pairs="2 2" \
    "$root/bench/compare.sh" >"$work/out" 2>"$work/err"
rc=$?

fails=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then :; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
row() { awk -v b="$1" '$1 == b' "$work/out"; }
# row BENCH must be: ratio spread then the target's verdict (the last field)
row_is() {
    row "$1" | awk -v r="$2" -v s="$3" -v v="$4" '{ ok = $(NF - 3) == r && $(NF - 2) == s && $NF == v }
        END { exit !(NR == 1 && ok) }'
}
check "exit status 1 (a FAILED row)" test "$rc" -eq 1
check "pingpong: median of per-round ratios, MISS" row_is pingpong 5.00x 5.00-6.00 MISS
check "pingpong: each one's median msgs/s" \
    sh -c "awk '\$1 == \"pingpong\" { exit !(\$3 == 200 && \$4 == 20 && \$5 == 20) }' '$work/out'"
check "fanin: PASS on the median, spread from the worst round" row_is fanin 6.00x 4.17-7.00 PASS
check "skynet: time ratios, the faster peer per round" row_is skynet 8.00x 7.50-10.00 MISS
check "pairs: a failed run marks the row FAILED" \
    sh -c "awk '\$1 == \"pairs\" { exit !(\$NF == \"FAILED\" && \$5 == \"FAILED\") }' '$work/out'"
check "the failure is named in a note" grep -q '^note: pairs: caf run 2: exit 1: stub: failing on purpose' "$work/out"
check "the footer names the rounds" grep -q 'median over the 3 rounds' "$work/out"
check "the header names the rounds" grep -q '3 rounds$' "$work/out"
check "compare.txt is the table" cmp -s "$work/out" "$B/bench/compare.txt"
# every run in compare.runs, interleaved (actorc, erlang, caf per round)
order=$(awk '$1 == "pingpong" { printf "%s%s ", $2, $4 }' "$B/bench/compare.runs")
check "compare.runs: the runs interleaved" test "$order" = "actorc1 erlang1 caf1 actorc2 erlang2 caf2 actorc3 erlang3 caf3 "
check "compare.runs: every run's line (the failed CAF runs no third time)" test "$(grep -c ' run [123] rc 0: ' "$B/bench/compare.runs")" -eq 34
if command -v gnuplot >/dev/null 2>&1; then
    check "the chart" test -s "$B/bench/compare.png"
fi
if [ "$fails" -ne 0 ]; then
    echo "tests/bench/compare.sh: $fails check(s) failed; the table:"
    cat "$work/out" "$work/err"
    exit 1
fi
echo "bench/compare.sh: arithmetic ok"
