#!/usr/bin/env bash
# Runs actorc's actor benchmarks next to their Erlang/OTP and CAF peers at the
# same sizes and compares the medians (see bench/README.md, bench/peers/);
# the two-node ones (remote_*) against Erlang distribution only.
#
#   bench/compare.sh            (normally via `make bench-compare`)
#
# Environment:
#   BENCH_RUNS=3          runs of each implementation per benchmark
#   BENCH_SIZE=small      a tenth of the README sizes (default: the README's)
#   BENCH_ARGS_<name>="…" override one benchmark's arguments, e.g.
#                         BENCH_ARGS_pairs="1000 1000"
#   BENCH_ONLY="ring fanin"  run only these benchmarks (the two-node ones:
#                         remote_pingpong remote_stream remote_down_kill
#                         remote_down_stop)
#   BENCH_RUNS_SLOW=1     runs of Erlang's remote_down_stop at its default
#                         net_ticktime (75 s each, within 0.1 %)
#   BENCH_TIMEOUT=600     seconds before one run counts as failed
#   BUILD=build           where build/bench/<name> and build/bench/peers/ are
#   AC_WORKERS=n          worker count for all three (actorc's workers, CAF's
#                         scheduler.max-threads, Erlang's +S n:n); default:
#                         each one's default, one per core
#
# Runs are interleaved in rounds (actorc, erlang, caf; actorc, ...) so that
# all three share the machine's drift. Per benchmark it reports the median
# msgs/s and seconds of each and, for every round, the ratio of actorc to
# that round's faster peer (msgs/s; for skynet and remote_down_* the peer's
# time over actorc's): the median of those per-round ratios and their
# min-max (the spread: with a handful of rounds, the whole range is the
# honest one; a quartile of three figures is one of them), and the issue's
# target with PASS or MISS judged on the median, so that one round's luck
# cannot pass a target (remote_down_kill has none: it is shown, not
# judged). A
# run that fails its own verification (non-zero exit), times out or prints
# no well-formed line marks the row FAILED, never a speed figure. A missing
# actorc binary skips actorc in that row (the peers still run) with a note.
#
# Writes the table to stdout and $BUILD/bench/compare.txt, every run's
# output line to $BUILD/bench/compare.runs and a bar chart (log msgs/s) to
# $BUILD/bench/compare.png. Exits 1 when a row FAILED, else 0 (a MISS is a
# result, not an error).
set -u

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2

BUILD=${BUILD:-build}
RUNS=${BENCH_RUNS:-3}
SIZE=${BENCH_SIZE:-}
TIMEOUT=${BENCH_TIMEOUT:-600}
out=$BUILD/bench
peers=$out/peers

case "$RUNS" in '' | *[!0-9]* | 0) echo "compare: BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac
case "$TIMEOUT" in '' | *[!0-9]* | 0) echo "compare: BENCH_TIMEOUT must be a positive integer" >&2; exit 2 ;; esac

benches=(pingpong ring ring_multi skynet fanin pairs stream inject mesh ask spawn broker
         remote_pingpong remote_stream remote_down_kill remote_down_stop)
declare -A args
case "$SIZE" in
'' | full | default)
    SIZE=full
    args=([pingpong]="1000000" [ring]="1000 10000000" [ring_multi]="1000 1000 10000000"
          [skynet]="6" [fanin]="100 100000" [pairs]="1000 10000"
          [stream]="10000000" [inject]="60 100000" [mesh]="120 100 1000"
          [ask]="1000 1000" [spawn]="100000" [broker]="100 100000"
          [remote_pingpong]="100000" [remote_stream]="1000000 64") ;;
small)
    args=([pingpong]="100000" [ring]="1000 1000000" [ring_multi]="1000 1000 1000000"
          [skynet]="5" [fanin]="100 10000" [pairs]="1000 1000"
          [stream]="1000000" [inject]="60 10000" [mesh]="120 100 100"
          [ask]="1000 100" [spawn]="10000" [broker]="100 10000"
          [remote_pingpong]="10000" [remote_stream]="100000 64") ;;
*)
    echo "compare: BENCH_SIZE must be small or empty (the README's sizes)" >&2
    exit 2 ;;
esac
for b in "${benches[@]}"; do
    v=BENCH_ARGS_$b
    [ -n "${!v:-}" ] && args[$b]=${!v}
