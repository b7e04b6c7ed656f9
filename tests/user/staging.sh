#!/usr/bin/env bash
# staging.sh STAGE — after `make install DESTDIR=STAGE PREFIX=/usr/local`:
# every file is under STAGE/usr/local and names /usr/local, not STAGE, in
# what it says of itself; run again after `make uninstall` with the same
# variables (--after): nothing is left under STAGE.
set -euo pipefail
stage=$1
if [ "${2:-}" = --after ]; then
    left=$(find "$stage" -type f -o -type l 2>/dev/null || true)
    [ -z "$left" ] || { echo "user: make uninstall left: $left" >&2; exit 1; }
    echo "user: make uninstall removed every file make install staged"
    exit 0
fi
for f in bin/actorc bin/actorc-keygen include/actorc.h lib/libactorc.a lib/libactorc.so \
         lib/pkgconfig/actorc.pc share/actorc/actorc.mk share/man/man1/actorc.1 \
         share/man/man1/actorc-keygen.1 share/man/man3/libactorc.3 lib/cmake/actorc/actorcConfig.cmake \
         lib/cmake/actorc/actorcConfigVersion.cmake lib/cmake/actorc/actorcGenerate.cmake; do
    [ -e "$stage/usr/local/$f" ] || { echo "user: $f is not in $stage/usr/local" >&2; exit 1; }
done
outside=$(find "$stage" -mindepth 1 -maxdepth 1 ! -name usr)
[ -z "$outside" ] || { echo "user: make install wrote outside DESTDIR/PREFIX: $outside" >&2; exit 1; }
if grep -rl "$stage" "$stage" --include='*.pc' --include='*.cmake' --include='*.mk'; then
    echo "user: a staged file names the staging folder" >&2; exit 1
fi
echo "user: make install DESTDIR= staged $(find "$stage" -type f -o -type l | wc -l) files under PREFIX"
