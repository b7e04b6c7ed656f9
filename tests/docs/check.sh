#!/usr/bin/env bash
# check.sh BUILD CC CFLAGS LIBS FILE.md... — every fenced block of the docs
# is checked, the way rustdoc runs doctests: C compiled (and whole programs
# linked and run), IDL run through BUILD/actorc (and its output compiled),
# shell run, outputs compared with what the block before them printed. The
# info string of each block says how (tests/docs/README.md, the convention);
# a block without one, or with one the checker does not know, fails.
#
#   BUILD   the build folder: BUILD/actorc, BUILD/actorc-keygen, BUILD/libactorc.a
#   CC      the C compiler; CFLAGS go to every compile and link (sanitizers)
#   LIBS    what a program linked with libactorc.a needs besides it
#
# Prints one line per wrong block (FILE:LINE: why, then the details), then
# one summary line; exits 1 if any block is wrong. A file that does not
# exist is passed over (docs/BUILD.md may not be written yet).
set -u
usage='usage: check.sh BUILD CC CFLAGS LIBS FILE.md...'
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?$usage}" && pwd)
cc=${2:?$usage}
cflags=${3-}
libs=${4-}
shift 4 || { echo "$usage" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every compile uses the same strict flags as the project's own code;
# fragments alone may leave a variable unused (they show a call, not a
# whole function). -D_GNU_SOURCE: the project's own setting (usleep, ...).
strict="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $cflags -I$root/runtime/include"
fragment_flags="-Wno-unused-variable -Wno-unused-but-set-variable"

failed=0
n_actor=0 n_c=0 n_sh=0 n_norun=0 n_output=0 n_text=0 n_user=0 n_dot=0

# fail WHY [DETAILS-FILE...]: one wrong block, with what shows why.
fail() {
    local why=$1
    shift
    printf '%s:%s: %s\n' "$doc" "$line" "$why"
    local f
    for f in "$@"; do
        [ -s "$f" ] && sed 's/^/    /' "$f"
    done
    failed=$((failed + 1))
}

# The stand-in modules of C fragments (fragment.h includes their headers).
mkdir -p "$tmp/standin"
for f in "$here"/standin/*.actor; do
    if ! "$build/actorc" -o "$tmp/standin" "$f" > "$tmp/standin.err" 2>&1; then
        cat "$tmp/standin.err"
        echo "docs: the stand-in ${f#"$root"/} does not compile"
        exit 1
    fi
done

# ---- actor: IDL ------------------------------------------------------------------------

# The module an actor block wraps `block` in (top, in=NAME): "module doc;",
# the prelude's declarations the block does not make itself, then the block
# (inside `actor NAME { }` for in=NAME).
wrap_actor() {
    local block=$1 inside=$2 decl name
    echo "module doc;"
    while IFS= read -r decl; do
        case "$decl" in '' | //*) continue ;; esac
        name=$(awk '{ print $2 }' <<<"$decl")
        [ "$name" = "$inside" ] && continue
        grep -Eq "(^|[^A-Za-z0-9_])(struct|enum|actor)[[:space:]]+$name([^A-Za-z0-9_]|\$)" "$block" && continue
        echo "$decl"
    done < "$here/prelude.actor"
    if [ -n "$inside" ]; then
        echo "actor $inside {"
        cat "$block"
        echo "}"
    else
        cat "$block"
    fi
}

check_actor() {
    local block=$1 mode=complete inside='' fails=0 name='' attr
    for attr in $attrs; do
        case "$attr" in
        top) mode=top ;;
        in=?*) mode=in; inside=${attr#in=} ;;
        fails) fails=1 ;;
        file=?*.actor) name=${attr#file=} ;;
        *) fail "actor: unknown attribute '$attr'"; return ;;
        esac
    done
    local dir=$work/b$line
    mkdir -p "$dir/gen"
    if [ -z "$name" ]; then
        name=$(sed -n 's/^[[:space:]]*module[[:space:]]\{1,\}\([A-Za-z0-9_]*\)[[:space:]]*;.*/\1/p' "$block" | head -1)
        name=${name:-doc}.actor
        [ $mode = complete ] || name=doc.actor
    fi
    # Wrapped blocks are checked with -w: the stand-ins around them make
    # warnings (an unused prelude actor) that say nothing about the block.
    local w=''
    if [ $mode = complete ]; then
        cp "$block" "$dir/$name"
    else
        wrap_actor "$block" "$inside" > "$dir/$name"
        w=-w
    fi
    (cd "$dir" && "$build/actorc" $w -I "$here/imports" -o gen "$name") > "$dir/out" 2> "$dir/err"
    local rc=$?
    last_out=$dir/out last_err=$dir/err
    if [ $fails = 1 ]; then
        [ $rc = 1 ] || fail "actor fails: actorc accepted the block (exit $rc)" "$dir/err"
        return
    fi
    if [ $rc != 0 ]; then
        [ $mode = complete ] || nl -ba "$dir/$name" > "$dir/wrapped"
        fail "actor: actorc rejects the block (exit $rc)" "$dir/err" "$dir/wrapped"
        return
    fi
    if [ -s "$dir/err" ]; then
        fail "actor: actorc warns about the block" "$dir/err"
        return
    fi
    # The files it imports are generated beside it, as actorc.mk would.
    local imp
    for imp in $(sed -n 's/^[[:space:]]*import[[:space:]]*"\([^"]*\)".*/\1/p' "$dir/$name"); do
        mkdir -p "$dir/gen/$(dirname "$imp")"
        "$build/actorc" -w -I "$here/imports" -o "$dir/gen/$(dirname "$imp")" "$here/imports/$imp" \
            >> "$dir/err" 2>&1 || { fail "actor: no stand-in for import \"$imp\"" "$dir/err"; return; }
    done
    local src=$dir/gen/${name%.actor}.actor.c
    if ! $cc $strict -Wpedantic -I"$dir/gen" -c "$src" -o "$dir/gen.o" > "$dir/cc" 2>&1; then
        fail "actor: the generated C does not compile" "$dir/cc"
        return
    fi
    if [ $mode = complete ]; then
        tie_dir=$dir/gen tie_obj=$dir/gen.o tie_header=${name}.h
    fi
}