done
# Time to notice a lost node, at each one's default: actorc's link timeout
# (ms), Erlang's net_ticktime (s). Each program is remote_down MODE LIMIT.
for m in kill stop; do
    args[remote_down_$m]="$m 800"
    args[remote_down_$m,erlang]="$m 60"
done
args_of() { # bench impl -> its arguments
    if [ -n "${args[$1,$2]+x}" ]; then echo "${args[$1,$2]}"; else echo "${args[$1]}"; fi
}
params_of() { # bench impl -> the params field its line must have
    local a
    a=$(args_of "$1" "$2")
    a=${a#kill }
    a=${a#stop }
    tr -s ' ' 'x' <<<"$a"
}
is_remote() { [ "${1#remote_}" != "$1" ]; }
is_time() { [ "$1" = skynet ] || [ "${1#remote_down_}" != "$1" ]; }
if [ -n "${BENCH_ONLY:-}" ]; then
    sel=()
    for b in $BENCH_ONLY; do
        [ -n "${args[$b]+x}" ] || { echo "compare: unknown benchmark '$b' in BENCH_ONLY" >&2; exit 2; }
        sel+=("$b")
    done
    benches=("${sel[@]}")
fi

# The issue's targets: actorc ÷ the faster peer, in msgs/s (skynet and
# remote_down_*: in time; remote_down_kill has none).
declare -A target=([pingpong]=10 [ring]=10 [ring_multi]=5 [skynet]=12 [fanin]=5 [pairs]=5
                   [stream]=5 [inject]=5 [mesh]=5 [ask]=5 [spawn]=5 [broker]=5
                   [remote_pingpong]=1 [remote_stream]=10 [remote_down_stop]=50)

impls=(actorc erlang caf)
prog_of() { # bench -> the program (remote_down_kill and _stop: remote_down)
    case "$1" in remote_down_*) echo remote_down ;; *) echo "$1" ;; esac
}
cmd_of() { # impl bench -> the command, as words, on stdout (one per line)
    local p
    p=$(prog_of "$2")
    case "$1" in
    actorc) printf '%s\n' "$out/$p" ;;
    erlang)
        if is_remote "$2"; then
            printf '%s\n' bench/peers/erlang/run_remote.sh "$peers/erlang" "$p"
        else
            printf '%s\n' bench/peers/erlang/run.sh "$peers/erlang" "$p"
        fi ;;
    caf) printf '%s\n' "$peers/caf/$p" ;;
    esac
}
present() { # impl bench: is it built?
    local p
    p=$(prog_of "$2")
    case "$1" in
    actorc) [ -x "$out/$p" ] ;;
    erlang) [ -f "$peers/erlang/$p.beam" ] && [ -f "$peers/erlang/bench_peer.beam" ] &&
                { ! is_remote "$2" || [ -f "$peers/erlang/bench_remote.beam" ]; } ;;
    caf) [ -x "$peers/caf/$p" ] ;;
    esac
}
runs_of() { # impl bench: Erlang's frozen node at its default ticktime takes 75 s
    if [ "$1" = erlang ] && [ "$2" = remote_down_stop ]; then echo "${BENCH_RUNS_SLOW:-1}"; else echo "$RUNS"; fi
}

# Workers: one setting for all three when AC_WORKERS is given.
if [ -n "${AC_WORKERS:-}" ]; then
    export AC_WORKERS CAF_WORKERS=$AC_WORKERS ERL_WORKERS=$AC_WORKERS
fi

mkdir -p "$out" || exit 2
runs_file=$out/compare.runs
txt=$out/compare.txt
dat=$out/compare.dat
png=$out/compare.png
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
: >"$runs_file"

declare -A secs rate state why rsecs rrate
inject_cost=""
floor=""
notes=()

# median of the numbers on stdin ("-" when there are none)
median() {
    sort -g | awk '{ a[NR] = $1 }
        END { if (NR == 0) { print "-"; exit }
              if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2
              printf "%.6f\n", m }'
}

# median, min and max of the numbers on stdin, each "%.2f" ("- - -" when
# there are none)
median_spread() {
    sort -g | awk '{ a[NR] = $1 }
        END { if (NR == 0) { print "- - -"; exit }
              if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2
              printf "%.2f %.2f %.2f\n", m, a[1], a[NR] }'
}

