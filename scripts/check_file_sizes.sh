#!/bin/sh
# No source file a newcomer must read whole: every C, C++ and header file in
# src/, tools/ and bindings/ stays under MAX lines (docs/DESIGN.md "Layers").
# Names each file over it. Exit 0 or 1.
# usage: check_file_sizes.sh [SOURCE_ROOT] [MAX]   (ctest: design/file_sizes)
set -eu
root=${1:-$(dirname "$0")/..}
max=${2:-900}
cd "$root"
files=$(find src tools bindings -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cc' \) | sort)
[ -n "$files" ] || { echo "check_file_sizes: no sources under $root" >&2; exit 1; }
# shellcheck disable=SC2086 # the file list is word-split on purpose
over=$(wc -l $files | awk -v max="$max" '$2 != "total" && $1 > max { print "  " $2 ": " $1 " lines" }')
if [ -n "$over" ]; then
    echo "check_file_sizes: files over $max lines (split them by concern):"
    echo "$over"
    exit 1
fi
echo "check_file_sizes: ok ($(echo "$files" | wc -l) files, none over $max lines)"
