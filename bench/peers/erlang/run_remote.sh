#!/usr/bin/env bash
# Runs one two-node Erlang peer benchmark over loopback (see
# bench/peers/README.md):
#
#   run_remote.sh EBIN_DIR remote_pingpong N
#   run_remote.sh EBIN_DIR remote_stream N BYTES
#   run_remote.sh EBIN_DIR remote_down kill|stop TICKTIME
#   run_remote.sh EBIN_DIR all          every benchmark REMOTE_RUNS times, medians
#
# It starts a private epmd (a random port on 127.0.0.1, so it neither needs
# nor disturbs a system epmd), a peer node and the measuring node, both
# `erl -sname NAME@localhost -setcookie actorc_bench`, distribution bound to
# 127.0.0.1; the measuring node prints the one output line. Every process it
# started (both nodes, epmd) is stopped when it exits, on failure and on
# INT/TERM too, and every wait is bounded.
#
# Environment:
#   REMOTE_TIMEOUT=S   seconds the measuring node may run (default 120;
#                      remote_down: 1.25 TICKTIME + 30)
#   REMOTE_RUNS=3      (all) runs of each
#   REMOTE_DOWN_SLOW=1 (all) also remote_down stop at the default ticktime
#                      (60 s: 45-75 s a run); off by default
#   ERL_WORKERS / AC_WORKERS, ERL_FLAGS_EXTRA: as for run.sh, on both nodes
#
# Exit status: the measuring node's (0 ok, 1 failed verification, 2 bad
# arguments or a crash), 124 when it ran past REMOTE_TIMEOUT, 3 when the
# nodes could not be started.
set -u

usage() {
    sed -n '5,8s/^#   /usage: /p' "$0" >&2
    exit 2
}
[ $# -ge 2 ] || usage
ebin=$1 bench=$2
shift 2

# ---- all: every benchmark REMOTE_RUNS times, then the medians -------------
if [ "$bench" = all ]; then
    [ $# -eq 0 ] || usage
    runs=${REMOTE_RUNS:-3}
    case "$runs" in '' | *[!0-9]* | 0) echo "run_remote: REMOTE_RUNS must be a positive integer" >&2; exit 2 ;; esac
    cases=("remote_pingpong 100000" "remote_stream 1000000 64"
           "remote_down kill 60" "remote_down kill 1" "remote_down stop 1")
    [ "${REMOTE_DOWN_SLOW:-0}" = 1 ] && cases+=("remote_down stop 60")
    lines=$(mktemp) || exit 2
    trap 'rm -f "$lines"' EXIT
    failed=0
    for c in "${cases[@]}"; do
        for ((r = 1; r <= runs; r++)); do
            # shellcheck disable=SC2086
            all=$("$0" "$ebin" $c)
            rc=$?
            # the output line is the one naming the benchmark; anything else
            # on stdout goes to stderr
            out=$(awk -v b="${c%% *}" 'index($1, b) == 1 { print; exit }' <<<"$all")
            [ "$all" = "$out" ] || grep -v -F -x -e "$out" <<<"$all" >&2
            echo "${out:-<no line>}  (run $r, rc $rc)"
            if [ "$rc" -eq 0 ]; then echo "$out" >>"$lines"; else failed=1; fi
        done
    done
    echo "# medians of $runs: benchmark params seconds msgs_per_sec peak_rss_kb"
    awk '{ k = $1 " " $2; n[k]++; s[k, n[k]] = $3; m[k, n[k]] = $4; r[k, n[k]] = $5
           if (!(k in seen)) { seen[k] = 1; order[++nk] = k } }
         function med(a, k, c,   i, j, t, v) {
             for (i = 1; i <= c; i++) v[i] = a[k, i]
             for (i = 2; i <= c; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
             return (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2 }
         END { for (i = 1; i <= nk; i++) { k = order[i]
                 printf "%s %.6f %.0f %.0f\n", k, med(s, k, n[k]), med(m, k, n[k]), med(r, k, n[k]) } }' "$lines"
    exit "$failed"
fi

# ---- one benchmark -----------------------------------------------------------
tick=""
limit=${REMOTE_TIMEOUT:-120}
case "$bench" in
remote_pingpong) [ $# -eq 1 ] || usage ;;
remote_stream) [ $# -eq 2 ] || usage ;;
remote_down)
    [ $# -eq 2 ] || usage
    case "$1" in kill | stop) ;; *) usage ;; esac
    case "$2" in '' | *[!0-9]* | 0) usage ;; esac
    tick=$2
    limit=${REMOTE_TIMEOUT:-$((tick * 5 / 4 + 30))} ;;
*) usage ;;
esac
case "$limit" in '' | *[!0-9]* | 0) echo "run_remote: REMOTE_TIMEOUT must be a positive integer" >&2; exit 2 ;; esac
for m in "$bench" bench_remote bench_peer; do
    [ -f "$ebin/$m.beam" ] || { echo "run_remote: $ebin/$m.beam not built" >&2; exit 2; }
done

