#!/usr/bin/env bash
# check-options.sh ACTORC PAGE — the options `ACTORC --help` lists and the
# options PAGE documents (its `.It Fl ...` items) must be the same set, so
# that neither the page nor the help can fall behind the other.
#
# The help's option lines are the ones main.c's usage() indents by two
# spaces and starts with '-' ("  -h, --help   ..."); the page's are the
# item lines of its option list (".It Fl h , Fl \-help").
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 ACTORC PAGE" >&2; exit 2; }
bin=$1 page=$2

help_opts=$("$bin" --help |
    sed -n 's/^  \(-[^ ,]*\(, -[^ ,]*\)*\).*/\1/p' | tr -d ' ' | tr ',' '\n' | sort -u)
# Each "Fl X" of an item line is the option -X; mdoc writes a literal
# hyphen as \- (so ".Fl \-help" is --help), and "Fl W Ns Ar name" is the
# help's -W<name>.
page_opts=$(sed -n 's/^\.It \(Fl .*\)/\1/p' "$page" |
    sed 's/Fl \([^ ]*\) Ns Ar \([^ ]*\)/Fl \1<\2>/g' |
    awk '{ for (i = 1; i < NF; i++) if ($i == "Fl") print "-" $(i + 1) }' |
    sed 's/\\-/-/g' | sort -u)

# An empty side means the format changed under this script: say so rather
# than pass by comparing nothing.
[ -n "$help_opts" ] || { echo "$0: no options found in '$bin --help'" >&2; exit 1; }
[ -n "$page_opts" ] || { echo "$0: no .It Fl items found in $page" >&2; exit 1; }

missing=$(comm -23 <(echo "$help_opts") <(echo "$page_opts"))
extra=$(comm -13 <(echo "$help_opts") <(echo "$page_opts"))
[ -z "$missing" ] || echo "$page: missing options that --help lists:" $missing >&2
[ -z "$extra" ] || echo "$page: documents options --help does not list:" $extra >&2
[ -z "$missing$extra" ] || exit 1
echo "man: $page documents the $(echo "$help_opts" | wc -l) options '$bin --help' lists"
