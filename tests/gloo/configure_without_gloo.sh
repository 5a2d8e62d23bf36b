#!/bin/sh
# A machine without Gloo and without a C++ compiler still configures: Gloo is
# hidden from find_package and the C++ compiler points nowhere, so any C++
# enabled outside the Gloo branch fails the configure.
#   configure_without_gloo.sh CMAKE SOURCE_DIR C_COMPILER
set -u
CMAKE=$1 SRC=$2 CC_PATH=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-nogloo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if ! "$CMAKE" -S "$SRC" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC_PATH" \
        -DCMAKE_CXX_COMPILER=/nonexistent/c++ -DCMAKE_DISABLE_FIND_PACKAGE_Gloo=ON \
        >"$WORK/log" 2>&1; then
    echo "FAIL: configure without Gloo failed:" >&2
    tail -20 "$WORK/log" >&2
    exit 1
fi
if ! grep -q "Gloo not found: gloo backend disabled (apt-get install libgloo-dev g++)" "$WORK/log"; then
    echo "FAIL: configure did not say that the gloo backend is disabled and how to get it" >&2
    exit 1
fi
if grep -q "COLL_HAVE_GLOO" "$WORK/build/CMakeFiles/coll.dir/flags.make"; then
    echo "FAIL: libcoll is compiled with COLL_HAVE_GLOO although Gloo was hidden" >&2
    exit 1
fi
echo PASS
