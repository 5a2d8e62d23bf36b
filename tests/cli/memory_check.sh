#!/bin/sh
# Buffers that cannot fit this host are refused before any rank allocates
# (exit 2, with the arithmetic and what is available), in well under a second;
# --force-memory skips the check, and then the allocation itself fails (a
# 64 GiB malloc on this size of machine), named by the rank.
. "$(dirname "$0")/lib.sh"

t0=$(date +%s%N)
expect_exit 2 "needs 256.0 GiB on this host (2 ranks x 2 buffers x 64.0 GiB), [0-9.]* [GM]iB available" \
    allreduce -P 2 --backend shm --sizes 64G
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 2000 ] || fail "the refusal took $ms ms"
# in place: one buffer a rank
expect_exit 2 "(4 ranks x 1 buffer x 64.0 GiB)" allreduce -P 4 --backend tcp --sizes 64G --inplace 1
# the message names the process count that does not fit
expect_exit 2 "(6 ranks x 2 buffers" allreduce -P 6 --backend tcp --sizes 8G,64G

# shm's all-reduce on private buffers copies them into a scratch of 2x their
# bytes in each rank's shared heap: a size whose buffers fit but whose buffers
# and scratch do not is refused, naming the scratch. COLL_SHM_PRIV_MAX opens
# the private window at every size; S is a sixth of what is available, so the
# buffers (2 ranks x 2 x S) take two thirds and the scratch as much again.
# ulimit -v: a build that let it run fails its allocation, not the host.
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -r "$cg/memory.max" ] && [ "$(cat "$cg/memory.max")" != max ]; then
    left_kb=$((($(cat "$cg/memory.max") - $(cat "$cg/memory.current")) / 1024))
    [ "$left_kb" -lt "$avail_kb" ] && avail_kb=$left_kb
fi
size_m=$((avail_kb / 6 / 1024))
(
    ulimit -v $(((size_m + 1024) * 1024))
    export COLL_SHM_PRIV_MAX=1099511627776
    expect_exit 2 \
        "(2 ranks x 2 buffers x [0-9.]* [GM]iB + 2 ranks x [0-9.]* [GM]iB of shm scratch (all-reduce on private buffers copies into the shared heap)), [0-9.]* [GM]iB available" \
        allreduce -P 2 --backend shm --sizes "${size_m}M" -n 1 -w 0 -T 30
    exit "$FAILED"
) || FAILED=1

# (not where overcommit is on: the malloc would succeed and its touch call the OOM killer)
if [ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" != 1 ]; then
    "$BIN" allreduce -P 2 --backend tcp --sizes 64G -n 1 -w 0 --force-memory >"$WORK/out" 2>"$WORK/err"
    rc=$?
    [ "$rc" -ne 0 ] || fail "--force-memory --sizes 64G: exit 0 on a machine this small?"
    grep -q "needs .* on this host" "$WORK/err" && fail "--force-memory still ran the check: $(cat "$WORK/err")"
    grep -q "cannot allocate" "$WORK/err" || fail "--force-memory: no allocation failure named: $(cat "$WORK/err")"
fi
finish
