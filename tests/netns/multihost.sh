#!/bin/bash
# Several "hosts" on one machine: one network namespace per host, one collbench
# node per namespace (--nnodes/--node-rank, 2 ranks each), the store on host 0.
#
#   multihost.sh COLLBENCH NHOSTS check    every collective, backends tcp and auto,
#                                          results checked (-c 1), nnodes in the CSV;
#                                          with 2 hosts also the failures: master
#                                          unreachable, world sizes that disagree,
#                                          a rank started twice
#   multihost.sh COLLBENCH NHOSTS shaped   links shaped to $RATE (10gbit) + $DELAY (1ms):
#                                          all-reduce busbw must not beat the links' bound
# Exit 77 (skip) without root or ip netns.
BIN=${1:?usage: $0 path/to/collbench NHOSTS check|shaped}
NHOSTS=${2:-2}
MODE=${3:-check}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netns_lib.sh"
RATE=${RATE:-10gbit}
DELAY=${DELAY:-1ms}
PER_NODE=2
# below the ephemeral range (no outgoing connection holds it), free now
. "$(dirname "$0")/../pick_port.sh"
PORT=$(pick_port)
FAILED=0
netns_require
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-netns.XXXXXX")
# The job token in a file only we can read: on a command line, ps shows it to everyone.
TOKEN_FILE="$WORK/token"
(umask 077 && echo "netns-test-$$" >"$TOKEN_FILE")

cleanup() {
    netns_cleanup
    if [ -n "${KEEP:-}" ]; then echo "outputs kept in $WORK"; else rm -rf "$WORK"; fi
}

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

if [ "$MODE" = shaped ]; then
    netns_setup "$NHOSTS" "$RATE" "$DELAY"
    rc=$?
    trap cleanup EXIT
    if [ $rc -eq 2 ]; then
        echo "SKIP: tc cannot shape the links here (no sch_tbf/sch_netem?)"
        exit 77
    fi
else
    netns_setup "$NHOSTS"
    rc=$?
    trap cleanup EXIT
fi
[ $rc -eq 0 ] || { echo "FAIL: cannot set up $NHOSTS namespaces"; exit 1; }
MASTER=$(netns_addr 0)

# run_nodes TAG NNODES_FOR_NODE... -- ARGS: one collbench per host, all at once.
# Sets RCS ("rc0 rc1 ...") and leaves each node's output in $WORK/TAG.nodeI.
run_nodes() {
    local tag=$1 i pids=()
    shift
    PORT=$((PORT + 1))
    for ((i = 0; i < NHOSTS; i++)); do
        netns_run $i "$BIN" "$@" --nnodes "$NHOSTS" --node-rank $i --nproc-per-node $PER_NODE \
            --master-addr "$MASTER" --master-port $PORT --job-token-file "$TOKEN_FILE" \
            >"$WORK/$tag.node$i" 2>&1 &
        pids+=($!)
    done
    netns_wait_all "${pids[@]}"
}

check_all() {
    local colls="allreduce allgather reducescatter broadcast reduce alltoall sendrecv barrier"
    for backend in tcp auto; do
        for coll in $colls; do
            local csv="$WORK/$backend.$coll.csv"
            # 1028 B = 257 float32: not a multiple of the 2 ranks per host (the
            # hierarchical all-reduce's remainder); 1 MiB spans several chunks.
            run_nodes "$backend.$coll" "$coll" --backend "$backend" --sizes 1028,1M -w 1 -n 2 -c 1 \
                -T 60 --csv "$csv"
            if [ "$RCS" != "$(printf '0 %.0s' $(seq $NHOSTS) | sed 's/ $//')" ]; then
                fail "$coll --backend $backend on $NHOSTS hosts: exit codes $RCS"
                cat "$WORK/$backend.$coll".node* >&2
                continue
            fi
            # nnodes (8th column) is the number of hosts the ranks really were on
            local nn
            nn=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { print $col["nnodes"] }' "$csv" | sort -u | tr '\n' ' ')
            [ "$nn" = "$NHOSTS " ] || fail "$coll --backend $backend: CSV nnodes '$nn', want $NHOSTS"
            # barrier checks nothing: its rows say -1 (N/A), the others 0 wrong
            local rows want=0
            [ "$coll" = barrier ] && want=-1
            rows=$(awk -F, -v w=$want 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] == w' "$csv" | wc -l)
            [ "$rows" -ge 1 ] || fail "$coll --backend $backend: no rows with $want wrong in $csv"
        done
    done
    echo "checked every collective over $NHOSTS hosts x $PER_NODE ranks (tcp, auto)"
}

# expect_node_failure TAG CODE PATTERN: some node exited CODE and said PATTERN.
expect_node_failure() {
    local tag=$1 code=$2 pattern=$3
    case " $RCS " in *" $code "*) ;; *) fail "$tag: exit codes $RCS, want one $code" ;; esac
    grep -q -e "$pattern" "$WORK/$tag".node* || {
        fail "$tag: no node says '$pattern'"
        cat "$WORK/$tag".node* >&2
    }
    case " $RCS " in *" 0 "*) fail "$tag: a node succeeded: $RCS" ;; esac
}

