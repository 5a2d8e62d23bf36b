#!/bin/sh
# Unavailable backends and devices: exit 4 with a message that says why. A
# tuning variable that is not a number in range: exit 2 naming it.
. "$(dirname "$0")/lib.sh"

# mpi: exit 4 only in a build without MPI (or without mpirun); else it runs.
if "$BIN" info | grep -q "mpi.*unavailable"; then
    expect_exit 4 "mpi" allreduce --backend mpi --sizes 1K -P 2
else
    expect_exit 0 "" allreduce --backend mpi --sizes 1K -P 2 -n 2 -w 1
fi
# gloo: exit 4 only in a build without Gloo, with how to get it; else it runs.
if "$BIN" info | grep -q "backend gloo.*unavailable"; then
    expect_exit 4 "libgloo-dev" allreduce --backend gloo --sizes 1K -P 2
else
    expect_exit 0 "" allreduce --backend gloo --sizes 1K -P 2 -n 2 -w 1
fi
expect_exit 4 "nccl" allreduce --backend nccl --sizes 1K -P 2
expect_exit 4 "cuda" allreduce --device cuda --sizes 1K -P 2
expect_exit 2 "\-\-backend" allreduce --backend pigeon
COLL_SHM_CHUNK_BYTES=12x expect_exit 2 "COLL_SHM_CHUNK_BYTES=12x: not a byte count" \
    allreduce --backend shm --sizes 1K -P 2 -n 2 -w 1
COLL_SHM_CHUNK_BYTES=32 expect_exit 2 "COLL_SHM_CHUNK_BYTES=32: must be from 64" \
    allreduce --backend shm --sizes 1K -P 2 -n 2 -w 1
COLL_SHM_CMA=off expect_exit 2 "COLL_SHM_CMA=off: must be 0 or 1" allreduce --backend shm --sizes 1K -P 2 -n 2 -w 1
COLL_TCP_SOCKBUF=lots expect_exit 2 "COLL_TCP_SOCKBUF=lots" allreduce --backend tcp --sizes 1K -P 2 -n 2 -w 1
finish
