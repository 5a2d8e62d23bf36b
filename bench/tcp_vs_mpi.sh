#!/usr/bin/env bash
# collbench's tcp backend against Open MPI restricted to TCP on loopback
# (--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo), all-reduce
# float32 sum out-of-place, alternated: each round runs every process count and
# size on both, one launch per size, tcp first in odd rounds and mpi first in
# even ones, so both sides of a ratio see the same load. Prints, per size and
# process count, the speed ratio mpi p50 time / tcp p50 time (>= 1.00: tcp at
# least as fast; issue 50's target: >= 1.0 everywhere, >= 1.5 from 100 MiB),
# the median over the rounds, as a markdown table, with the machine and load.
#
# The exchange, timed the same way in the same rounds: tcp's sendrecv (each
# rank sends to the next and receives from the previous, one message each way)
# of 2(n-1)/n x the size, the bytes every rank of a bandwidth-optimal
# all-reduce must send and receive (the ring's and the pair's), without the
# reduction. Where bandwidth bounds both (100 MiB) it is what moving the bytes
# through this transport costs here; at middle sizes a pipelined all-reduce
# can come in under it (many messages in flight against one). The table gives
# each side's time over it, and what a 1.5x target asks of tcp in its terms.
#
#   bench/tcp_vs_mpi.sh   (env: COLLBENCH, PROCS (2,4), SIZES (8,64K,1M,10M,100M),
#                          ROUNDS (2), ITERS (20) and WARMUP (5) from 1 MiB up,
#                          SMALL_ITERS (500) and SMALL_WARMUP (50) below, OUT)
# The mpi side is `collbench allreduce --backend mpi`, launched by collbench
# through mpirun with the flags above in COLLBENCH_MPIRUN_ARGS. Exit 77 (a skip
# for ctest), saying why, without mpirun in PATH or the mpi backend in the build.
# Smallest run (ctest bench/tcp_vs_mpi): PROCS=2 SIZES=4K ROUNDS=1 SMALL_ITERS=2.
#
# NETNS=1: the same on 2 emulated hosts, 1 rank each (network namespaces joined
# by a veth pair, tests/netns/netns_lib.sh; needs root). mpirun launches both
# sides there (an rsh agent runs `ip netns exec` where ssh would log in), each
# host's rank pinned to its own CPU by taskset (mpirun --bind-to none,
# collbench --bind none), Open MPI's TCP BTL on the veth's network. PROCS is 2.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
PROCS=${PROCS:-2,4}
SIZES=${SIZES:-8,64K,1M,10M,100M}
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
SMALL_ITERS=${SMALL_ITERS:-500}
SMALL_WARMUP=${SMALL_WARMUP:-50}
OUT=${OUT:-$(mktemp -d)}
NETNS=${NETNS:-0}
MPI_TCP_ONLY="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
command -v mpirun >/dev/null || { echo "tcp_vs_mpi: skipped: no mpirun in PATH (apt-get install openmpi-bin)"; exit 77; }
"$BIN" info | grep -Eq "^ *backend mpi +available" ||
    { echo "tcp_vs_mpi: skipped: the mpi backend is not in this build (apt-get install libopenmpi-dev, rebuild)"; exit 77; }
mkdir -p "$OUT"
WHERE=loopback
if [ "$NETNS" = 1 ]; then
    . "$(cd "$(dirname "$0")" && pwd)/../tests/netns/netns_lib.sh"
    netns_require
    netns_setup 2 || { echo "tcp_vs_mpi: cannot set up 2 network namespaces" >&2; exit 1; }
    PROCS=2
    WHERE="2 emulated hosts (netns + veth), 1 rank each"
    A0=$(netns_addr 0) A1=$(netns_addr 1)
    BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
    # "HOST command...": the command in HOST's namespace, on HOST's CPU.
    cat >"$OUT/agent.sh" <<AGENT
#!/bin/bash
case "\$1" in
$A0) ns=$(netns_name 0) cpu=0 ;;
$A1) ns=$(netns_name 1) cpu=1 ;;
*) echo "agent: unknown host \$1" >&2; exit 1 ;;
esac
shift
exec ip netns exec "\$ns" taskset -c "\$cpu" /bin/sh -c "\$*"
AGENT
    chmod +x "$OUT/agent.sh"
fi
rm -f "$OUT"/tcp.r*.csv "$OUT"/mpi.r*.csv "$OUT"/exchange.r*.csv

bytes() { # 64K -> 65536
    case $1 in
    *K) echo $((${1%K} * 1024)) ;;
    *M) echo $((${1%M} * 1048576)) ;;
    *G) echo $((${1%G} * 1073741824)) ;;
    *) echo "$1" ;;
    esac
}