# ---- c: C ------------------------------------------------------------------------------

check_c() {
    local block=$1 mode='' norun=0 attr
    for attr in $attrs; do
        case "$attr" in
        program | unit | fragment)
            [ -z "$mode" ] || { fail "c: more than one of program, unit, fragment"; return; }
            mode=$attr ;;
        norun) norun=1 ;;
        *) fail "c: unknown attribute '$attr'"; return ;;
        esac
    done
    [ -n "$mode" ] || { fail "c: say program, unit or fragment"; return; }
    [ $norun = 0 ] || [ $mode = program ] || { fail "c: norun is for programs"; return; }
    local dir=$work/b$line flags=$strict
    mkdir -p "$dir"
    if [ $mode = fragment ]; then
        awk -v file="$doc" -v line="$line" -f "$here/fragment.awk" "$block" > "$dir/block.c"
        flags="$flags $fragment_flags -I$here"
        if [ -n "$tie_dir" ]; then
            flags="$flags -I$tie_dir -include $tie_header"
        else
            flags="$flags -I$tmp/standin -DDOCS_STANDIN"
        fi
    else
        { printf '#line %d "%s"\n' "$line" "$doc"; cat "$block"; } > "$dir/block.c"
        [ -z "$tie_dir" ] || flags="$flags -I$tie_dir"
    fi
    if ! $cc $flags -c "$dir/block.c" -o "$dir/block.o" > "$dir/cc" 2>&1; then
        fail "c $mode: does not compile" "$dir/cc"
        return
    fi
    [ $mode = program ] || return
    if ! $cc $cflags -o "$dir/prog" "$dir/block.o" ${tie_obj:+"$tie_obj"} "$build/libactorc.a" \
            $libs -pthread > "$dir/cc" 2>&1; then
        fail "c program: does not link" "$dir/cc"
        return
    fi
    [ $norun = 0 ] || return
    (cd "$work/sh" && timeout 60 "$dir/prog") > "$dir/out" 2> "$dir/err"
    local rc=$?
    last_out=$dir/out last_err=$dir/err
    [ $rc = 0 ] || fail "c program: exits with $rc" "$dir/out" "$dir/err"
}

# ---- sh: shell -------------------------------------------------------------------------

# Shell blocks of one file run one after the other in one folder of their
# own, with BUILD first on PATH (actorc, actorc-keygen as installed).
check_sh() {
    local block=$1 norun=0 attr
    for attr in $attrs; do
        case "$attr" in
        norun) norun=1 ;;
        *) fail "sh: unknown attribute '$attr'"; return ;;
        esac
    done
    local dir=$work/b$line
    mkdir -p "$dir"
    if [ $norun = 1 ]; then
        n_norun=$((n_norun + 1))
        bash -n "$block" > "$dir/err" 2>&1 || fail "sh norun: not valid shell" "$dir/err"
        return
    fi
    (cd "$work/sh" && PATH="$build:$PATH" timeout 120 bash -e -o pipefail "$block") \
        > "$dir/out" 2> "$dir/err"
    local rc=$?
    last_out=$dir/out last_err=$dir/err
    [ $rc = 0 ] || fail "sh: exits with $rc" "$dir/out" "$dir/err"
}

