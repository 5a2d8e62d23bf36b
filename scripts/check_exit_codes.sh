#!/bin/sh
# docs/DESIGN.md's exit-code table against tools/collbench/exit_codes.h, the
# one header every command takes its codes from: each `| code | NAME |` row
# must be a `#define NAME code` there and each define a row; rows 1 and
# 128+signal must say what report means by them; no other file of the tool
# defines an EXIT_ code or compares or returns 128 by hand. Exit 0 or 1 naming
# each difference.
# usage: check_exit_codes.sh [SOURCE_ROOT]   (ctest: design/exit_codes)
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"
doc=docs/DESIGN.md
hdr=tools/collbench/exit_codes.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
say() { echo "check_exit_codes: $*"; bad=1; }

# The section's table rows: "| 2 | `EXIT_USAGE` | meaning |" -> "EXIT_USAGE 2".
awk '/^## Exit codes/ { on = 1; next } /^## / { on = 0 } on && /^\|/' "$doc" > "$tmp/rows"
[ -s "$tmp/rows" ] || { echo "check_exit_codes: no table under '## Exit codes' in $doc" >&2; exit 1; }
sed -n 's/^| *\([0-9][0-9]*\)[^|]*| *`\(EXIT_[A-Z_]*\)`.*/\2 \1/p' "$tmp/rows" | sort > "$tmp/doc"
sed -n 's/^#define \(EXIT_[A-Z_]*\) \([0-9][0-9]*\).*/\1 \2/p' "$hdr" | sort > "$tmp/hdr"
[ -s "$tmp/hdr" ] || { echo "check_exit_codes: no #define EXIT_ in $hdr" >&2; exit 1; }
comm -23 "$tmp/doc" "$tmp/hdr" | while read -r n c; do echo "check_exit_codes: $doc says $n is $c; $hdr does not"; done > "$tmp/d1"
comm -13 "$tmp/doc" "$tmp/hdr" | while read -r n c; do echo "check_exit_codes: $hdr defines $n $c; $doc's table lacks it"; done > "$tmp/d2"
if [ -s "$tmp/d1" ] || [ -s "$tmp/d2" ]; then cat "$tmp/d1" "$tmp/d2"; bad=1; fi

grep -q '^| *1 .*`report`' "$tmp/rows" || say "$doc: row 1 does not say what report means by it"
grep -q '^| *128 *+ *signal .*`report`' "$tmp/rows" || say "$doc: no row '128+signal' that covers report"
grep -q '^| *0 ' "$tmp/rows" || say "$doc: no row 0"

# One place: no other definitions, no hand-written 128 + signal.
grep -n '#define EXIT_[A-Z_]* ' tools/collbench/*.c tools/collbench/*.h | grep -v "^$hdr:" > "$tmp/dup" || true
[ ! -s "$tmp/dup" ] || { say "exit codes defined outside $hdr:"; cat "$tmp/dup"; }
grep -nE '(return|=|>|<|-|\+) *128([^0-9]|$)' tools/collbench/*.c > "$tmp/lit" || true
[ ! -s "$tmp/lit" ] || { say "128 written by hand (use EXIT_SIGNALLED):"; cat "$tmp/lit"; }
[ $bad = 0 ] || exit 1
echo "check_exit_codes: ok ($(wc -l < "$tmp/hdr") codes)"
