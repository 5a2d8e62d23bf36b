#!/bin/sh
# The naming rule (docs/DESIGN.md "Names and visibility") over libcoll,
# coll_base and the launcher: `coll_` only for what include/coll.h (the API)
# and include/coll_tool.h (the tool's) declare; every other symbol their
# objects define with external linkage is `coll__`, and so is every
# `static inline` function and typedef of their headers (src/*/ below the
# modules above libcoll), except in a component's own folder (src/backend/shm/:
# shm_, src/backend/auto/: auto_, src/transport/tcp/: tcp_, ...), whose
# headers only its own files include; the gloo layer's C++ is
# namespace collgloo. Reads the
# built objects (nm) and the headers; names each offender. Exit 0 or 1.
# usage: check_names.sh BUILD_DIR [SOURCE_ROOT] [NM]   (ctest: design/names)
set -eu
build=$1
root=${2:-$(dirname "$0")/..}
nm=${3:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Names the two headers declare (functions, types, enumerators, macros).
grep -ohw 'coll_[a-z][a-z0-9_]*' "$root/include/coll.h" "$root/include/coll_tool.h" | sort -u > "$tmp/public"

objs=$(find "$build/CMakeFiles/coll_objects.dir" "$build/CMakeFiles/coll_base_objects.dir" \
            "$build/CMakeFiles/coll_launch.dir" -name '*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "check_names: no objects of coll_objects, coll_base_objects, coll_launch under $build" >&2; exit 1; }

# "OBJECT TYPE NAME" for each defined symbol with external linkage.
# shellcheck disable=SC2086 # the object list is word-split on purpose
"$nm" -A --defined-only $objs | awk '$(NF-1) ~ /^[A-Z]$/ { f = $1; sub(/:.*/, "", f); sub(/.*CMakeFiles\/[^\/]*\.dir\//, "", f); print f, $(NF-1), $NF }' > "$tmp/syms"
[ -s "$tmp/syms" ] || { echo "check_names: nm found no symbols in $build" >&2; exit 1; }

: > "$tmp/bad"
while read -r obj type name; do
    case $name in
        # DW.ref: the C++ personality's; __odr_asan etc.: a sanitizer's, per global
        coll__*|DW.ref.*|__odr_asan*|__asan_*|__tsan_*|__ubsan_*|__sancov_*) continue ;;
        _Z*)
            # C++: weak template instances (W, V, u) come from library headers.
            case $type in W|V|u) continue ;; esac
            d=$(echo "$name" | c++filt)
            case $d in collgloo::*|*" for collgloo::"*) continue ;; esac
            echo "$obj: $d (C++ outside namespace collgloo)" >> "$tmp/bad" ;;
        *)
            grep -qx "$name" "$tmp/public" || echo "$obj: $name" >> "$tmp/bad" ;;
    esac
done < "$tmp/syms"

# Headers of libcoll, coll_base and the launcher: static inline functions and
# typedef names reach every file that includes them.
for d in core bootstrap transport algo backend comm launch; do
    find "$root/src/$d" -name '*.h'
done | sort > "$tmp/headers"
# shellcheck disable=SC2046
grep -HnoE 'static inline [^(;]*\bcoll_[a-z][a-z0-9_]*\(|\}[[:space:]]*coll_[a-z][a-z0-9_]*;|^typedef [^;{]*\bcoll_[a-z][a-z0-9_]*;|\(\*coll_[a-z][a-z0-9_]*\)\(' \
    $(cat "$tmp/headers") 2>/dev/null |
    sed -E 's|^'"$root"'/||; s/^([^:]*):([0-9]*):.*\b(coll_[a-z][a-z0-9_]*)[;(\)].*/\1:\2 \3/' |
while read -r where name; do
    grep -qx "$name" "$tmp/public" || echo "$where: $name" >> "$tmp/bad"
done