epmd_pid="" peer_pid="" reaper_pid="" main_pid="" tmp=""
# The waits below poll without forking (no ps, no sleep: a fork every 0.1 s
# would be noise on a 2-core machine): /proc/PID/stat is read with the read
# builtin and the pause is a read with a timeout on a FIFO nobody writes.
alive() { # pid: running (not gone, not a zombie)?
    local st
    { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
    st=${st##*) }
    [ "${st%% *}" != Z ]
}
nap() { read -r -t 0.1 -u "$nap_fd" _; }
wait_gone() { # pid tenths: wait up to tenths/10 s for pid to end
    local i
    for ((i = 0; i < $2; i++)); do
        alive "$1" || return 0
        nap
    done
    return 1
}
stop() { # pid: SIGKILL (also ends a SIGSTOPped node) and reap
    [ -n "$1" ] || return 0
    kill -s KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
# shellcheck disable=SC2317  # (run by the EXIT trap)
cleanup() {
    if [ -n "$main_pid" ]; then
        # SIGTERM first: beam.smp then halts cleanly, with its helpers
        kill -s TERM "$main_pid" 2>/dev/null
        wait_gone "$main_pid" 20
        stop "$main_pid"
    fi
    # the peer halts by itself when the measuring node goes; give it a moment
    if [ -n "$peer_pid" ]; then
        wait_gone "$peer_pid" 30 || kill -s KILL "$peer_pid" 2>/dev/null
    fi
    [ -n "$reaper_pid" ] && wait "$reaper_pid" 2>/dev/null
    stop "$epmd_pid"
    [ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tmp=$(mktemp -d) || exit 2
mkfifo "$tmp/nap" && exec {nap_fd}<>"$tmp/nap" || exit 2

# A private epmd on 127.0.0.1 (retried on another port if that one is taken).
for ((try = 0; try < 5; try++)); do
    port=$((20000 + RANDOM % 20000))
    epmd -port "$port" -address 127.0.0.1 2>/dev/null {nap_fd}>&- &
    epmd_pid=$!
    up=0
    for ((i = 0; i < 50; i++)); do
        alive "$epmd_pid" || break
        epmd -port "$port" -names >/dev/null 2>&1 && { up=1; break; }
        nap
    done
    [ "$up" = 1 ] && break
    stop "$epmd_pid"
    epmd_pid=""
done
[ -n "$epmd_pid" ] || { echo "run_remote: could not start epmd" >&2; exit 3; }
export ERL_EPMD_PORT=$port
# no crash dumps from a node that fails (they would land in the cwd)
export ERL_CRASH_DUMP_SECONDS=0

# The logger writes to stderr (by default it would write to stdout, next to
# the output line: e.g. net_kernel's "not responding" report in remote_down).
flags=(-noshell -start_epmd false -setcookie actorc_bench
       -kernel inet_dist_use_interface '{127,0,0,1}'
       -kernel logger '[{handler,default,logger_std_h,#{config=>#{type=>standard_error}}}]'
       -pa "$ebin")
[ -n "$tick" ] && flags+=(-kernel net_ticktime "$tick")
w=${ERL_WORKERS:-${AC_WORKERS:-}}
[ -n "$w" ] && flags+=(+S "$w:$w")

peer=bench_peer_$$@localhost main=bench_main_$$@localhost
# The peer runs under a second bash that reaps it: it is killed by a signal
# in remote_down, and bash would print a "Killed" notice for its own child.
# That bash writes the peer's pid (beam.smp's: erl execs it) to a file.
# shellcheck disable=SC2016,SC2086
bash -c '"$@" 2>&3 3>&- & echo $! >"$0"; exec 2>/dev/null 3>&-; wait $!' "$tmp/peer.pid" \
    erl "${flags[@]}" ${ERL_FLAGS_EXTRA:-} -sname "$peer" \
    -run bench_remote serve $((limit + 30)) </dev/null 1>&2 3>&2 {nap_fd}>&- &
reaper_pid=$!
for ((i = 0; i < 50; i++)); do
    [ -s "$tmp/peer.pid" ] && { read -r peer_pid <"$tmp/peer.pid"; break; }
    nap
done
[ -n "$peer_pid" ] || { echo "run_remote: could not start the peer node" >&2; exit 3; }
registered=0
for ((i = 0; i < 300; i++)); do
    alive "$peer_pid" || break
    epmd -port "$port" -names 2>/dev/null | grep -q "^name ${peer%@*} " && { registered=1; break; }
    nap
done
[ "$registered" = 1 ] || { echo "run_remote: the peer node $peer did not start" >&2; exit 3; }

# shellcheck disable=SC2086
erl "${flags[@]}" ${ERL_FLAGS_EXTRA:-} -sname "$main" \
    -run "$bench" main "$peer" "$@" </dev/null {nap_fd}>&- &
main_pid=$!
if wait_gone "$main_pid" $((limit * 10)); then
    wait "$main_pid"
    rc=$?
    main_pid=""
else
    echo "run_remote: $bench $* ran past ${limit}s" >&2
    rc=124
fi
exit "$rc"
