#!/usr/bin/env bash
# check.sh RUNTIME OBJ — the runtime's layout keeps its dependencies one way
# (runtime/README.md, "Layout"): services -> core -> lib.
#
#   RUNTIME  the runtime's source folder (core/, services/, lib/, include/)
#   OBJ      where its objects were built (OBJ/core/*.o, OBJ/services/*.o)
#
# Checked from the sources, by what each file includes:
#   - core/ includes nothing of services/;
#   - services/ include of core/ only core/service.h, the service interface;
#   - lib/ includes nothing of core/ or services/.
# Checked from the objects, by what each one refers to (so a call through a
# macro or a prototype written by hand is caught as well as an include):
#   - no core object uses a symbol a services object defines, but the
#     table of services itself (ac__service_table, ac__service_count).
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

for layer in core services lib; do
    for f in "$runtime/$layer"/*.[ch]; do
        [ -e "$f" ] || continue
        rel=${f#"$runtime"/}
        while IFS= read -r name; do
            target=$(resolve "$(dirname "$f")" "$name")
            trel=${target#"$runtime"/}
            case "$layer:$trel" in
            core:services/*) fail "$rel includes $trel: the core names no service" ;;
            services:core/service.h) ;;
            services:core/*) fail "$rel includes $trel: a service reaches the core only through core/service.h" ;;
            lib:core/* | lib:services/*) fail "$rel includes $trel: lib/ is leaf code" ;;
            esac
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
done

objs_core=("$obj"/core/*.o)
objs_services=("$obj"/services/*.o)
if [ ! -e "${objs_core[0]}" ] || [ ! -e "${objs_services[0]}" ]; then
    fail "no objects under $obj/core and $obj/services: build the runtime first"
    exit 1
fi
# Every symbol the services define, but the table the core walks.
defined=$(nm --defined-only -g "${objs_services[@]}" 2>/dev/null |
          awk 'NF == 3 { print $3 }' | grep -vx 'ac__service_table\|ac__service_count' | sort -u)
for o in "${objs_core[@]}"; do
    used=$(nm --undefined-only -g "$o" 2>/dev/null | awk '{ print $NF }' | sort -u)
    for sym in $(comm -12 <(printf '%s\n' "$defined") <(printf '%s\n' "$used")); do
        fail "${o##*/} uses $sym, which runtime/services defines: the core names no service"
    done
done
exit $bad
