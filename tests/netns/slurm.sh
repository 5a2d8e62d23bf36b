#!/bin/bash
# The real Slurm (Debian's slurm-wlm and munge) across two emulated hosts: one
# munged, one slurmctld, and one slurmd per network namespace (NodeName n0,
# n1; slurmd -N), with a slurm.conf, spool, state and logs generated in a
# temporary directory and everything stopped at the end. Then, as a user types
# them (no MASTER_ADDR, no MASTER_PORT: the store's host is the step's first
# node, its port derived from the job and step ids):
#   srun -N 2 --ntasks-per-node 1|2 collbench allreduce --backend tcp|auto  (checked, -c 1)
#   sbatch --wait of a job script running two srun steps at once, each writing --csv
#   srun --mpi=pmix ... --backend mpi (skipped, naming the piece, where missing)
#   a rank killed under srun: the survivors exit 3 naming it within 2 s
# Exit 77 (skip) naming what is missing: root, ip netns, slurm-wlm or munge.
BIN=${1:?usage: $0 path/to/collbench}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netns_lib.sh"
FAILED=0
for tool in slurmctld slurmd srun sbatch munged; do
    command -v $tool >/dev/null 2>&1 ||
        { echo "SKIP: $tool is missing (apt-get install slurm-wlm munge; scripts/deps.sh with COLL_DEPS_ALL=1)"; exit 77; }
done
id munge >/dev/null 2>&1 || { echo "SKIP: no munge user (apt-get install munge)"; exit 77; }
netns_require
BIN=$(readlink -f "$BIN")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-slurm.XXXXXX")
chmod 755 "$WORK"
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    netns_cleanup
    if [ -n "${KEEP:-}" ]; then echo "outputs kept in $WORK"; else rm -rf "$WORK"; fi
}
netns_setup 2
rc=$?
trap cleanup EXIT
[ $rc -eq 0 ] || { echo "FAIL: cannot set up 2 namespaces"; exit 1; }

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# Node names resolve for the daemons and their tasks only: each runs in its
# own mount namespace with this hosts file over /etc/hosts. Not ip netns exec:
# its fresh /sys would hide the cgroup mounts slurmd looks for.
printf '127.0.0.1 localhost\n%s n0\n%s n1\n' "$(netns_addr 0)" "$(netns_addr 1)" >"$WORK/hosts"
# in_host I CMD...: CMD on emulated host I.
in_host() {
    local i=$1
    shift
    nsenter --net="/run/netns/$(netns_name "$i")" unshare --mount --propagation private \
        bash -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$WORK/hosts" "$@"
}
# daemon I LOG CMD...: CMD in the background on host I, stopped at the end
# (the pid is CMD's own: nsenter, unshare and bash exec it).
daemon() {
    local i=$1 log=$2
    shift 2
    nsenter --net="/run/netns/$(netns_name "$i")" unshare --mount --propagation private \
        bash -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$WORK/hosts" "$@" >"$log" 2>&1 &
    PIDS+=($!)
}

# munged as the munge user, its own key and socket in WORK.
mkdir -m 711 "$WORK/munge" # the socket's directory: execute for all
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
chown -R munge: "$WORK/munge"
MSOCK="$WORK/munge/munge.socket"
runuser -u munge -- munged --socket="$MSOCK" --key-file="$WORK/munge/munge.key" \
    --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munge/munged.log" \
    --seed-file="$WORK/munge/munged.seed" --foreground >/dev/null 2>&1 &
PIDS+=($!)

