#!/bin/sh
# TCP transport ping-pong vs a plain blocking send/recv loop, both on loopback.
#   bench/tcp_transport.sh [max_mib (64)] [iters (20)]
# Builds bench/tcp_pingpong.c with the transport sources it needs (no CMake
# build required) and prints latency (8 B) and bandwidth (1 MiB .. max_mib).
# COLL_TCP_SOCKBUF=bytes changes the transport's socket buffers (0: kernel autotuning).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${TMPDIR:-/tmp}/collbench-tcp-pingpong.$$
trap 'rm -f "$out"' EXIT
${CC:-cc} -std=c11 -D_GNU_SOURCE -O3 -I"$root/include" -I"$root/src" \
    "$root/bench/tcp_pingpong.c" "$root"/src/transport/tcp/*.c \
    "$root/src/bootstrap/store_mem.c" "$root/src/core/sock.c" "$root/src/core/sig.c" \
    "$root/src/core/status.c" "$root/src/core/dtype.c" -lpthread -lm -o "$out"
"$out" "$@"
