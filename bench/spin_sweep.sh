#!/usr/bin/env bash
# The spin/park balance: how many steal rounds an idle worker spins through
# before it parks (AC_SPIN_ROUNDS in runtime/sched.c), measured.
#
#   bench/spin_sweep.sh        (or `make bench-spin`)
#
# Builds the benchmarks once per setting, each in its own folder
# ($SPIN_BUILD/spin-N, with -DAC_SPIN_ROUNDS=N; the default build is not
# touched), then runs every setting SPIN_REPS times, interleaved (all
# settings, then all again), so that they share the machine's drift. Prints
# one line per setting with the medians:
#
#   wake_us   idle: median time from a send to a fully parked runtime until
#             the handler runs; wake_frt the same in futex round trips
#             measured in that run (target <= 2)
#   idle%     idle: CPU of a started runtime with nothing to do, % of a core
#   pingpong ring_multi pairs   throughput, millions of messages/s
#   cpu/wall  their CPU time over their wall time, summed (2.0 = both cores
#             busy the whole time; what spinning costs)
#   parks     the `parks` counter (AC_STATS=1), summed over the three
#
# Every run's figures are kept in $SPIN_BUILD/runs-N.txt.
#
# and the throughputs again as ratios to the SPIN_BASE setting (default 64).
#
# Environment:
#   SPIN_SETTINGS="0 4 16 64 256"   the AC_SPIN_ROUNDS values
#   SPIN_REPS=3                      runs of each setting
#   SPIN_BUILD=build/spin            where the variants are built
#   SPIN_WORKERS=2                   AC_WORKERS for every run
#   SPIN_IDLE="5 200"                idle's SECONDS TRIALS
#   SPIN_BASE=64                     the setting the ratios are taken against
#   BENCH_SIZE=small                 a tenth of the README sizes
set -u

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2

read -r -a settings <<<"${SPIN_SETTINGS:-0 4 16 64 256}"
reps=${SPIN_REPS:-3}
dir=${SPIN_BUILD:-build/spin}
workers=${SPIN_WORKERS:-2}
idle_args=${SPIN_IDLE:-5 200}
base=${SPIN_BASE:-64}
if [ "${BENCH_SIZE:-}" = small ]; then
    declare -A args=([pingpong]="100000" [ring_multi]="1000 1000 1000000" [pairs]="1000 1000")
else
    declare -A args=([pingpong]="1000000" [ring_multi]="1000 1000 10000000" [pairs]="1000 10000")
fi
tput=(pingpong ring_multi pairs)

mkdir -p "$dir" || exit 2
for n in "${settings[@]}"; do
    echo "spin_sweep: building AC_SPIN_ROUNDS=$n in $dir/spin-$n" >&2
    make -s BUILD="$dir/spin-$n" CFLAGS="${CFLAGS:-} -DAC_SPIN_ROUNDS=$n" bench-build \
        >"$dir/build-$n.log" 2>&1 || { cat "$dir/build-$n.log" >&2; exit 1; }
done

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# run SETTING NAME ARGS... -> appends "key value" lines to $tmp/SETTING
run() {
    local n=$1 b=$2
    shift 2
    local t0 t1 out=$tmp/out rc
    t0=$(date +%s.%N)
    AC_WORKERS=$workers AC_STATS=1 /usr/bin/time -f 'cpu %U %S' -o "$tmp/time" \
        "$dir/spin-$n/bench/$b" "$@" >"$out" 2>"$tmp/err"
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ]; then
        echo "spin_sweep: spin-$n $b failed (exit $rc):" >&2
        cat "$tmp/err" >&2
        exit 1
    fi
    local parks
    parks=$(awk '$1 == "actorc" && $3 == "total" { for (i = 4; i < NF; i++) if ($i == "parks") print $(i + 1) }' "$tmp/err")
    case $b in
    idle)
        awk '$1 == "#" && $2 == "idle:" { print "idle", $3 }
             $1 == "#" && $2 == "wake:" { print "wake_us", $4; print "wake_frt", $7 }' "$out" >>"$tmp/$n"
        ;;
    *)
        awk -v b="$b" '$1 == b { printf "%s %.3f\n", b, $4 / 1e6 }' "$out" >>"$tmp/$n"
        awk -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" '$1 == "cpu" { printf "cpu %.4f\nwall %.4f\n", $2 + $3, w }' "$tmp/time" >>"$tmp/$n.$r"
        echo "parks ${parks:-0}" >>"$tmp/$n.$r"
        ;;
    esac
}

for ((r = 1; r <= reps; r++)); do
    for n in "${settings[@]}"; do
        echo "spin_sweep: run $r/$reps, AC_SPIN_ROUNDS=$n" >&2
        # shellcheck disable=SC2086
        run "$n" idle $idle_args
        for b in "${tput[@]}"; do
            # shellcheck disable=SC2086
            run "$n" "$b" ${args[$b]}
        done
        # per repetition: CPU/wall and parks summed over the three
        awk '{ s[$1] += $2 } END { printf "cpuwall %.3f\nparks %d\n", s["cpu"] / s["wall"], s["parks"] }' \
            "$tmp/$n.$r" >>"$tmp/$n"
    done
done

median() { # key file
    awk -v k="$1" '$1 == k { print $2 }' "$2" | sort -g |
        awk '{ a[NR] = $1 } END { if (!NR) { print "-"; exit }
             print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# every run's figures, for a second look
for n in "${settings[@]}"; do cp "$tmp/$n" "$dir/runs-$n.txt"; done

echo "spin sweep: AC_WORKERS=$workers, $reps runs interleaved, medians; $(nproc) cores; PAUSES_PER_ROUND default"
printf '%-6s %8s %8s %7s %9s %10s %7s %8s %6s   %s\n' \
    spins wake_us wake_frt idle% pingpong ring_multi pairs cpu/wall parks "ratios to $base (pingpong ring_multi pairs)"
for n in "${settings[@]}"; do
    line=()
    for k in wake_us wake_frt idle pingpong ring_multi pairs cpuwall parks; do
        line+=("$(median "$k" "$tmp/$n")")
    done
    ratios=""
    if [ -f "$tmp/$base" ]; then
        for b in "${tput[@]}"; do
            ratios+=$(awk -v x="$(median "$b" "$tmp/$n")" -v y="$(median "$b" "$tmp/$base")" \
                'BEGIN { printf " %.2f", x / y }')
        done
    fi
    printf '%-6s %8s %8s %7s %9s %10s %7s %8s %6s  %s\n' "$n" "${line[@]}" "$ratios"
done