# Every typedef name (a typedef line, the closing line of a typedef'd struct or
# enum at column 0, a function-pointer typedef) and static inline function of
# those headers: coll__, or, in a component's own folder (src/backend/shm/,
# src/backend/auto/, src/transport/tcp/: the folder's name), that prefix;
# those headers are included by their component's files only. One awk per
# header: "FILE:LINE NAME" for each name breaking it.
while read -r h; do
    rel=${h#"$root"/}
    case $rel in
        src/*/*/*) prefix=$(basename "$(dirname "$rel")")_ ;;
        *) prefix=coll__ ;;
    esac
    awk -v f="$rel" -v pre="$prefix" '
        function check(name) {
            if (name !~ /^coll__/ && name !~ /^coll_/ && index(name, pre) != 1) print f ":" NR " " name
        }
        /^typedef [^;{(]*[ *][A-Za-z_][A-Za-z0-9_]*;/ { n = $0; sub(/;.*/, "", n); sub(/.*[ *]/, "", n); check(n) }
        /^typedef [^;]*\(\*[A-Za-z_][A-Za-z0-9_]*\)/ { n = $0; sub(/^[^(]*\(\*/, "", n); sub(/\).*/, "", n); check(n) }
        /^\}[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ { n = $0; sub(/^\}[ \t]*/, "", n); sub(/;.*/, "", n); check(n) }
        /static inline [^(;]*[ *][A-Za-z_][A-Za-z0-9_]*\(/ { n = $0; sub(/\(.*/, "", n); sub(/.*[ *]/, "", n); check(n) }
    ' "$h"
done < "$tmp/headers" | grep -v ' coll_[a-z]' >> "$tmp/bad" || true

# Above the library: each module's objects define, with external linkage, only
# names with its own prefix (upper case for data: BENCH_CSV_HEADER): engine
# bench_, rows bench_ (the collective and per-iteration rows) and train_ (its
# train_*.c family: the training row), train train_, report report_,
# costmodel model_ (its files are model_*.c), the tool its file families'
# (cli_, cmd_, info_, suite_) and main. Objects of sources that no longer
# exist (a moved file's, left in the build) are skipped.
ABOVE='
collbench_engine: bench_
collbench_rows: bench_ train_
collbench_train: train_
collbench_report: report_
collbench_costmodel: model_
collbench_replay: replay_
collbench: cli_ cmd_ info_ suite_ main
'
echo "$ABOVE" | while read -r target prefixes; do
    [ -n "$target" ] || continue
    target=${target%:}
    find "$build/CMakeFiles/$target.dir" -name '*.o' 2>/dev/null | sort | while read -r o; do
        s=${o#*.dir/}
        [ ! -f "$root/${s%.o}" ] || echo "$o"
    done > "$tmp/above_objs"
    if [ ! -s "$tmp/above_objs" ]; then
        echo "check_names: no objects of $target under $build" >> "$tmp/bad"
        continue
    fi
    # shellcheck disable=SC2046 # the object list is word-split on purpose
    "$nm" -A --defined-only $(cat "$tmp/above_objs") |
        awk -v pre="$prefixes" '$(NF-1) ~ /^[A-Z]$/ {
            f = $1; sub(/:.*/, "", f); sub(/.*CMakeFiles\/[^\/]*\.dir\//, "", f)
            n = split(pre, p, " ")
            for (i = 1; i <= n; i++)
                if (index($NF, p[i]) == 1 || index($NF, toupper(p[i])) == 1 || $NF == p[i]) next
            print f ": " $NF " (not " pre ")"
        }' >> "$tmp/bad"
done

if [ -s "$tmp/bad" ]; then
    echo "check_names: $(wc -l < "$tmp/bad") names break the rule (coll_ only for include/coll.h and coll_tool.h; else coll__ or static; above libcoll, the module's prefix):"
    sed 's/^/  /' "$tmp/bad"
    exit 1
fi
echo "check_names: ok ($(wc -l < "$tmp/syms") symbols, $(wc -l < "$tmp/headers") headers)"
