#!/bin/sh
# A bench/ script's smoke run for ctest (label bench): runs COMMAND, shows its
# output, and passes when it exited 0 and printed every REGEX (grep -E, one
# line each: the table's header, a row). Exit 77 (a prerequisite missing: the
# command said which) passes through as ctest's skip. No time is judged.
#   bench/smoke.sh REGEX [REGEX...] -- COMMAND [ARGS...]
set -u
n=0
while [ $# -gt 0 ] && [ "$1" != -- ]; do n=$((n + 1)); eval "re_$n=\$1"; shift; done
[ $# -gt 1 ] && [ "$n" -gt 0 ] || { echo "usage: $0 REGEX [REGEX...] -- COMMAND [ARGS...]" >&2; exit 2; }
shift
out=$(mktemp "${TMPDIR:-/tmp}/bench-smoke.XXXXXX")
trap 'rm -f "$out"' EXIT
rc=0
"$@" >"$out" 2>&1 || rc=$?
cat "$out"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc: $*"; exit 1; }
i=1
while [ "$i" -le "$n" ]; do
    eval "re=\$re_$i"
    grep -Eq -- "$re" "$out" || { echo "FAIL: no line matches '$re'"; exit 1; }
    i=$((i + 1))
done
echo PASS
