#!/usr/bin/env bash
# The new user's path (docs/BUILD.md), on an installed actorc: for each
# build system named, a program is built from an empty folder holding the
# sources of tests/user/project and the build file exactly as docs/BUILD.md
# gives it, then
#   1. built one job at a time, run: it must print the right balance;
#   2. built again: nothing may happen;
#   3. money.actor (imported by bank.actor) gets a field before the one the
#      program prints, and is rebuilt and run: a stale object would read
#      the old layout (the balance comes out wrong) and a stale main.o
#      would print the old size of Money;
#   4. built from another empty folder with many jobs, run.
#
#   usage: tests/user/run.sh PREFIX WORKDIR WAY...
#   (WAY: make, make-lto, cmake-ninja, cmake-make, cmake-static, meson)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$1 work=$2
shift 2
project=$root/tests/user/project
doc=$root/docs/BUILD.md

# A user's shell, not make's: no jobserver, no make variables, only the
# installed actorc (found through pkg-config, as docs/BUILD.md says).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export CMAKE_PREFIX_PATH=$prefix

fail() { echo "user: $*" >&2; exit 1; }

# The block of docs/BUILD.md that follows the line <!-- user-test: NAME -->.
doc_block() {
    awk -v name="$1" '
        $0 == "<!-- user-test: " name " -->" { want = 1; next }
        want && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$doc"
}

# Every build file docs/BUILD.md shows is one a way below builds from: a
# block of make, cmake or meson there follows a marker, and each marker's
# block is taken by some way's setup.
markers=$(sed -n 's/^<!-- user-test: \(.*\) -->$/\1/p' "$doc")
blocks=$(grep -cE '^```(make|cmake|meson)( |$)' "$doc")
[ "$blocks" = "$(echo "$markers" | grep -c .)" ] || fail "$doc: $blocks build-file blocks but $(echo "$markers" | grep -c .) user-test markers"
for m in $markers; do
    grep -q "doc_block $m" "$0" || fail "$doc: no way builds from the $m block"
done

