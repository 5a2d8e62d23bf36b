#!/bin/sh
# TCP transport ping-pong vs a plain blocking send/recv loop, both on loopback.
#   bench/tcp_transport.sh [max_mib (64)] [iters (20)]
# Runs build/bench/tcp_pingpong (the CMake target tcp_pingpong, built here if
# missing; COLLBENCH_BUILD names another build directory) and prints latency
# (8 B) and bandwidth (1 MiB .. max_mib).
# COLL_TCP_SOCKBUF=bytes changes the transport's socket buffers (0: kernel autotuning).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COLLBENCH_BUILD:-$root/build}
if [ ! -x "$build/bench/tcp_pingpong" ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" >/dev/null
    cmake --build "$build" --target tcp_pingpong >/dev/null
fi
"$build/bench/tcp_pingpong" "$@"
