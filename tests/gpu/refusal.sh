# Sourced by fake.sh and runs.sh (after tests/cli/lib.sh).
# expect_nccl_refused NGPUS: NGPUS+1 ranks started by hand (torchrun style) on
# this host ask nccl for a GPU each; every one is refused at init with exit 4
# and the reason, none waits for the others in NCCL (-T bounds a hang).
expect_nccl_refused() {
    ngpus=$1 n=$(($1 + 1)) pids=""
    port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000))
    for r in $(seq 0 $((n - 1))); do
        RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$port "$BIN" allreduce --backend nccl --device cuda --sizes 1K -T 30 \
            >"$WORK/m$r.out" 2>&1 &
        pids="$pids $!"
    done
    r=0
    for pid in $pids; do
        wait "$pid"
        rc=$?
        [ "$rc" -eq 4 ] ||
            fail "hand-started rank $r of $n on $ngpus GPU(s): exit $rc, want 4: $(cat "$WORK/m$r.out")"
        grep -q "$n ranks on host .* but $ngpus CUDA devices\?: NCCL needs one GPU per rank" "$WORK/m$r.out" ||
            fail "rank $r: no reason: $(cat "$WORK/m$r.out")"
        r=$((r + 1))
    done
}
