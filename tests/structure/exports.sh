#!/usr/bin/env bash
# exports.sh HEADER LIBRARY — the shared library exports exactly the API
# the public header declares (docs/BUILD.md "Installing"): every function
# actorc.h declares is exported (its static inline ones aside), and nothing
# else is — the runtime's ac__ internals stay hidden — and the soname is
# libactorc.so.AC_ABI_VERSION. Prints one line per difference, exits 1 if any.
set -u
header=${1:?usage: exports.sh HEADER LIBRARY}
lib=${2:?usage: exports.sh HEADER LIBRARY}
bad=0
fail() { printf 'exports: %s\n' "$*"; bad=1; }

declared=$(grep -oE '\bac_[a-z0-9_]+[[:space:]]*\(' "$header" | tr -d ' (' | sort -u)
inline=$(grep -oE 'static inline [^(]*\bac_[a-z0-9_]+\(' "$header" | grep -oE 'ac_[a-z0-9_]+\($' | tr -d '(' | sort -u)
declared=$(comm -23 <(echo "$declared") <(echo "$inline"))
# A sanitizer's hooks (node.c's __tsan_default_suppressions under TSan)
# are the sanitizer's interface, not ours.
exported=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | grep -v '^__\(tsan\|asan\|ubsan\|lsan\)_' | sort -u)

while read -r s; do [ -n "$s" ] && fail "$lib exports $s, which $header does not declare"; done \
    < <(comm -13 <(echo "$declared") <(echo "$exported"))
while read -r s; do [ -n "$s" ] && fail "$header declares $s, which $lib does not export"; done \
    < <(comm -23 <(echo "$declared") <(echo "$exported"))

abi=$(sed -n 's/^#define AC_ABI_VERSION \([0-9]*\)/\1/p' "$header")
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libactorc.so.$abi" ] || fail "soname is '$soname', not libactorc.so.$abi (AC_ABI_VERSION)"

[ $bad = 0 ] && echo "exports: $(echo "$exported" | wc -l) symbols, all of them declared in $(basename "$header"); soname $soname"
exit $bad