check_failures() {
    local args="allreduce --sizes 4K -w 1 -n 2 -T 8"
    # Host 1 alone, the master's address has no host: exit 3 naming address and port.
    local dead
    dead="$(netns_addr 200)"
    PORT=$((PORT + 1))
    local start=$SECONDS
    netns_run 1 "$BIN" $args --nnodes 2 --node-rank 1 --nproc-per-node 2 --master-addr "$dead" \
        --master-port $PORT --job-token-file "$TOKEN_FILE" >"$WORK/unreach.node1" 2>&1
    RCS=$?
    expect_node_failure unreach 3 "$dead:$PORT"
    [ $((SECONDS - start)) -le 30 ] || fail "unreachable master: took $((SECONDS - start)) s with -T 8"

    # Host 1 believes in 3 hosts (world 6), host 0 in 2 (world 4).
    PORT=$((PORT + 1))
    netns_run 0 "$BIN" $args --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr "$MASTER" \
        --master-port $PORT --job-token-file "$TOKEN_FILE" >"$WORK/world.node0" 2>&1 &
    local p0=$!
    netns_run 1 "$BIN" $args --nnodes 3 --node-rank 1 --nproc-per-node 2 --master-addr "$MASTER" \
        --master-port $PORT --job-token-file "$TOKEN_FILE" >"$WORK/world.node1" 2>&1
    local r1=$?
    wait $p0
    RCS="$? $r1"
    expect_node_failure world 2 "world size mismatch"

    # Both hosts say --node-rank 0: ranks 0 and 1 twice.
    PORT=$((PORT + 1))
    netns_run 0 "$BIN" $args --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr "$MASTER" \
        --master-port $PORT --job-token-file "$TOKEN_FILE" >"$WORK/dup.node0" 2>&1 &
    p0=$!
    sleep 0.5 # host 0's store first, so host 1's rank 0 is the duplicate
    netns_run 1 "$BIN" $args --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr "$MASTER" \
        --master-port $PORT --job-token-file "$TOKEN_FILE" >"$WORK/dup.node1" 2>&1
    r1=$?
    wait $p0
    RCS="$? $r1"
    expect_node_failure dup 2 "duplicate rank"
    echo "checked: unreachable master, world size mismatch, duplicate rank"
}

# collbench train across the hosts: every rank's parameters agree (the run
# checks their hash; a difference is exit 1), node 0 alone writes the CSV (the
# nodes share $WORK as hosts share a filesystem), one row per mode at 2 x 2 ranks.
check_train() {
    local csv="$WORK/train.csv" n=$((NHOSTS * PER_NODE))
    run_nodes train train --quick --mode allreduce-sync,ddp --backend auto --steps 3 --warmup 1 \
        --check-every 1 -T 60 --csv "$csv"
    if [ "$RCS" != "$(printf '0 %.0s' $(seq $NHOSTS) | sed 's/ $//')" ]; then
        fail "train on $NHOSTS hosts: exit codes $RCS"
        cat "$WORK"/train.node* >&2
        return
    fi
    local rows
    rows=$(awk -F, -v n="$n" 'NR > 1 && $7 == n && ($5 == "allreduce-sync" || $5 == "ddp")' "$csv" | wc -l)
    [ "$rows" -eq 2 ] || fail "train on $NHOSTS hosts: want 2 rows with nprocs $n in $csv, got: $(cat "$csv")"
    [ "$(grep -c '^timestamp' "$csv")" -eq 1 ] || fail "train: more than one header in $csv"
    echo "checked: train (allreduce-sync, ddp) over $NHOSTS hosts x $PER_NODE ranks"
}

# busbw of all-reduce can not beat the links: each host moves 2(H-1)/H of the
# data over its link each way, so algbw <= L*H/(2(H-1)) and busbw = algbw*2(n-1)/n;
# except that tbf lets its bucket (NETNS_BURST_BYTES, netns_lib.sh), refilled during the
# barrier, through at once: an iteration takes at least (2(H-1)/H S - burst)/L.
check_shaped() {
    local gbps
    gbps=$(awk -v r="$RATE" 'BEGIN { n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u);
        m = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : 1; print n * m / 8 / 1e9 }')
    local n=$((NHOSTS * PER_NODE))
    local bound
    bound=$(awk -v L="$gbps" -v H="$NHOSTS" -v n="$n" \
        'BEGIN { print L * H / (2 * (H - 1)) * 2 * (n - 1) / n }')
    for backend in tcp auto; do
        local csv="$WORK/shaped.$backend.csv"
        run_nodes "shaped.$backend" allreduce --backend "$backend" --sizes 8M,32M -w 1 -n 3 -c 1 \
            -T 120 --time-budget 20 --csv "$csv"
        case "$RCS" in *[1-9]*) fail "shaped allreduce --backend $backend: exit codes $RCS";
            cat "$WORK/shaped.$backend".node* >&2; continue ;; esac
        # the bound with the burst, per size; 2% for timing jitter
        awk -F, -v L="$gbps" -v H="$NHOSTS" -v n="$n" -v be="$backend" -v bound="$bound" -v burst="$NETNS_BURST_BYTES" \
            'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } {
                S = $col["bytes"]; t = (2 * (H - 1) / H * S - burst) / (L * 1e9)
                b = t > 0 ? S / t / 1e9 * 2 * (n - 1) / n : 1e30
                printf "  %s %s B: busbw %.3f GB/s, bound %.3f GB/s (%.3f with the burst)\n", be, S, $col["busbw_GBps"], bound, b
                if ($col["busbw_GBps"] > b * 1.02) { bad = 1; print "FAIL: busbw above the emulated links" > "/dev/stderr" } }
            END { exit bad }' "$csv" || FAILED=1
    done
    echo "links $RATE + $DELAY: all-reduce busbw within the bound ($bound GB/s for $NHOSTS hosts x $PER_NODE)"
}

case "$MODE" in
check)
    check_all
    if [ "$NHOSTS" -eq 2 ]; then
        check_failures
        check_train
    fi
    ;;
shaped) check_shaped ;;
*) echo "unknown mode '$MODE' (check, shaped)" >&2; exit 2 ;;
esac
[ $FAILED -eq 0 ] && echo PASS
exit $FAILED