# Ports inside the namespaces (each has its own), below the ephemeral range;
# TmpFS per node: both slurmds share this machine's /tmp, where PMIx would
# make the same directory for each step on both.
mkdir -p "$WORK/state" "$WORK/spool/n0" "$WORK/spool/n1" "$WORK/tmp/n0" "$WORK/tmp/n1"
CONF="$WORK/slurm.conf"
cat >"$CONF" <<EOF
ClusterName=collbench
SlurmctldHost=$(hostname)($(netns_addr 0))
SlurmctldPort=6817
SlurmdPort=6818
SrunPortRange=6900-6999
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MSOCK
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool/%n
TmpFS=$WORK/tmp/%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.%n.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillOnBadExit=0
NodeName=n0 NodeAddr=$(netns_addr 0) CPUs=4 State=UNKNOWN
NodeName=n1 NodeAddr=$(netns_addr 1) CPUs=4 State=UNKNOWN
PartitionName=test Nodes=n0,n1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$CONF"
for _ in $(seq 50); do [ -S "$MSOCK" ] && break; sleep 0.1; done
[ -S "$MSOCK" ] || { echo "FAIL: munged did not start: $(cat "$WORK/munge/munged.log")"; exit 1; }
daemon 0 "$WORK/slurmctld.out" slurmctld -D -i -f "$CONF"
for i in 0 1; do daemon $i "$WORK/slurmd.n$i.out" slurmd -D -N n$i -f "$CONF"; done
# Both nodes idle, within 30 s.
for _ in $(seq 300); do
    [ "$(in_host 0 sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" -eq 2 ] && break
    sleep 0.1
