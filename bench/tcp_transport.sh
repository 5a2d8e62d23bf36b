#!/bin/sh
# TCP transport ping-pong vs a plain blocking send/recv loop, both on loopback.
#   bench/tcp_transport.sh [max_mib (64)] [iters (20)]
# Runs build/bench/tcp_pingpong (the CMake target tcp_pingpong, built here if
# missing; COLLBENCH_BUILD names another build directory, TCP_PINGPONG the
# program itself) and prints latency (8 B) and bandwidth (1 MiB .. max_mib).
# COLL_TCP_SOCKBUF=bytes changes the transport's socket buffers (0: kernel autotuning).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COLLBENCH_BUILD:-$root/build}
prog=${TCP_PINGPONG:-$build/bench/tcp_pingpong}
if [ ! -x "$prog" ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" >/dev/null
    cmake --build "$build" --target tcp_pingpong >/dev/null
fi
"$prog" "$@"
