#!/bin/sh
# README.md's list of tuning variables against the rows they come from (each
# component's, gathered through the table of backends, src/backend/knobs.c,
# as `collbench info --tuning` prints them): the block between the markers "<!-- tuning:begin" and
# "<!-- tuning:end -->" must be exactly `collbench info --tuning --markdown`.
# Exit 0, or 1 with the difference and how to regenerate the block.
# usage: check_tuning_doc.sh COLLBENCH [SOURCE_ROOT]   (ctest: design/tuning_doc)
set -eu
bin=${1:?usage: check_tuning_doc.sh COLLBENCH [SOURCE_ROOT]}
root=${2:-$(dirname "$0")/..}
doc=$root/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk '/^<!-- tuning:end/ { on = 0 } on { print } /^<!-- tuning:begin/ { on = 1 }' "$doc" > "$tmp/doc"
[ -s "$tmp/doc" ] || { echo "check_tuning_doc: no block between <!-- tuning:begin ...--> and <!-- tuning:end --> in $doc"; exit 1; }
"$bin" info --tuning --markdown > "$tmp/tool" || { echo "check_tuning_doc: $bin info --tuning --markdown failed"; exit 1; }
if ! diff -u "$tmp/doc" "$tmp/tool" > "$tmp/diff"; then
    echo "check_tuning_doc: $doc's tuning block differs from '$bin info --tuning --markdown' (- README, + tool):"
    cat "$tmp/diff"
    echo "check_tuning_doc: paste the tool's output between the markers"
    exit 1
fi
echo "check_tuning_doc: ok ($(grep -c '^| `' "$tmp/tool") variables)"
