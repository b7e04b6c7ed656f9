#!/usr/bin/env bash
# update-graphs.sh ACTORC FILE.md... — rewrites each ```dot graph=X.actor
# block of the Markdown files with what `ACTORC --graph --stdout` prints
# for X.actor (relative to the Markdown file's folder): `make
# update-graphs`, after an IDL change that tests/docs/check.sh reports as
# a diagram out of date. A file changes only when one of its diagrams did.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 ACTORC FILE.md..." >&2; exit 2; }
actorc=$1
shift
for doc in "$@"; do
    dir=$(dirname "$doc")
    tmp=$(mktemp "$doc.XXXXXX")
    # A block's old text is dropped and actorc's output put in its place;
    # a failing actorc fails the whole run, leaving the file as it was.
    if ! awk -v actorc="$actorc" -v dir="$dir" '
        skip && /^```$/ { skip = 0; print; next }
        skip { next }
        /^```dot graph=[^ ]+\.actor$/ {
            print
            src = substr($0, length("```dot graph=") + 1)
            cmd = "\"" actorc "\" --graph --stdout \"" dir "/" src "\""
            while ((rc = (cmd | getline l)) > 0)
                print l
            if (rc < 0 || close(cmd) != 0) { print "update-graphs: " cmd " failed" > "/dev/stderr"; exit 1 }
            skip = 1
            next
        }
        { print }' "$doc" > "$tmp"; then
        rm -f "$tmp"
        exit 1
    fi
    if cmp -s "$doc" "$tmp"; then
        rm -f "$tmp"
    else
        chmod --reference="$doc" "$tmp"
        mv "$tmp" "$doc"
        echo "update-graphs: rewrote the diagrams of $doc"
    fi
done