# The ratio of each round of bench $1 that actorc ran, one a line: actorc
# over the faster peer of that round (msgs/s; is_time: the faster peer's
# seconds over actorc's). A peer that ran fewer rounds (runs_of: Erlang's
# remote_down_stop) counts with its median in the rounds it missed.
round_ratios() {
    local b=$1 r i v best a
    for ((r = 1; r <= RUNS; r++)); do
        if is_time "$b"; then a=${rsecs[$b,actorc,$r]:-}; else a=${rrate[$b,actorc,$r]:-}; fi
        [ -n "$a" ] || continue
        best=""
        for i in erlang caf; do
            [ "${state[$b,$i]}" = ok ] || continue
            if is_time "$b"; then
                v=${rsecs[$b,$i,$r]:-${ms[$i]}}
                [ -z "$best" ] || awk -v v="$v" -v b="$best" 'BEGIN { exit !(v < b) }' && best=$v
            else
                v=${rrate[$b,$i,$r]:-${mr[$i]}}
                [ -z "$best" ] || awk -v v="$v" -v b="$best" 'BEGIN { exit !(v > b) }' && best=$v
            fi
        done
        [ -n "$best" ] || continue
        if is_time "$b"; then
            awk -v a="$a" -v p="$best" 'BEGIN { printf "%.6f\n", p / a }'
        else
            awk -v a="$a" -v p="$best" 'BEGIN { printf "%.6f\n", a / p }'
        fi
    done
}

ncores=$(nproc 2>/dev/null || echo '?')
echo "compare: $SIZE sizes, $RUNS rounds, each one run of each, interleaved; $ncores cores; workers: ${AC_WORKERS:-default (one per core)}" >&2

for b in "${benches[@]}"; do
    for i in "${impls[@]}"; do
        state[$b,$i]=ok
        secs[$b,$i]=""
        rate[$b,$i]=""
        if is_remote "$b" && [ "$i" = caf ]; then
            state[$b,$i]=none  # two-node benchmarks are against Erlang distribution
        elif ! present "$i" "$b"; then
            state[$b,$i]=missing
            mapfile -t c < <(cmd_of "$i" "$b")
            [ "$i" = erlang ] && c=("$peers/erlang/$(prog_of "$b").beam")
            why[$b,$i]="$i: ${c[0]} not built"
        fi
    done
    for ((r = 1; r <= RUNS; r++)); do
        for i in "${impls[@]}"; do
            [ "${state[$b,$i]}" = ok ] || continue
            [ "$r" -le "$(runs_of "$i" "$b")" ] || continue
            mapfile -t c < <(cmd_of "$i" "$b")
            want_params=$(params_of "$b" "$i")
            # shellcheck disable=SC2046
            timeout "$TIMEOUT" "${c[@]}" $(args_of "$b" "$i") >"$tmp/out" 2>"$tmp/err"
            rc=$?
            line=$(awk -v b="$b" '$1 == b { l = $0 } END { print l }' "$tmp/out")
            printf '%s %s run %d rc %d: %s\n' "$b" "$i" "$r" "$rc" "${line:-<no line>}" >>"$runs_file"
            sed 's/^/    stderr: /' "$tmp/err" >>"$runs_file"
            echo "  $b $i run $r: ${line:-rc $rc}" >&2
            if [ "$rc" -ne 0 ]; then
                state[$b,$i]=failed
                if [ "$rc" -eq 124 ]; then
                    why[$b,$i]="$i run $r: timed out after ${TIMEOUT}s"
                else
                    why[$b,$i]="$i run $r: exit $rc: $(grep -m1 . "$tmp/err" | cut -c1-160)"
                fi
                continue
            fi
            # benchmark params seconds msgs_per_sec peak_rss_kb
            if ! awk -v b="$b" -v p="$want_params" 'BEGIN { ok = 0 }
                    $1 == b && NF == 5 && $2 == p && $3 ~ /^[0-9]+\.[0-9][0-9][0-9]+$/ &&
                    $4 ~ /^[0-9]+(\.[0-9]+)?$/ && $5 ~ /^[0-9]+$/ && $3 > 0 { ok = 1 }
                    END { exit !ok }' <<<"$line"; then
                state[$b,$i]=failed
                why[$b,$i]="$i run $r: no well-formed '$b $want_params seconds msgs_per_sec peak_rss_kb' line (got: ${line:-nothing})"
                continue
            fi
            read -r _ _ s m _ <<<"$line"
            secs[$b,$i]+="$s "
            rate[$b,$i]+="$m "
            # this round's figures, for the round's own ratio
            rsecs[$b,$i,$r]=$s
            rrate[$b,$i,$r]=$m
            # inject's '#' line: the same load sent from a handler
            if [ "$b" = inject ] && [ "$i" = actorc ]; then
                h=$(awk '$1 == "#" && $2 == "inject_handler" && $7 == "outside/handler" { print $8 }' "$tmp/out" | tail -1)
                [ -n "$h" ] && inject_cost+="$h "
            fi
        done
        # remote_pingpong: bare libzmq's round trips in the same runs, the
        # engine's floor (remote_floor: no runtime), shown in a note
        if [ "$b" = remote_pingpong ] && [ -x "$out/remote_floor" ]; then
            # shellcheck disable=SC2086
            timeout "$TIMEOUT" "$out/remote_floor" ${args[$b]} >"$tmp/out" 2>>"$runs_file"
            line=$(awk '$1 == "remote_floor" && NF == 5 { l = $0 } END { print l }' "$tmp/out")
            printf '%s floor run %d: %s\n' "$b" "$r" "${line:-<no line>}" >>"$runs_file"
            [ -n "$line" ] && floor+="$(awk '{ print $4 }' <<<"$line") "
        fi
    done
