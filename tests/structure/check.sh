#!/usr/bin/env bash
# check.sh RUNTIME OBJ — the runtime's layout keeps its dependencies one way
# (runtime/README.md, "Layout"): node -> services -> core -> lib.
#
#   RUNTIME  the runtime's source folder (core/, services/, node/, lib/, include/)
#   OBJ      where its objects were built (OBJ/core/*.o, OBJ/services/*.o, ...)
#
# Checked from the sources, by what each file includes:
#   - core/ includes nothing of services/ or node/;
#   - services/ include of core/ only core/service.h, the service
#     interface, and core/transport.h, the one to other nodes; nothing of
#     node/;
#   - node/ includes of core/ only those two, and of services/ only
#     services/services.h (the table, for its row's state);
#   - lib/ includes nothing of core/, services/ or node/;
#   - no file of services/ or node/ touches the owner's byte of an actor
#     (`->oflags`, `.oflags`): the core alone writes it, a service asks
#     through the functions of core/actor.h (ac__mark_asker, ...).
# Checked from the objects, by what each one refers to (so a call through a
# macro or a prototype written by hand is caught as well as an include):
#   - no core object uses a symbol a services or node object defines, but
#     the table of services itself (ac__service_table, ac__service_count):
#     the core reaches the node only through core/transport.h;
#   - no services object uses a symbol a node object defines, but the
#     node's row of the table: the services reach other nodes only through
#     the transport.
# Prints one line per violation and exits 1 if there is any.
set -u
runtime=${1:?usage: check.sh RUNTIME OBJ}
obj=${2:?usage: check.sh RUNTIME OBJ}
runtime=$(realpath -m "$runtime")
bad=0
fail() { printf 'structure: %s\n' "$*"; bad=1; }

# The file a quoted include names, as the compiler finds it: beside the
# including file, else in include/.
resolve() {
    local dir=$1 name=$2
    if [ -e "$dir/$name" ]; then realpath -m "$dir/$name"; else realpath -m "$runtime/include/$name"; fi
}

for layer in core services node lib; do
    for f in "$runtime/$layer"/*.[ch]; do
        [ -e "$f" ] || continue
        rel=${f#"$runtime"/}
        while IFS= read -r name; do
            target=$(resolve "$(dirname "$f")" "$name")
            trel=${target#"$runtime"/}
            case "$layer:$trel" in
            core:services/* | core:node/*) fail "$rel includes $trel: the core names no service and no transport" ;;
            services:core/service.h | services:core/transport.h) ;;
            services:core/*) fail "$rel includes $trel: a service reaches the core only through core/service.h and core/transport.h" ;;
            services:node/*) fail "$rel includes $trel: a service reaches other nodes only through core/transport.h" ;;
            node:core/service.h | node:core/transport.h | node:services/services.h) ;;
            node:core/* | node:services/*) fail "$rel includes $trel: the node reaches the runtime only through core/service.h and core/transport.h" ;;
            lib:core/* | lib:services/* | lib:node/*) fail "$rel includes $trel: lib/ is leaf code" ;;
            esac
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
done

for f in "$runtime"/services/*.[ch] "$runtime"/node/*.[ch]; do
    [ -e "$f" ] || continue
    while IFS=: read -r line _; do
        fail "${f#"$runtime"/}:$line touches the owner's byte (oflags): only the core does"
    done < <(grep -nE '(->|\.)oflags\b' "$f")
done
objs_core=("$obj"/core/*.o)
objs_services=("$obj"/services/*.o)
objs_node=("$obj"/node/*.o)
if [ ! -e "${objs_core[0]}" ] || [ ! -e "${objs_services[0]}" ] || [ ! -e "${objs_node[0]}" ]; then
    fail "no objects under $obj/core, $obj/services and $obj/node: build the runtime first"
    exit 1
fi
defined_by() { nm --defined-only -g "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
# $1: what the users are; $2: what the definers are; then the symbols
# defined, one a line, and the objects that must not use them.
forbid() {
    local users=$1 definers=$2 defined=$3
    shift 3
    for o in "$@"; do
        used=$(nm --undefined-only -g "$o" 2>/dev/null | awk '{ print $NF }' | sort -u)
        for sym in $(comm -12 <(printf '%s\n' "$defined") <(printf '%s\n' "$used")); do
            fail "${o##*/} uses $sym, which $definers defines: $users"
        done
    done
}
# Every symbol the services and the node define, but the table the core walks.
defined=$(defined_by "${objs_services[@]}" "${objs_node[@]}" | grep -vx 'ac__service_table\|ac__service_count')
forbid "the core names no service and no transport" "runtime/services or runtime/node" "$defined" "${objs_core[@]}"
# The node's row of the table (services.c lists it) is the one exception.
forbid "a service reaches other nodes only through core/transport.h" "runtime/node" \
    "$(defined_by "${objs_node[@]}" | grep -vx 'ac__node_service')" "${objs_services[@]}"
exit $bad