# $1 folder; the project's sources and the build files of way $2.
new_folder() {
    rm -rf "$1"
    mkdir -p "$1"
    cp "$project"/*.actor "$project"/*.c "$1"/
    "setup_$2" "$1"
}

expect_run() {   # folder, way, expected size of Money
    local out
    out=$("$1/$("program_$2")") || fail "$2: the program failed in $1"
    grep -qx 'balance 500' <<<"$out" || fail "$2: wrong balance after a rebuild in $1: $out"
    grep -qx "money is $3 bytes" <<<"$out" || fail "$2: stale object in $1 (expected $3 bytes): $out"
}

# ---- make (docs/BUILD.md "Make") ----
setup_make() { doc_block Makefile > "$1/Makefile"; [ -s "$1/Makefile" ] || fail "no Makefile block in $doc"; }
build_make() { make --no-print-directory -C "$1" -j"$2" >"$1/build.log" 2>&1 || { cat "$1/build.log"; fail "make -j$2 failed in $1"; }; }
noop_make() { make --no-print-directory -C "$1" -q; }
program_make() { echo app; }

# ---- the same Makefile, with the static link-time-optimised build ----
setup_make-lto() { setup_make "$1"; }
build_make-lto() {
    make --no-print-directory -C "$1" -j"$2" ACTORC_STATIC_LTO=1 >"$1/build.log" 2>&1 \
        || { cat "$1/build.log"; fail "make -j$2 ACTORC_STATIC_LTO=1 failed in $1"; }
    ! readelf -d "$1/app" | grep -q 'NEEDED.*libactorc' || fail "ACTORC_STATIC_LTO=1 linked libactorc.so"
    grep -q -- '-flto' "$1/build.log" || fail "ACTORC_STATIC_LTO=1 compiled without -flto"
}
noop_make-lto() { make --no-print-directory -C "$1" -q ACTORC_STATIC_LTO=1; }
program_make-lto() { echo app; }

# ---- CMake (docs/BUILD.md "CMake"), configured by the first build ----
setup_cmake() { doc_block CMakeLists.txt > "$1/CMakeLists.txt"; [ -s "$1/CMakeLists.txt" ] || fail "no CMakeLists.txt block in $doc"; }
cmake_build() {   # folder, jobs, generator
    if [ ! -f "$1/build/CMakeCache.txt" ]; then
        cmake -S "$1" -B "$1/build" -G "$3" >"$1/configure.log" 2>&1 \
            || { cat "$1/configure.log"; fail "cmake -G '$3' failed in $1"; }
    fi
    cmake --build "$1/build" -j "$2" >"$1/build.log" 2>&1 || { cat "$1/build.log"; fail "cmake --build -j $2 failed in $1"; }
}
ninja_noop() { ninja -C "$1" -n | grep -qx 'ninja: no work to do.'; }

setup_cmake-ninja() { setup_cmake "$1"; }
build_cmake-ninja() { cmake_build "$1" "$2" Ninja; }
noop_cmake-ninja() { ninja_noop "$1/build"; }
program_cmake-ninja() { echo build/app; }

# CMake's makefiles start from phony targets, so `make -q` never says
# "up to date": a build that does nothing prints no step.
setup_cmake-make() { setup_cmake "$1"; }
build_cmake-make() { cmake_build "$1" "$2" 'Unix Makefiles'; }
noop_cmake-make() {
    local out
    out=$(cmake --build "$1/build" 2>&1) || { echo "$out"; return 1; }
    ! grep -E 'Building|Generating|Linking' <<<"$out"
}
program_cmake-make() { echo build/app; }

# ---- the same CMakeLists.txt with STATIC, on a copy of the prefix made
# elsewhere: the package must find its files from where it lies ----
moved=$work/moved-prefix
setup_cmake-static() {
    [ -d "$moved" ] || cp -a "$prefix" "$moved"
    setup_cmake "$1"
    sed -i 's/^actorc_generate(TARGET app /&STATIC /' "$1/CMakeLists.txt"
    grep -q 'STATIC SOURCES' "$1/CMakeLists.txt" || fail "cmake-static: no actorc_generate(TARGET app ...) line to add STATIC to"
}
build_cmake-static() {
    CMAKE_PREFIX_PATH=$moved cmake_build "$1" "$2" Ninja
    grep -qx "actorc_DIR:PATH=$moved/lib/cmake/actorc" "$1/build/CMakeCache.txt" \
        || fail "cmake-static: find_package did not take the moved prefix"
    grep -q "$moved/bin/actorc " "$1/build/build.ninja" || fail "cmake-static: actorc is not the moved prefix's"
    ! readelf -d "$1/build/app" | grep -q 'NEEDED.*libactorc' || fail "actorc_generate(... STATIC) linked libactorc.so"
}
noop_cmake-static() { ninja_noop "$1/build"; }
program_cmake-static() { echo build/app; }

# ---- Meson (docs/BUILD.md "Meson"), set up by the first build ----
setup_meson() { doc_block meson.build > "$1/meson.build"; [ -s "$1/meson.build" ] || fail "no meson.build block in $doc"; }
build_meson() {
    if [ ! -d "$1/build" ]; then
        meson setup "$1/build" "$1" >"$1/setup.log" 2>&1 || { cat "$1/setup.log"; fail "meson setup failed in $1"; }
    fi
    meson compile -C "$1/build" -j "$2" >"$1/build.log" 2>&1 || { cat "$1/build.log"; fail "meson compile -j $2 failed in $1"; }
}
noop_meson() { ninja_noop "$1/build"; }
program_meson() { echo build/app; }

for way in "$@"; do
    dir=$work/$way
    new_folder "$dir" "$way"
    "build_$way" "$dir" 1
    expect_run "$dir" "$way" 8
    "noop_$way" "$dir" || fail "$way: a second build in $dir was not a no-op"
    sed -i 's/^    i64 cents;$/    i64 fee;\n    i64 cents;/' "$dir/money.actor"
    grep -q 'i64 fee;' "$dir/money.actor" || fail "the edit of money.actor did not apply"
    "build_$way" "$dir" 1
    expect_run "$dir" "$way" 16
    "noop_$way" "$dir" || fail "$way: the build after the edit left work undone in $dir"

    new_folder "$dir-parallel" "$way"
    "build_$way" "$dir-parallel" 8
    expect_run "$dir-parallel" "$way" 8
    echo "user: $way: built from an empty folder at -j1 and -j8, no-op rebuild, rebuilt after an imported .actor changed"
done
