#!/bin/bash
# mpirun across two emulated hosts: network namespaces joined by a veth pair,
# Open MPI's daemon started in the second one by an rsh agent that runs
# `ip netns exec <host>` where ssh would log in (--mca plm_rsh_agent).
# 2 hosts x 1 and x 2 ranks, backends mpi, tcp and auto, results checked
# (-c 1): every rank's launcher environment (OMPI_COMM_WORLD_*) is all they get,
# the store's address and token come from rank 0 by MPI_Bcast, and auto runs
# shm inside a host and tcp between. Exit 77 (skip) without root, ip netns or mpirun.
BIN=${1:?usage: $0 path/to/collbench}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netns_lib.sh"
FAILED=0
netns_require
if ! command -v mpirun >/dev/null 2>&1 || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    echo "SKIP: no Open MPI mpirun (the rsh agent is Open MPI's --mca plm_rsh_agent)"
    exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-mpirun.XXXXXX")
cleanup() {
    netns_cleanup
    if [ -n "${KEEP:-}" ]; then echo "outputs kept in $WORK"; else rm -rf "$WORK"; fi
}
netns_setup 2
rc=$?
trap cleanup EXIT
[ $rc -eq 0 ] || { echo "FAIL: cannot set up 2 namespaces"; exit 1; }
A0=$(netns_addr 0)
A1=$(netns_addr 1)

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# The agent: "HOST command..." runs the command in HOST's namespace.
cat >"$WORK/agent.sh" <<AGENT
#!/bin/bash
case "\$1" in
$A0) ns=$(netns_name 0) ;;
$A1) ns=$(netns_name 1) ;;
*) echo "agent: unknown host \$1" >&2; exit 1 ;;
esac
shift
exec ip netns exec "\$ns" /bin/sh -c "\$*"
AGENT
chmod +x "$WORK/agent.sh"

# mpirun_job TAG PER_HOST ARGS...: mpirun on host 0, ranks on both hosts.
mpirun_job() {
    local tag=$1 m=$2
    shift 2
    netns_run 0 env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u COLL_LISTEN_ADDR \
        -u COLL_JOB_TOKEN -u COLL_JOB_TOKEN_FILE \
        mpirun --allow-run-as-root --oversubscribe --host "$A0:$m,$A1:$m" -np $((2 * m)) \
        --mca plm_rsh_agent "$WORK/agent.sh" --mca oob_tcp_if_include "$NETNS_NET/24" \
        --mca btl tcp,self --mca btl_tcp_if_include "$NETNS_NET/24" \
        "$BIN" "$@" >"$WORK/$tag.out" 2>&1
    RC=$?
}

for m in 1 2; do
    for backend in mpi tcp auto; do
        tag="$backend.$m"
        csv="$WORK/$tag.csv"
        mpirun_job "$tag" $m allreduce --backend $backend --sizes 1028,1M -w 1 -n 2 -c 1 -T 60 -v \
            --csv "$csv"
        if [ $RC -ne 0 ]; then
            fail "mpirun 2 hosts x $m, $backend: exit $RC: $(tail -n 20 "$WORK/$tag.out")"
            continue
        fi
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                 $col["nnodes"] != 2 || $col["wrong"] != 0 { bad = 1 } END { exit bad || NR < 2 }' \
            "$csv" || fail "mpirun 2 hosts x $m, $backend: CSV rows without nnodes 2 and wrong 0: $(cat "$csv")"
        if [ $backend = auto ]; then
            plan="auto: 2 hosts, 1 ranks on this one; .*inter-host tcp"
            [ $m -eq 2 ] && plan="auto: 2 hosts, 2 ranks on this one; intra-host shm, inter-host tcp; all-reduce hierarchical"
            grep -q "$plan" "$WORK/$tag.out" || fail "mpirun 2 hosts x $m, auto: plan is not '$plan': $(grep 'auto:' "$WORK/$tag.out")"
        fi
    done
done
echo "checked: mpirun across 2 namespaces, 2 hosts x 1 and x 2 ranks, mpi, tcp and auto, -c 1"
[ $FAILED -eq 0 ] && echo PASS
exit $FAILED
