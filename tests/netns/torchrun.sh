#!/bin/bash
# collbench under the real torchrun (torch's elastic launcher), the way the
# seeds launch: `torchrun --no_python collbench allreduce ...`. torchrun's agent
# serves torch's own store on MASTER_PORT, so collbench's store takes the next
# port (src/bootstrap/rendezvous.c); results checked (-c 1) every time.
#
#   torchrun.sh COLLBENCH local    one host, 2 ranks, tcp and auto
#   torchrun.sh COLLBENCH hosts    two emulated hosts (network namespaces joined
#                                  by a veth pair), 1 and 2 ranks each, tcp and
#                                  auto; the job token in a file
# Exit 77 (skip) without torchrun, or for hosts without root or ip netns.
BIN=${1:?usage: $0 path/to/collbench local|hosts}
MODE=${2:?usage: $0 path/to/collbench local|hosts}
HERE=$(cd "$(dirname "$0")" && pwd)
FAILED=0
TORCHRUN=${TORCHRUN:-$(command -v torchrun)}
if [ -z "$TORCHRUN" ] || ! "$TORCHRUN" --help >/dev/null 2>&1; then
    echo "SKIP: no working torchrun (Debian: apt-get install python3-torch; scripts/deps.sh does)"
    exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-torchrun.XXXXXX")
# below the ephemeral range (no outgoing connection holds it), free now
. "$(dirname "$0")/../pick_port.sh"
PORT=$(pick_port)
fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# torchrun ARGS... -- COLLBENCH-ARGS: --redirects/--tee 1 because Debian's
# torch 1.13 under Python 3.11 cannot parse their default "0" (an IntFlag
# change); output then goes to the console prefixed per rank, as by default.
trun() {
    "$TORCHRUN" --redirects 1 --tee 1 --log_dir "$WORK/logs.$RANDOM" "$@"
}

# show FILES...: after a failure, collbench's own lines (the ranks' messages,
# which torchrun's traceback pushes out of a plain tail), then the tail.
show() {
    echo "--- collbench's lines:" >&2
    grep -h "collbench" "$@" 2>/dev/null | head -n 40 >&2
    echo "--- the last lines:" >&2
    tail -n 20 "$@" >&2
}

# check_csv CSV NNODES WHAT: rows, each with that many hosts and 0 wrong.
check_csv() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["nnodes"] != n || $col["wrong"] != 0 { bad = 1 } END { exit bad || NR < 2 }' "$1" ||
        fail "$3: CSV rows without nnodes $2 and wrong 0: $(cat "$1" 2>/dev/null)"
}

if [ "$MODE" = local ]; then
    for backend in tcp auto; do
        PORT=$((PORT + 2))
        trun --nproc_per_node 2 --master_port $PORT --no_python "$BIN" allreduce --backend $backend \
            --sizes 1028,1M -w 1 -n 2 -c 1 -T 60 --csv "$WORK/$backend.csv" >"$WORK/$backend.out" 2>&1 ||
            { fail "torchrun 2 ranks, $backend: exit $?"; show "$WORK/$backend.out"; continue; }
        check_csv "$WORK/$backend.csv" 1 "torchrun 2 ranks, $backend"
    done
    [ $FAILED -eq 0 ] && echo "checked: torchrun on one host, 2 ranks, tcp and auto, -c 1"
    rm -rf "$WORK"
    exit $FAILED
fi

. "$HERE/netns_lib.sh"
netns_require
netns_setup 2 || { echo "FAIL: cannot set up 2 namespaces"; exit 1; }
trap 'netns_cleanup; rm -rf "$WORK"' EXIT
MASTER=$(netns_addr 0)
TOKEN_FILE="$WORK/token"
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE")
for m in 1 2; do
    for backend in tcp auto; do
        PORT=$((PORT + 2))
        tag="$backend.$m" pids=()
        for h in 0 1; do
            netns_run $h env -u MASTER_ADDR -u MASTER_PORT -u RANK -u WORLD_SIZE \
                COLL_JOB_TOKEN_FILE="$TOKEN_FILE" "$TORCHRUN" --redirects 1 --tee 1 \
                --log_dir "$WORK/logs.$tag.$h" --nnodes 2 --node_rank $h --nproc_per_node $m \
                --master_addr "$MASTER" --master_port $PORT --no_python "$BIN" allreduce \
                --backend $backend --sizes 1028,1M -w 1 -n 2 -c 1 -T 60 --csv "$WORK/$tag.csv" \
                >"$WORK/$tag.out.$h" 2>&1 &
            pids+=($!)
        done
        netns_wait_all "${pids[@]}"
        if [ "$RCS" != "0 0" ]; then
            fail "torchrun 2 hosts x $m, $backend: exit codes $RCS"
            show "$WORK/$tag".out.*
            continue
        fi
        check_csv "$WORK/$tag.csv" 2 "torchrun 2 hosts x $m, $backend"
    done
done
[ $FAILED -eq 0 ] && echo "checked: torchrun, 2 hosts x 1 and x 2 ranks, tcp and auto, -c 1"
exit $FAILED