done

# ---- table -----------------------------------------------------------------
fmt_rate() { awk -v x="$1" 'BEGIN { printf "%.0f", x }'; }
fmt_secs() { awk -v x="$1" 'BEGIN { printf (x < 0.1 ? "%.4f" : "%.3f"), x }'; }

failed_any=0
{
    echo "# actorc vs Erlang/OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().' 2>/dev/null || echo '?')" \
         "and CAF $(dpkg-query -W -f='${Version}' libcaf-dev 2>/dev/null || echo '?')" \
         "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $ncores cores," \
         "workers ${AC_WORKERS:-default}, $SIZE sizes, $RUNS rounds"
    printf '%-16s %-18s %13s %13s %13s %9s %9s %9s %8s %13s %12s %s\n' \
        benchmark params actorc_msg/s erlang_msg/s caf_msg/s actorc_s erlang_s caf_s ratio spread target result
    : >"$dat"
    for b in "${benches[@]}"; do
        params=$(params_of "$b" actorc)
        # remote_down_*: actorc's link timeout (ms) and Erlang's net_ticktime (s)
        is_time "$b" && [ "$b" != skynet ] && params="${params}ms/tick$(params_of "$b" erlang)s"
        declare -A mr ms
        row_failed=0
        for i in "${impls[@]}"; do
            case "${state[$b,$i]}" in
            ok)
                mr[$i]=$(tr ' ' '\n' <<<"${rate[$b,$i]}" | grep . | median)
                ms[$i]=$(tr ' ' '\n' <<<"${secs[$b,$i]}" | grep . | median) ;;
            failed)
                mr[$i]=FAILED ms[$i]=FAILED row_failed=1
                notes+=("$b: ${why[$b,$i]}") ;;
            missing)
                mr[$i]=- ms[$i]=-
                notes+=("$b: ${why[$b,$i]}; skipped") ;;
            none) mr[$i]=- ms[$i]=- ;;
            esac
        done
        tgt=">=${target[$b]:-}x"
        is_time "$b" && tgt="${tgt}(time)"
        [ -z "${target[$b]:-}" ] && tgt=none
        spread=-
        if [ "$row_failed" = 1 ]; then
            ratio=- result=FAILED failed_any=1
        elif [ "${mr[actorc]}" = - ]; then
            ratio=- result=SKIPPED
        elif [ "${mr[erlang]}" = - ] && [ "${mr[caf]}" = - ]; then
            ratio=- result=NO-PEER
        else
            # One ratio per round, from that round's figures (the runs of
            # one round are made moments apart, so they share the load);
            # judged on their median, with their min-max beside it.
            rr=$(round_ratios "$b" | median_spread)
            read -r ratio lo hi <<<"$rr"
            result=$(awk -v x="$ratio" -v t="${target[$b]:-}" 'BEGIN { print t == "" ? "-" : (x >= t) ? "PASS" : "MISS" }')
            spread="${lo}-${hi}"
            ratio="${ratio}x"
        fi
        cells=()
        for i in "${impls[@]}"; do
            # remote_down_* count no messages: their msgs/s is 0
            if is_time "$b" && [ "$b" != skynet ]; then cells+=(-); continue; fi
            case "${mr[$i]}" in FAILED | -) cells+=("${mr[$i]}") ;; *) cells+=("$(fmt_rate "${mr[$i]}")") ;; esac
        done
        for i in "${impls[@]}"; do
            case "${ms[$i]}" in FAILED | -) cells+=("${ms[$i]}") ;; *) cells+=("$(fmt_secs "${ms[$i]}")") ;; esac
        done
        printf '%-16s %-18s %13s %13s %13s %9s %9s %9s %8s %13s %12s %s\n' \
            "$b" "$params" "${cells[@]}" "$ratio" "$spread" "$tgt" "$result"
        # chart data: failed or missing figures are left out ('?'), and
        # the remote_down rows (times)
        is_time "$b" && [ "$b" != skynet ] && { unset mr ms; continue; }
        d=()
        for i in "${impls[@]}"; do
            case "${mr[$i]}" in FAILED | -) d+=("?") ;; *) d+=("${mr[$i]}") ;; esac
        done
        echo "$b ${d[*]}" >>"$dat"
        unset mr ms
    done
    if [ -n "$floor" ]; then
        f=$(fmt_rate "$(tr ' ' '\n' <<<"$floor" | grep . | median)")
        notes+=("remote_pingpong: bare libzmq in the same runs (remote_floor: CURVE DEALER/ROUTER, no runtime): median $f round trips/s")
    fi
    if [ -n "$inject_cost" ]; then
        c=$(tr ' ' '\n' <<<"$inject_cost" | grep . | median_spread)
        read -r cm clo chi <<<"$c"
        notes+=("inject: a send from outside actors costs ${cm}x (${clo}-${chi}) a send from a handler, actorc's runs (the '#' line; target <= 2x): $(awk -v x="$cm" 'BEGIN { print (x <= 2) ? "PASS" : "MISS" }')")
    fi
    if [ ${#notes[@]} -gt 0 ]; then
        echo
        printf 'note: %s\n' "${notes[@]}"
    fi
    echo
    echo "msgs/s and seconds: each one's median of its $RUNS runs; ratio: the median over the $RUNS rounds of each round's"
    echo "actorc msgs/s over that round's faster peer's (skynet, remote_down_*: the faster peer's seconds over actorc's),"
    echo "spread: the lowest and highest of those $RUNS ratios; PASS/MISS judges the median against the target;"
    echo "remote_*: two nodes over loopback, against Erlang distribution (no CAF peer); remote_pingpong's msgs/s are round trips/s;"
    echo "every run's output: $runs_file"
} >"$txt"
cat "$txt"

# ---- chart -----------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
    # the axis starts at the power of ten below the smallest bar
    ymin=$(awk '{ for (i = 2; i <= NF; i++) if ($i != "?" && $i > 0 && (m == "" || $i < m)) m = $i }
        END { if (m == "") print 1; else printf "%g", 10 ^ int(log(m) / log(10)) }' "$dat")
    if gnuplot <<EOF 2>"$tmp/gp"; then
set terminal pngcairo size 1000,560 font ",10"
set output "$png"
set title "actorc vs Erlang/OTP vs CAF - median messages/s of $RUNS runs ($SIZE sizes; log scale)"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [$ymin:*]
set format y "10^{%L}"
set ylabel "messages per second"
set grid ytics
set key top left
set xtics nomirror noenhanced
plot "$dat" using 2:xtic(1) title "actorc" lc rgb "#1b9e77", \
     "" using 3 title "Erlang/OTP" lc rgb "#d95f02", \
     "" using 4 title "CAF" lc rgb "#7570b3"
EOF
        echo "compare: chart in $png" >&2
    else
        echo "compare: gnuplot failed, no chart: $(head -3 "$tmp/gp")" >&2
    fi
else
    echo "compare: gnuplot not installed, no chart (apt-get install gnuplot-nox)" >&2
fi

exit "$failed_any"
