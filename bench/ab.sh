#!/bin/sh
# ab.sh — before/after: runs the benchmarks of two or more builds
# interleaved (A B A B ...), so that every build shares the same load, and
# prints each one's median per benchmark, the ratio to the first build's
# median and the median of the per-run ratios (run j against run j of the
# first build, made moments apart: steadier when the load drifts).
#
#   bench/ab.sh [-r REPS] [-w WORKERS] DIR... 
#
# Each DIR is a build's bench directory (e.g. build/bench, or
# /tmp/base/build/bench for a `git archive` export built with
# `make bench-build`). AB_BENCHES overrides the list (one "name args" per
# line). The raw lines go to stderr. The machines are shared: compare only
# ratios from one run, and note the load (uptime, printed first and last).
set -eu
reps=3
workers=
while [ $# -gt 0 ]; do
    case "$1" in
    -r) reps=$2; shift 2 ;;
    -w) workers=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: $0 [-r REPS] [-w WORKERS] DIR..." >&2; exit 2; }
benches=${AB_BENCHES:-"skynet 6
ring 1000 10000000
pingpong 1000000
ring_multi 1000 1000 10000000
pairs 1000 10000
fanin 100 100000"}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
uptime >&2
r=1
while [ $r -le "$reps" ]; do
    echo "$benches" | while read -r name args; do
        [ -n "$name" ] || continue
        i=0
        for dir in "$@"; do
            # Only the benchmark's own line: a program may print '#' lines
            # too (inject's handler run), which are not its measurement.
            if [ -n "$workers" ]; then
                line=$(AC_WORKERS=$workers "$dir/$name" $args 2>/dev/null | awk -v b="$name" '$1 == b')
            else
                line=$("$dir/$name" $args 2>/dev/null | awk -v b="$name" '$1 == b')
            fi
            echo "$i $line" >&2
            echo "$i $line" >>"$out"
            i=$((i + 1))
        done
    done
    r=$((r + 1))
done
uptime >&2
# "i name params seconds msgs_per_sec rss": medians of msgs/s (skynet: of
# seconds, and the ratio is A's seconds / B's), per build and benchmark.
awk -v n=$# '
{ k = $2 " " $3; v = ($2 == "skynet") ? $4 : $5; vals[k, $1] = vals[k, $1] " " v;
  c = ++cnt[k, $1]; one[k, $1, c] = v;
  if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
  rss[k, $1] = rss[k, $1] " " $6 }
function median(s,    a, m, i, j, t) {
  m = split(s, a, " ");
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
END {
  for (x = 1; x <= nk; x++) {
    k = order[x]; line = sprintf("%-28s", k);
    base = median(vals[k, 0]);
    for (i = 0; i < n; i++) {
      m = median(vals[k, i]);
      r = (k ~ /^skynet/) ? base / m : m / base;
      # the median of the per-run ratios (run j of this build against run j
      # of the first, made moments apart): steadier when the load drifts
      pr = "";
      for (j = 1; j <= cnt[k, i] && j <= cnt[k, 0]; j++)
        pr = pr " " ((k ~ /^skynet/) ? one[k, 0, j] / one[k, i, j] : one[k, i, j] / one[k, 0, j]);
      unit = (k ~ /^skynet/) ? "s" : "M/s";
      line = line sprintf("  [%d] %8.3f %s x%.2f (paired x%.2f) rss %d", i, (k ~ /^skynet/) ? m : m / 1e6, unit, r, median(pr), median(rss[k, i]));
    }
    print line
  }
}' "$out"
