#!/bin/sh
# Unavailable backends and devices: exit 4 with a message that says why.
. "$(dirname "$0")/lib.sh"

expect_exit 4 "mpi" allreduce --backend mpi --sizes 1K -P 2
expect_exit 4 "nccl" allreduce --backend nccl --sizes 1K -P 2
expect_exit 4 "cuda" allreduce --device cuda --sizes 1K -P 2
expect_exit 2 "\-\-backend" allreduce --backend pigeon
finish
