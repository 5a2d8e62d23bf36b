#!/bin/bash
# collbench replay across hosts: tests/replay/three_ranks (a world of 3 and a
# subgroup of ranks 0 and 1) on 3 emulated hosts (network namespaces on a
# bridge), one rank each (--nnodes 3). The subgroup spans two hosts, so its
# ranks can only meet over the network: every node exits 0, node 0 prints the
# table with every call and writes the CSV, the others write none. Then a
# --nnodes that does not make the trace's world is refused (exit 2) before
# anything runs. Exit 77 (skip) without root or ip netns.
BIN=${1:?usage: $0 path/to/collbench}
HERE=$(cd "$(dirname "$0")" && pwd)
TRACE=$HERE/../replay/three_ranks
. "$HERE/netns_lib.sh"
. "$HERE/../pick_port.sh"
PORT=$(pick_port)
netns_require
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-replay-hosts.XXXXXX")
TOKEN_FILE="$WORK/token"
(umask 077 && echo "replay-hosts-$$" >"$TOKEN_FILE")
cleanup() {
    netns_cleanup
    if [ -n "${KEEP:-}" ]; then echo "outputs kept in $WORK"; else rm -rf "$WORK"; fi
}
netns_setup 3
rc=$?
trap cleanup EXIT
[ $rc -eq 0 ] || { echo "FAIL: cannot set up 3 namespaces"; exit 1; }
FAILED=0
fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

pids=()
for i in 0 1 2; do
    netns_run $i "$BIN" replay "$TRACE" --backend tcp --gaps none -T 30 --nnodes 3 --node-rank $i \
        --master-addr "$(netns_addr 0)" --master-port "$PORT" --job-token-file "$TOKEN_FILE" \
        --csv "$WORK/node$i.csv" >"$WORK/node$i.out" 2>&1 &
    pids+=($!)
done
netns_wait_all "${pids[@]}"
[ "$(echo $RCS)" = "0 0 0" ] || { fail "exit codes $RCS"; cat "$WORK"/node*.out >&2; }
calls=$(cat "$TRACE"/rank*.jsonl | grep -c '"seq"')
grep -q "^ *all *all *$calls " "$WORK/node0.out" ||
    fail "node 0: no table of all $calls calls: $(cat "$WORK/node0.out")"
[ -s "$WORK/node0.csv" ] || fail "node 0 wrote no CSV"
[ -e "$WORK/node1.csv" ] || [ -e "$WORK/node2.csv" ] && fail "a node other than 0 wrote the CSV"

# 2 hosts x 1 rank is not the trace's world of 3: refused on the node itself
netns_run 0 "$BIN" replay "$TRACE" --nnodes 2 --node-rank 0 --master-addr "$(netns_addr 0)" \
    --master-port "$PORT" --job-token-file "$TOKEN_FILE" >"$WORK/bad.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "nnodes 2 x --nproc-per-node 1 ranks differ from the trace's world of 3" "$WORK/bad.out" ||
    fail "--nnodes 2 on a 3-rank trace: exit $rc: $(cat "$WORK/bad.out")"

[ $FAILED -eq 0 ] && echo "PASS: three_ranks replayed on 3 hosts, its subgroup across two"
exit $FAILED
