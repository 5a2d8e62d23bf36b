#!/bin/sh
# $COLLBENCH_HOST names the machine in results (two VMs both called "vm" stay
# apart in a combined report): the table header and the CSV host column carry
# it; a name that cannot sit in a CSV field is refused at once, exit 2, before
# any rank starts, and by a rank started by hand.
. "$(dirname "$0")/lib.sh"

RUN="allreduce --backend tcp --sizes 1K -n 2 -w 0 -c 1 -T 20"
COLLBENCH_HOST=gpu-box.7 "$BIN" $RUN -P 2 --csv "$WORK/r.csv" >"$WORK/out" 2>&1 ||
    fail "COLLBENCH_HOST=gpu-box.7: exit $?: $(cat "$WORK/out")"
grep -q "host gpu-box.7\$" "$WORK/out" || fail "table header without the name: $(cat "$WORK/out")"
[ "$(cut -d, -f2 "$WORK/r.csv" | sort -u | tr '\n' ' ')" = "gpu-box.7 host " ] ||
    fail "CSV host column: $(cut -d, -f2 "$WORK/r.csv" | tr '\n' ' ')"

for bad in "a,b" "" "with space" "$(printf 'x%.0s' $(seq 64))"; do
    COLLBENCH_HOST=$bad expect_exit 2 "COLLBENCH_HOST=.*a machine name is 1 to 63" $RUN -P 2
    COLLBENCH_HOST=$bad RANK=0 WORLD_SIZE=1 expect_exit 2 "COLLBENCH_HOST" $RUN
done
finish
