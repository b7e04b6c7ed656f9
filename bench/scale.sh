#!/bin/sh
# scale.sh — how the scheduler scales with workers (issue 14, item 3):
# ring_multi, pairs and skynet at 1, 2, 4, 8 and 16 workers, for a machine
# with more cores than the one that builds them (bench/README.md, "Scaling
# past two cores").
#
#   bench/scale.sh bundle DIR            copy the three benchmarks, every
#                                        shared library they load and the
#                                        loader into DIR
#   bench/scale.sh run DIR [WORKERS...]  run them there, interleaved, and
#                                        print the curve
#
# A bundle, not a static binary: libzmq.a needs Kerberos' static libraries,
# which Debian does not ship. The bundled loader runs the binaries against
# the bundled libraries only, so DIR runs on any x86-64 Linux, whatever it
# has installed. SCALE_ROUNDS (default 3) rounds; SCALE_BENCHES overrides
# the list ("name args" per line; run takes other sizes of bundled ones). Each round runs every benchmark at every
# worker count back to back, so that drift in the machine's load touches
# all counts alike; the table gives each count's median over the rounds
# and its speed-up over 1 worker (seconds at 1 ÷ seconds at W).
set -eu

benches=${SCALE_BENCHES:-"ring_multi 1000 1000 10000000
pairs 1000 10000
skynet 6"}

usage() {
    echo "usage: $0 bundle DIR | run DIR [WORKERS...]" >&2
    exit 2
}

bundle() {
    dir=$1
    build=${BUILD:-build}
    mkdir -p "$dir/bin" "$dir/lib"
    echo "$benches" | while read -r name args; do
        [ -n "$name" ] || continue
        bin=$build/bench/$name
        [ -x "$bin" ] || { echo "scale.sh: $bin not built (make bench-build)" >&2; exit 1; }
        cp "$bin" "$dir/bin/"
        # Every library the loader resolves, and the loader itself.
        ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
            while read -r lib; do cp -L "$lib" "$dir/lib/"; done
    done
    echo "$benches" > "$dir/benches"
    echo "scale.sh: bundled into $dir ($(du -sh "$dir" | cut -f1))"
}

run() {
    dir=$1
    shift
    [ $# -gt 0 ] || set -- 1 2 4 8 16
    loader=$(ls "$dir"/lib/ld-linux-* 2>/dev/null | head -n 1)
    [ -n "$loader" ] || { echo "scale.sh: no loader in $dir/lib (run bundle first)" >&2; exit 1; }
    list=${SCALE_BENCHES:-$(cat "$dir/benches")}
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    echo "# $(nproc) cores, $(uptime)" >&2
    r=1
    while [ "$r" -le "${SCALE_ROUNDS:-3}" ]; do
        echo "$list" | while read -r name args; do
            [ -n "$name" ] || continue
            for w in "$@"; do
                # shellcheck disable=SC2086
                line=$(AC_WORKERS=$w "$loader" --library-path "$dir/lib" "$dir/bin/$name" $args)
                echo "$w $line" | tee -a "$out" >&2
            done
        done
        r=$((r + 1))
    done
    # Lines: workers name params seconds rate rss; the median seconds per
    # (name, workers), then the speed-up over the first count.
    echo "| benchmark | workers | seconds | speed-up |"
    echo "|---|---:|---:|---:|"
    for key in $(awk '{ print $2 "/" $3 }' "$out" | awk '!seen[$0]++'); do
        name=${key%%/*}
        params=${key#*/}
        base=
        for w in "$@"; do
            med=$(awk -v n="$name" -v p="$params" -v w="$w" '$1 == w && $2 == n && $3 == p { print $4 }' "$out" |
                  sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
            [ -n "$med" ] || continue
            [ -n "$base" ] || base=$med
            echo "$name $params $w $med $base" |
                awk '{ printf "| %s %s | %d | %.3f | %.2f× |\n", $1, $2, $3, $4, $5 / $4 }'
        done
    done
}

[ $# -ge 2 ] || usage
cmd=$1
shift
case "$cmd" in
bundle) bundle "$1" ;;
run) run "$@" ;;
*) usage ;;
esac
