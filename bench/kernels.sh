#!/bin/sh
# Reduction kernels: which loops vectorise, and how fast they run.
#   bench/kernels.sh vec      per kernel, the loops gcc and clang vectorise (-O3)
#   bench/kernels.sh bench [elements]
#                             GB/s of float32/bf16/fp16 sum vs a scalar loop: runs
#                             build/bench/kernel_bench (the CMake target kernel_bench,
#                             built here if missing; KERNEL_BENCH names the program,
#                             COLLBENCH_BUILD another build directory). Its flags are
#                             the build's: cmake -DCMAKE_C_FLAGS=-march=native ...
# vec's extra compiler flags (e.g. -march=native) go in CFLAGS. Outputs in $TMPDIR.
# Smallest run (ctest bench/kernels): bench/kernels.sh bench 8192.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/collkernels.XXXXXX")
trap 'rm -rf "$work"' EXIT
cflags="-std=c11 -D_GNU_SOURCE -O3 ${CFLAGS:-} -I$root/include -I$root/src"

vec() {
    # Each kernel holds four loops (out distinct, out == a, out == b, out == a == b);
    # for min/max the last is x op x == x, which the compilers delete: 3 loops.
    if command -v gcc >/dev/null; then
        (cd "$work" && gcc $cflags -c "$root/src/core/reduce.c" -o g.o -fsave-optimization-record)
    fi
    if command -v clang >/dev/null; then
        clang $cflags -c "$root/src/core/reduce.c" -o "$work/c.o" \
            -fsave-optimization-record=yaml -foptimization-record-file="$work/c.yaml"
    fi
    python3 - "$work" <<'PY'
import collections, glob, gzip, json, os, re, sys
work = sys.argv[1]
gcc, clang = collections.Counter(), collections.Counter()
for f in glob.glob(os.path.join(work, "*.opt-record.json.gz")):
    def walk(rs):
        for r in rs:
            yield r
            yield from walk(r.get("children", []))
    for r in walk(json.load(gzip.open(f))[2]):
        text = "".join(m if isinstance(m, str) else "" for m in r["message"])
        if "loop vectorized" in text:
            chain = r.get("inlining_chain") or [{"fndecl": r["function"]}]
            gcc[(r["function"], chain[0]["fndecl"])] = 1  # epilogues count once
gcc = collections.Counter(fn for fn, _ in gcc)
yaml = os.path.join(work, "c.yaml")
if os.path.exists(yaml):
    for doc in open(yaml).read().split("\n--- "):
        if doc.lstrip().startswith("!Passed") and re.search(r"Pass:\s+loop-vectorize", doc):
            clang[re.search(r"Function:\s+(\S+)", doc).group(1)] += 1
print("%-24s %s %s" % ("kernel", "gcc", "clang"))
for fn in sorted(set(gcc) | set(clang)):
    print("%-24s %3d %5d" % (fn, gcc[fn], clang[fn]))
PY
}

bench() {
    build=${COLLBENCH_BUILD:-$root/build}
    prog=${KERNEL_BENCH:-$build/bench/kernel_bench}
    if [ ! -x "$prog" ]; then
        [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" >/dev/null
        cmake --build "$build" --target kernel_bench >/dev/null
    fi
    "$prog" "$@"
}

case "${1:-vec}" in
vec) vec ;;
bench) shift; bench "$@" ;;
*) echo "usage: $0 vec|bench [elements]" >&2; exit 2 ;;
esac
