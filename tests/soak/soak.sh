#!/bin/sh
# Soak one backend: all-reduce small to medium sizes on 3 ranks for
# $COLLBENCH_SOAK_DURATION (default 30s) on one communicator, then check that
# after warm-up no rank's resident memory grew by more than 4 MiB and no rank
# opened a descriptor it did not close.
# usage: soak.sh path/to/collbench BACKEND
set -u
BIN=${1:?usage: $0 path/to/collbench BACKEND}
BACKEND=${2:?usage: $0 path/to/collbench BACKEND}
DURATION=${COLLBENCH_SOAK_DURATION:-30s}
MAX_RSS_GROWTH_KIB=4096
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-soak.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# A duration that is not one is a usage error naming the flag.
"$BIN" allreduce --backend "$BACKEND" --duration 10x >/dev/null 2>"$WORK/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q -e "--duration: '10x'" "$WORK/err"; then
    echo "FAIL: --duration 10x: exit $rc, want 2 naming the flag: $(cat "$WORK/err")" >&2
    exit 1
fi

"$BIN" allreduce --backend "$BACKEND" -P 3 --sizes 4K,64K,1M,4M -w 1 -n 5 \
    --duration "$DURATION" >"$WORK/out" 2>"$WORK/err"
rc=$?
if [ "$rc" -eq 4 ]; then
    echo "SKIP: backend $BACKEND is not available: $(cat "$WORK/err")"
    exit 77
fi
if [ "$rc" -ne 0 ]; then
    echo "FAIL: soak on $BACKEND exited $rc: $(cat "$WORK/err")" >&2
    exit 1
fi
grep '^# soak' "$WORK/out"
start=$(grep '^# soak start' "$WORK/out")
end=$(grep '^# soak end' "$WORK/out")
growth=$(grep '^# soak growth' "$WORK/out")
if [ -z "$start" ] || [ -z "$end" ] || [ -z "$growth" ]; then
    echo "FAIL: no '# soak start/end/growth' lines in the output: $(tail -n 5 "$WORK/out")" >&2
    exit 1
fi
# The run repeated the sizes: the end is some passes after the baseline.
pass_of() { echo "$1" | sed -n 's/.*(pass \([0-9]*\),.*/\1/p'; }
p0=$(pass_of "$start") p1=$(pass_of "$end")
if [ -z "$p0" ] || [ -z "$p1" ] || [ "$p1" -le "$p0" ]; then
    echo "FAIL: expected more passes at the end than at the baseline: '$start' / '$end'" >&2
    exit 1
fi
# "# soak growth after warm-up (largest over ranks): rss +N KiB fds +M"
rss=$(echo "$growth" | sed -n 's/.*rss \([-+][0-9]*\) KiB.*/\1/p')
fds=$(echo "$growth" | sed -n 's/.*fds \([-+][0-9]*\)$/\1/p')
if [ -z "$rss" ] || [ -z "$fds" ]; then
    echo "FAIL: cannot read the growth line: '$growth'" >&2
    exit 1
fi
failed=0
if [ "$rss" -gt "$MAX_RSS_GROWTH_KIB" ]; then
    echo "FAIL: $BACKEND: resident memory grew by $rss KiB after warm-up (limit $MAX_RSS_GROWTH_KIB)" >&2
    failed=1
fi
if [ "$fds" -gt 0 ]; then
    echo "FAIL: $BACKEND: $fds more open file descriptors at the end than after warm-up" >&2
    failed=1
fi
[ "$failed" -eq 0 ] && echo "PASS: $BACKEND soak $DURATION: passes $p0..$p1, rss $rss KiB, fds $fds"
exit "$failed"
