#!/bin/sh
# Where a tcp all-reduce's time goes (issue 50), layer by layer, across
# processes on loopback: the transport's one-way latency, one exchange, the
# algorithm on a raw transport, the public call, the nonblocking call and its
# wait (the progress thread's hand-off), the barrier and collbench's timing
# loop (barrier, then the timed call), each the slowest rank's p50, with
# the voluntary context switches (sleeps in poll) and the CPU time per call.
#   bench/tcp_latency.sh [ranks (2,4)] [sizes (8,64K,1M,10M)] [iters (0: by size)] [algo (auto)]
# Runs build/bench/tcp_latency (the CMake target tcp_latency, built here if
# missing; COLLBENCH_BUILD names another build directory, TCP_LATENCY the
# program itself). COLL_TCP_SPIN_US=0 shows the waits that sleep at once.
# Prints the machine and its load first: numbers from a busy machine are not
# the quiet machine's.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COLLBENCH_BUILD:-$root/build}
prog=${TCP_LATENCY:-$build/bench/tcp_latency}
if [ ! -x "$prog" ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" >/dev/null
    cmake --build "$build" --target tcp_latency >/dev/null
fi
ranks=${1:-2,4}
sizes=${2:-8,64K,1M,10M}
iters=${3:-0}
algo=${4:-auto}

bytes() { # 64K -> 65536
    case $1 in
    *K) echo $((${1%K} * 1024)) ;;
    *M) echo $((${1%M} * 1048576)) ;;
    *) echo "$1" ;;
    esac
}

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "# machine: ${cpu:-unknown CPU}, $(getconf _NPROCESSORS_ONLN) CPUs online"
echo "# load before:$(uptime | sed 's/.*load average: */ /')"
echo "# COLL_TCP_SPIN_US=${COLL_TCP_SPIN_US:-(default)} COLL_TCP_SOCKBUF=${COLL_TCP_SOCKBUF:-(default)}"
for p in $(echo "$ranks" | tr , ' '); do
    for s in $(echo "$sizes" | tr , ' '); do
        echo
        "$prog" "$p" "$(bytes "$s")" "$iters" "$algo"
    done
done
echo
echo "# load after:$(uptime | sed 's/.*load average: */ /')"
