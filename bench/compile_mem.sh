#!/bin/sh
# compile_mem.sh — the compiler's peak memory per byte of input (issue 12:
# at most 10x). Writes one valid .actor file of about SIZE bytes for each
# shape, runs `ACTORC -w --stdout FILE >/dev/null` on it and prints
#
#     compile_mem SHAPE BYTES SECONDS PEAK_RSS_KB RATIO
#
# where RATIO is the peak resident set over the input's size. An input
# whose code would pass ACC_MAX_OUTPUT is refused after its check (the
# line says so): its figure is the check's.
#
#     bench/compile_mem.sh ACTORC WORKDIR [SIZE_BYTES [SHAPE...]]
#
# Shapes: messages (many messages in four actors), actors (many small
# actors), structs (many structs of five fields), params (messages of 500
# parameters), mix (bench/compile_gen.c's kinds of message, 25 an actor).
set -eu

actorc=$1
work=$2
size=${3:-10000000}
shift 3 2>/dev/null || shift $#
shapes=${*:-messages actors structs params mix}
mkdir -p "$work"

gen() {
    awk -v shape="$1" -v size="$2" 'BEGIN {
        n = 0
        out = "module m;\n"
        printf "%s", out; n = length(out)
        if (shape == "messages") {
            per = int(size / 4 / 34) + 1
            for (a = 0; a < 4; a++) {
                printf "actor A%d {\n", a
                for (i = 0; i < per; i++)
                    printf "    on m%d(u64 x, string s);\n", i
                printf "}\n"
            }
        } else if (shape == "actors") {
            while (n < size) {
                line = sprintf("actor A%d { on ping(u64 n); }\n", i++)
                printf "%s", line; n += length(line)
            }
        } else if (shape == "structs") {
            printf "enum Kind { none, small = 10, large }\n"
            while (n < size) {
                line = sprintf("struct S%d { u64 id; string name; u32[] " \
                               "values; Kind kind; u8[16] key; }\n", i++)
                printf "%s", line; n += length(line)
            }
            printf "actor A { on m(S0 s); }\n"
        } else if (shape == "params") {
            printf "actor A {\n"
            while (n < size) {
                line = sprintf("    on m%d(u64 p0", i++)
                for (p = 1; p < 500; p++)
                    line = line sprintf(", u64 p%d", p)
                line = line ");\n"
                printf "%s", line; n += length(line)
            }
            printf "}\n"
        } else if (shape == "mix") {
            printf "enum Kind { none, small = 10, large }\n"
            for (s = 0; s < 20; s++)
                printf "/// Struct %d.\nstruct S%d { u64 id; string name; " \
                       "u32[] values; Kind kind; u8[16] key; }\n", s, s
            actors = int(size / 1050) + 1
            for (a = 0; a < actors; a++) {
                printf "\n/// Actor %d.\nactor A%d {\n    state { u64 count; }\n", a, a
                for (m = 0; m < 25; m++) {
                    k = (a * 25 + m) % 5
                    if (k == 0) printf "    on m%d(u64 x, i32 y, f64 z);\n", m
                    else if (k == 1) printf "    on m%d(string text, bytes raw);\n", m
                    else if (k == 2) printf "    on m%d(S%d s, ref<A%d> next);\n", m, (a * 25 + m) % 20, (a + 1) % actors
                    else if (k == 3) printf "    on m%d(S%d[] many, string[] names, bool ok);\n", m, (a * 25 + m) % 20
                    else printf "    on m%d(u16[8] small, Kind k, addr to_addr);\n", m
                }
                printf "}\n"
            }
        }
    }'
}

for shape in $shapes; do
    f=$work/$shape.actor
    gen "$shape" "$size" >"$f"
    bytes=$(wc -c <"$f")
    # GNU time's %e and %M: wall seconds and peak resident set in KiB.
    # A large input may ask for more code than ACC_MAX_OUTPUT: refused
    # (status 1) after its check, which is still measured.
    st=0
    /usr/bin/time -f '%e %M' -o "$work/time" "$actorc" -w --stdout "$f" \
        >/dev/null 2>"$work/err" || st=$?
    # Any other failure (a crash, a generator bug the checker rejects)
    # would print a figure for work that was never done.
    if [ "$st" -ne 0 ] &&
       ! grep -q 'the generated code would be larger than' "$work/err"; then
        echo "compile_mem $shape: actorc failed (status $st):" >&2
        cat "$work/err" >&2
        exit 1
    fi
    secs=$(tail -n 1 "$work/time" | cut -d' ' -f1)
    kb=$(tail -n 1 "$work/time" | cut -d' ' -f2)
    awk -v s="$shape" -v b="$bytes" -v t="$secs" -v k="$kb" -v st="$st" \
        'BEGIN { printf "compile_mem %s %d %s %d %.1f%s\n", s, b, t, k,
                 k * 1024 / b, st == 0 ? "" : " (refused: status " st ")" }'
done
