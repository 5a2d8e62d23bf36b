#!/bin/sh
# `cmake --install` into a temporary prefix; a program built against it with
# pkg-config and with find_package(coll), each run on 2 ranks (env://), and
# api_tour.c, which calls every group of the API, against the shared library
# (pkg-config) and the static one (pkg-config --static).
# usage: install_test.sh BUILD_DIR SOURCE_DIR(tests/install)
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
libdir=${libdir%/pkgconfig}
for f in "$libdir/libcoll.a" "$libdir/libcoll.so" "$prefix/include/coll.h" \
         "$libdir/cmake/coll/collConfig.cmake" "$libdir/cmake/coll/collConfigVersion.cmake" \
         "$prefix/share/man/man1/collbench.1" "$prefix/bin/collbench"; do
    [ -e "$f" ] || fail "missing $f"
done
[ "$(ls "$prefix/include")" = coll.h ] || fail "headers besides coll.h: $(ls "$prefix/include")"
grep -q '^\.SS allreduce' "$prefix/share/man/man1/collbench.1" || fail "man page lacks allreduce"

. "$(dirname "$0")/../pick_port.sh"

# 2 ranks of one program; each must print "rank R of 2: WHAT ok" (WHAT: $2,
# default allreduce). A port taken between pick_port and the bind: another
# port, up to 3 tries.
run2() {
    what=${2:-allreduce}
    for try in 1 2 3; do
        port=$(pick_port)
        pids=""
        for r in 0 1; do
            RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                LD_LIBRARY_PATH=$libdir timeout 60 "$1" > "$tmp/out$r" 2>&1 &
            pids="$pids $!"
        done
        st=0
        for p in $pids; do wait "$p" || st=1; done
        [ $st = 0 ] || ! grep -q 'Address already in use' "$tmp/out0" "$tmp/out1" || continue
        break
    done
    cat "$tmp/out0" "$tmp/out1"
    [ $st = 0 ] || fail "$1 failed on 2 ranks"
    grep -q "rank 0 of 2: $what ok" "$tmp/out0" && grep -q "rank 1 of 2: $what ok" "$tmp/out1" \
        || fail "$1: no result line"
}

export PKG_CONFIG_PATH=$libdir/pkgconfig
# A library built with sanitizers (CI's ASan and TSan builds) needs programs
# built with them too: their runtime must come first.
san=${COLL_TEST_SANITIZE:+-fsanitize=$COLL_TEST_SANITIZE}
# shellcheck disable=SC2046,SC2086 # pkg-config's output and $san are lists of flags
cc -std=c11 -Wall -Wextra -Werror $san -o "$tmp/allreduce_pc" "$src/allreduce.c" \
    $(pkg-config --cflags --libs coll) || fail "build with pkg-config"
run2 "$tmp/allreduce_pc"
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror $san -o "$tmp/api_tour" "$src/api_tour.c" \
    $(pkg-config --cflags --libs coll) || fail "build api_tour.c with pkg-config"
run2 "$tmp/api_tour" api
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror $san -o "$tmp/api_tour_static" "$src/api_tour.c" \
    $(pkg-config --cflags --static --libs coll | sed 's/-lcoll\( \|$\)/-l:libcoll.a\1/') \
    || fail "build api_tour.c against libcoll.a (pkg-config --static)"
run2 "$tmp/api_tour_static" api

cmake -S "$src/project" -B "$tmp/user" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$san" >/dev/null \
    || fail "find_package(coll)"
cmake --build "$tmp/user" >/dev/null || fail "build with find_package(coll)"
run2 "$tmp/user/allreduce"
echo "install test: ok"