run() { # side (tcp, mpi or exchange) ranks size round
    local n=$ITERS w=$WARMUP coll=allreduce backend=$1 size=$3
    if [ "$(bytes "$3")" -lt 1048576 ]; then n=$SMALL_ITERS w=$SMALL_WARMUP; fi
    if [ "$1" = exchange ]; then # every rank's bytes each way: 2(n-1)/n x the size
        coll=sendrecv backend=tcp size=$((2 * ($2 - 1) * $(bytes "$3") / $2))
    fi
    local args=($coll --sizes "$size" -P "$2" --inplace 0 -n "$n" -w "$w" -q --backend "$backend"
        --csv "$OUT/$1.r$4.csv")
    if [ "$NETNS" = 1 ]; then # mpirun on host 0 (CPU 0) starts both sides
        netns_run 0 taskset -c 0 env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT \
            -u COLL_LISTEN_ADDR mpirun --allow-run-as-root --host "$A0:1,$A1:1" -np 2 --bind-to none \
            --mca plm_rsh_agent "$OUT/agent.sh" --mca oob_tcp_if_include "$NETNS_NET/24" \
            --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$NETNS_NET/24" \
            "$BIN" "${args[@]}" --bind none >"$OUT/$1.log" 2>&1 ||
            { echo "tcp_vs_mpi: $1 on 2 hosts failed: $(tail -n 5 "$OUT/$1.log")" >&2; exit 1; }
    elif [ "$backend" = mpi ]; then
        COLLBENCH_MPIRUN_ARGS="$MPI_TCP_ONLY ${COLLBENCH_MPIRUN_ARGS:-}" "$BIN" "${args[@]}" >/dev/null
    else
        "$BIN" "${args[@]}" >/dev/null
    fi
}

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "machine: ${cpu:-unknown CPU}, $(getconf _NPROCESSORS_ONLN) CPUs online; load before:$(uptime | sed 's/.*load average: */ /')"
IFS=, read -r -a plist <<<"$PROCS"
IFS=, read -r -a slist <<<"$SIZES"
for ((r = 1; r <= ROUNDS; r++)); do
    for p in "${plist[@]}"; do
        for s in "${slist[@]}"; do
            if ((r % 2)); then run tcp "$p" "$s" "$r"; run mpi "$p" "$s" "$r"; run exchange "$p" "$s" "$r"
            else run exchange "$p" "$s" "$r"; run mpi "$p" "$s" "$r"; run tcp "$p" "$s" "$r"; fi
        done
    done
done
echo "load after:$(uptime | sed 's/.*load average: */ /')"

echo
echo "all-reduce float32 sum, out-of-place, $WHERE, the median over $ROUNDS alternated rounds."
echo "mpi / tcp: mpi p50 / tcp p50 (>= 1.00: tcp at least as fast; tcp us / mpi us, medians)."
echo "tcp, mpi x exchange: each side's p50 over that of tcp's sendrecv of 2(n-1)/n x the size"
echo "(the bytes each rank sends and receives, no reduction). 1.5x needs: the tcp time, in"
echo "exchanges, that mpi / tcp = 1.5 asks (below 1.00: faster than moving the bytes alone)."
echo "CSVs in $OUT"
echo
# columns by name (the CSV header, docs/DESIGN.md); an exchange row's bytes are
# 2(n-1)/n x the all-reduce size it stands for
awk -F, -v rounds="$ROUNDS" -f "$(dirname "$0")/rounds.awk" -f /dev/stdin \
  "$OUT"/tcp.r*.csv "$OUT"/mpi.r*.csv "$OUT"/exchange.r*.csv <<'AWK'
  FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; be = FILENAME; sub(/.*\//, "", be); sub(/\..*/, "", be)
             rd = FILENAME; sub(/.*\.r/, "", rd); sub(/\.csv$/, "", rd); next }
  { s = $col["bytes"]; p = $col["nprocs"]
    if (be == "exchange") s = int(s * p / (2 * (p - 1)) + 0.5)
    t[be, s, p, rd] = $col["time_us_p50"]
    if ($col["wrong"] != "0") wrong = wrong " " be "/" p "/" s
    if (be == "exchange") next
    if (!(s in sz)) { sz[s] = 1; sizes[++ns] = s }
    if (!(p in pr)) { pr[p] = 1; procs[++np] = p } }
  END {
    printf "| bytes |"; for (j = 1; j <= np; j++) printf " %s ranks: mpi / tcp | tcp x exchange | mpi x exchange | 1.5x needs |", procs[j]; printf "\n"
    printf "|---|"; for (j = 1; j <= np; j++) printf "---|---|---|---|"; printf "\n"
    for (i = 1; i <= ns; i++) {
      printf "| %s |", sizes[i]
      for (j = 1; j <= np; j++) {
        rl = tl = ml = tf = mf = ""
        for (r = 1; r <= rounds; r++) {
          k1 = "tcp" SUBSEP sizes[i] SUBSEP procs[j] SUBSEP r; k2 = "mpi" SUBSEP sizes[i] SUBSEP procs[j] SUBSEP r
          k3 = "exchange" SUBSEP sizes[i] SUBSEP procs[j] SUBSEP r
          if (!(k1 in t) || !(k2 in t) || t[k1] <= 0) continue
          rl = rl " " t[k2] / t[k1]; tl = tl " " t[k1]; ml = ml " " t[k2]
          if ((k3 in t) && t[k3] > 0) { tf = tf " " t[k1] / t[k3]; mf = mf " " t[k2] / t[k3] }
        }
        if (rl == "") { printf " - | - | - | - |"; continue }
        ratio = median(rl)
        printf " %.2f (%.1f / %.1f) |", ratio, median(tl), median(ml)
        if (tf == "") printf " - | - | - |"
        else printf " %.2f | %.2f | %.2f |", median(tf), median(mf), median(mf) / 1.5
        if (ratio < 1.0 || (sizes[i] >= 100 * 1048576 && ratio < 1.5)) below = below " " procs[j] "x" sizes[i]
      }
      printf "\n"
    }
    printf "\nbelow target (1.0, 1.5 from 100 MiB):%s\n", below ? below : " none"
    if (wrong) { printf "WRONG results in:%s\n", wrong; exit 1 }
  }
AWK
