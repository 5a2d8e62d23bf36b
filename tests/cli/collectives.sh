#!/bin/sh
# Every collective runs on 3 ranks (sizes that do not divide by 3 included) with
# results checked, and reports #wrong 0.
. "$(dirname "$0")/lib.sh"

for coll in allreduce allgather reducescatter broadcast reduce alltoall sendrecv barrier; do
    expect_exit 0 "" "$coll" --sizes 1000,4K -P 3 -w 1 -n 2 -c 2 --backend tcp -r 2
    if [ "$coll" = barrier ]; then # nothing to check: N/A, never a claimed 0
        grep -q '^ *0 .* N/A ' "$WORK/out" || fail "barrier: #wrong is not N/A: $(cat "$WORK/out")"
        continue
    fi
    rows=$(grep -c '^ *[0-9]' "$WORK/out")
    [ "$rows" -ge 1 ] || fail "$coll printed no rows: $(cat "$WORK/out")"
    awk '/^ *[0-9]/ && ($9 != "0" || ($13 != "0" && $13 != "-")) { bad = 1 } END { exit bad }' \
        "$WORK/out" || fail "$coll: #wrong != 0: $(cat "$WORK/out")"
done
# every dtype/op pair of all-reduce
expect_exit 0 "" allreduce --sizes 64 -P 3 -w 0 -n 1 -d all -o all --backend tcp
finish
