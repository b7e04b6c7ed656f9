#!/usr/bin/env bash
# Runs one Erlang peer benchmark:  run.sh EBIN_DIR MODULE ARGS...
# (the modules are compiled with erlc into EBIN_DIR, e.g. build/bench/peers/erlang).
#
# Flags: -noshell; for skynet and spawn only, +P 2097152 (skynet creates 1,111,111
# processes at depth 6, more than the default limit of 262,144 could hold
# at once; spawn's spawner can run ahead of its children's ends, up to all
# 1,000,000 alive; the larger process table costs ~20 MB of RSS, so the others keep
# the default); and, when ERL_WORKERS or else AC_WORKERS is set, +S N:N so
# the VM runs as many schedulers as actorc has workers (default: one per
# core, as actorc). ERL_FLAGS_EXTRA adds flags, e.g. "+sbt db" to bind
# schedulers to cores (off by default: the machines are shared).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 EBIN_DIR MODULE ARGS..." >&2; exit 2; }
ebin=$1 mod=$2
shift 2
flags=()
case $mod in skynet | spawn) flags+=(+P 2097152) ;; esac
w=${ERL_WORKERS:-${AC_WORKERS:-}}
[ -n "$w" ] && flags+=(+S "$w:$w")
# shellcheck disable=SC2086
exec erl -noshell "${flags[@]}" ${ERL_FLAGS_EXTRA:-} \
    -pa "$ebin" -run "$mod" main "$@"