# ---- text: output, diagrams ------------------------------------------------------------

# `text stdout` / `text stderr` is what the block just before printed.
check_text() {
    local block=$1 stream='' attr
    for attr in $attrs; do
        case "$attr" in
        stdout | stderr) [ -z "$stream" ] || { fail "text: stdout or stderr, not both"; return; }
            stream=$attr ;;
        *) fail "text: unknown attribute '$attr'"; return ;;
        esac
    done
    if [ -z "$stream" ]; then
        n_text=$((n_text + 1))
        return
    fi
    n_output=$((n_output + 1))
    local got=$prev_out
    [ $stream = stdout ] || got=$prev_err
    if [ -z "$got" ]; then
        fail "text $stream: the block before it was not run"
        return
    fi
    if ! diff -u --label "the block ($stream expected)" --label "what it printed" \
            "$block" "$got" > "$work/diff"; then
        fail "text $stream: not what the block before it printed" "$work/diff"
    fi
}

# ---- dot: a diagram actorc --graph draws -------------------------------------------------

# `dot graph=FILE.actor`: the block is what `actorc --graph --stdout` prints
# for FILE.actor (relative to the Markdown file's folder) but its banner
# line, byte for byte, so
# that a diagram in a README cannot fall behind the IDL it shows.
check_dot() {
    local block=$1 src='' attr
    for attr in $attrs; do
        case "$attr" in
        graph=?*.actor) src=${attr#graph=} ;;
        *) fail "dot: unknown attribute '$attr'"; return ;;
        esac
    done
    [ -n "$src" ] || { fail "dot: say graph=FILE.actor, the file it draws (tests/docs/README.md)"; return; }
    local dir=$work/b$line path
    path=$(dirname "$doc")/$src
    mkdir -p "$dir"
    if ! "$build/actorc" --graph --stdout "$path" > "$dir/full" 2> "$dir/err"; then
        fail "dot graph=$src: actorc --graph fails on $path" "$dir/err"
        return
    fi
    # Less the generated-file banner: the README is not a generated file,
    # and the diagram does not change with actorc's version.
    sed '1{/^\/\* generated by actorc /d;}' "$dir/full" > "$dir/out"
    if ! diff -u --label "the block" --label "actorc --graph --stdout $path" \
            "$block" "$dir/out" > "$dir/diff"; then
        fail "dot graph=$src: the diagram is out of date with $path: run 'make update-graphs' to rewrite it" "$dir/diff"
    fi
}

# ---- the files ------------------------------------------------------------------------

files=0
for doc in "$@"; do
    [ -e "$doc" ] || continue
    files=$((files + 1))
    work=$tmp/f$files
    mkdir -p "$work/blocks" "$work/sh"
    awk -v out="$work/blocks" -f "$here/extract.awk" "$doc"
    tie_dir='' tie_obj='' tie_header=''
    last_out='' last_err=''
    while IFS=$'\t' read -r n line info; do
        if [ "$n" = '!' ]; then
            fail "$info"
            continue
        fi
        prev_out=$last_out prev_err=$last_err
        last_out='' last_err=''
        read -r kind attrs <<<"$info"
        block=$work/blocks/$n
        # `user`: a block of a user's project (docs/BUILD.md) that tests/user
        # extracts and runs itself, in any language.
        if [ -n "$kind" ] && [[ " $attrs " == *" user "* ]]; then
            n_user=$((n_user + 1))
            continue
        fi
        case "$kind" in
        actor) n_actor=$((n_actor + 1)); check_actor "$block" ;;
        c) n_c=$((n_c + 1)); check_c "$block" ;;
        sh) n_sh=$((n_sh + 1)); check_sh "$block" ;;
        text) check_text "$block" ;;
        dot) n_dot=$((n_dot + 1)); check_dot "$block" ;;
        make | cmake | meson) n_user=$((n_user + 1)) ;;   # tests/user builds with them
        '') fail "a block without an info string: say what it is (tests/docs/README.md)" ;;
        *) fail "unknown info string '$info' (tests/docs/README.md)" ;;
        esac
    done < "$work/blocks/manifest"
done

checked=$((n_actor + n_c + n_sh + n_output + n_dot))
printf 'docs: %d blocks checked (%d actor, %d c, %d sh of which %d not run, %d output, %d dot), ' \
    "$checked" "$n_actor" "$n_c" "$n_sh" "$n_norun" "$n_output" "$n_dot"
printf '%d text, %d left to tests/user, in %d files; %d wrong\n' "$n_text" "$n_user" "$files" "$failed"
[ $failed = 0 ]