done
if [ "$(in_host 0 sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" -ne 2 ]; then
    echo "FAIL: the Slurm nodes did not come up: $(in_host 0 sinfo -N 2>&1)" >&2
    tail -n 5 "$WORK"/slurm*.log "$WORK"/*.out >&2
    exit 1
fi
echo "slurm up: $(in_host 0 sinfo -h -N -o '%N %t' | tr '\n' ' ')"

TOKEN_FILE="$WORK/token"
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE")
export COLL_JOB_TOKEN_FILE="$TOKEN_FILE"
unset MASTER_ADDR MASTER_PORT COLL_STORE_PORT RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE \
    COLL_LAUNCHED COLL_LISTEN_ADDR COLL_JOB_TOKEN
cd "$WORK" || exit 1

# csv_ok CSV NNODES: rows say NNODES hosts and 0 wrong, one header.
csv_ok() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             $col["nnodes"] != n || $col["wrong"] != 0 { bad = 1 } END { exit bad || NR < 2 }' "$1" &&
        [ "$(grep -c '^timestamp' "$1")" -eq 1 ]
}

# The commands README's "Multiple hosts" section shows, verbatim but for the
# path of collbench, the CSVs' and the tasks per node and backend varied.
before=$FAILED
for m in 1 2; do
    for backend in tcp auto; do
        csv="$WORK/srun.$m.$backend.csv"
        in_host 0 srun -N 2 --ntasks-per-node $m "$BIN" allreduce --backend $backend --sizes 1M -c 1 --csv "$csv" \
            >"$WORK/srun.$m.$backend.out" 2>&1
        rc=$?
        [ $rc -eq 0 ] || { fail "srun -N 2 --ntasks-per-node $m, $backend: exit $rc: $(tail -n 5 "$WORK/srun.$m.$backend.out")"; continue; }
        csv_ok "$csv" 2 || fail "srun -N 2 --ntasks-per-node $m, $backend: CSV: $(cat "$csv")"
    done
done
[ $FAILED = "$before" ] && echo "checked: srun -N 2 --ntasks-per-node 1 and 2, tcp and auto, -c 1"

# sbatch: two steps of one job at once (each on both nodes, so each one's
# rank 0 is on n0 with the other's: their derived ports must differ); rank 0
# writes each step's CSV.
cat >"$WORK/job.sh" <<EOF
#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node 2
srun --exact -N 2 -n 2 "$BIN" allreduce --backend tcp --sizes 1M -c 1 --csv "$WORK/step0.csv" &
srun --exact -N 2 -n 2 "$BIN" allreduce --backend tcp --sizes 1M -c 1 --csv "$WORK/step1.csv" &
wait %1 && wait %2
EOF
in_host 0 sbatch --wait -o "$WORK/sbatch.out" "$WORK/job.sh" >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] || fail "sbatch --wait: exit $rc: $(tail -n 5 "$WORK/sbatch.out")"
# slurmd's log: both steps of the job (J.0 and J.1, in either order) are
# launched before either one is done with the job.
overlap=$(awk 'match($0, /launch task StepId=[0-9]+\.[01] /) {
                   split(substr($0, RSTART + 19, RLENGTH - 20), id, ".")
                   if (id[1] != job) { job = id[1]; launched = 0; done = 0 }
                   if (++launched == 2 && done == 0) ok = 1 }
               match($0, /\[[0-9]+\.[01]\] done with job/) {
                   split(substr($0, RSTART + 1), id, ".")
                   if (id[1] == job) done++ }
               END { print ok + 0 }' "$WORK/slurmd.n0.log")
[ "$overlap" = 1 ] || fail "sbatch: the two steps did not run at once: $(grep 'StepId\|done with' "$WORK/slurmd.n0.log" | tail -n 6)"
if csv_ok "$WORK/step0.csv" 2 && csv_ok "$WORK/step1.csv" 2; then
    echo "checked: sbatch --wait, two srun steps at once, a CSV from each one's rank 0"
else
    fail "sbatch: CSVs: $(cat "$WORK/step0.csv" "$WORK/step1.csv" 2>&1) $(tail -n 5 "$WORK/sbatch.out")"
fi

# MPI through Slurm's PMIx plugin, where Debian's packages have it.
if ! in_host 0 srun --mpi=list 2>&1 | grep -qw pmix; then
    echo "SKIP part: srun --mpi=pmix: this Slurm has no mpi/pmix plugin (srun --mpi=list)"
elif ! "$BIN" info 2>/dev/null | grep -q "^ *backend mpi  *available"; then
    echo "SKIP part: srun --mpi=pmix: this collbench was built without the mpi backend"
else
    in_host 0 srun --mpi=pmix -N 2 --ntasks-per-node 1 "$BIN" allreduce --backend mpi --sizes 1M \
        -c 1 -T 60 --csv "$WORK/pmix.csv" >"$WORK/pmix.out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "srun --mpi=pmix, mpi: exit $rc: $(tail -n 5 "$WORK/pmix.out")"
    elif csv_ok "$WORK/pmix.csv" 2; then
        echo "checked: srun --mpi=pmix -N 2, --backend mpi, -c 1"
    else
        fail "srun --mpi=pmix: CSV: $(cat "$WORK/pmix.csv")"
    fi
fi

# Rank 3 (node n1) killed mid all-reduce: ranks 0-2 exit 3 naming it within 2 s.
cat >"$WORK/rank.sh" <<EOF
#!/bin/bash
"\$@" >"$WORK/kill.out.\$SLURM_PROCID" 2>&1
rc=\$?
echo "\$(date +%s.%N) \$rc" >"$WORK/kill.end.\$SLURM_PROCID"
exit \$rc
EOF
chmod +x "$WORK/rank.sh"
COLL_FAULT=3:collective:kill:1M in_host 0 srun -N 2 --ntasks-per-node 2 "$WORK/rank.sh" "$BIN" \
    allreduce --backend tcp --sizes 16M -w 1 -n 20 -c 0 -T 30 --time-budget 0 >"$WORK/kill.srun" 2>&1
if grep -q "COLL_FAULT: .* kill at collective" "$WORK/kill.out.3"; then
    t0=$(date -r "$WORK/kill.out.3" +%s.%N)
    for r in 0 1 2; do
        read -r end rc <"$WORK/kill.end.$r" || { fail "kill under srun: rank $r never ended"; continue; }
        msg=$(tr '\n' '|' <"$WORK/kill.out.$r")
        [ "$rc" = 3 ] || fail "kill under srun: rank $r exited $rc, want 3: $msg"
        printf '%s' "$msg" | grep -q "rank 3\b" || fail "kill under srun: rank $r does not name rank 3: $msg"
        late=$(awk -v e="$end" -v t="$t0" 'BEGIN { if (e - t > 2) printf "%.2f", e - t }')
        [ -z "$late" ] || fail "kill under srun: rank $r exited $late s after rank 3 died (bound 2 s)"
    done
    echo "checked: a rank killed under srun, named by the survivors within 2 s"
else
    fail "kill under srun: rank 3 did not report the fault: $(cat "$WORK/kill.out.3" "$WORK/kill.srun" 2>&1)"
fi

[ $FAILED -eq 0 ] && echo "PASS" || echo "FAIL"
exit $FAILED
