#!/usr/bin/env bash
# Checks for what the build needs; installs it with apt when run as root on
# Debian, otherwise names the missing packages and fails.
set -u

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_pc() { pkg-config --exists "$1" 2>/dev/null || missing+=("$2"); }

need_cmd cc gcc
need_cmd make make
need_cmd pkg-config pkg-config
need_cmd re2c re2c
need_cmd lemon lemon
need_pc libsodium libsodium-dev
need_pc libzmq libzmq3-dev
need_pc criterion libcriterion-dev
# The test suite also compiles generated code as C++ and with clang.
need_cmd g++ g++
need_cmd clang clang
# graphviz: dot renders actorc --graph's diagrams (make graphs).
need_cmd dot graphviz
# mandoc: the man-page lint in make test (docs/man/man.mk).
need_cmd mandoc mandoc
# The user-path tests (make test-user) build with CMake and Meson too.
need_cmd cmake cmake
need_cmd ninja ninja-build
need_cmd meson meson
# --bench (make bench-compare): also the benchmark peers, Erlang/OTP and the
# C++ Actor Framework, and gnuplot for the chart.
if [ "${1:-}" = --bench ]; then
    need_cmd erl erlang-nox
    need_cmd erlc erlang-nox
    [ -f /usr/include/caf/all.hpp ] || missing+=(libcaf-dev)
    need_cmd gnuplot gnuplot-nox
fi

# --netns (.ci/run, make test-netns): ip and tc for the network namespaces.
if [ "${1:-}" = --netns ]; then
    need_cmd ip iproute2
    need_cmd tc iproute2
fi

# --fuzz (.ci/run, make fuzz-run): clang's libFuzzer runtime, which Debian
# packages apart from clang (libclang-rt-N-dev, N clang's major version).
if [ "${1:-}" = --fuzz ] && command -v clang >/dev/null 2>&1; then
    probe=$(mktemp -d)
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
        >"$probe/probe.c"
    if ! clang -fsanitize=fuzzer "$probe/probe.c" -o "$probe/probe" >/dev/null 2>&1; then
        missing+=("libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev")
    fi
    rm -rf "$probe"
fi

[ ${#missing[@]} -eq 0 ] && exit 0

# pkg-config itself may be what is missing: then the .pc checks above failed
# for that reason alone, and installing pkg-config plus the -dev packages
# named is right either way.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
        echo "deps: apt-get failed to install: ${missing[*]}" >&2
        exit 1
    }
    exit 0
fi
echo "deps: missing packages: ${missing[*]}" >&2
echo "deps: install them with: sudo apt-get install ${missing[*]}" >&2
exit 1
