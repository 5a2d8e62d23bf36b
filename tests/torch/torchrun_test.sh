#!/bin/sh
# The real torchrun, 3 ranks on this host, with its static rendezvous (the
# form of --master_addr/--master_port) on a free loopback port. Not
# --standalone: torch 2.6's c10d rendezvous makes its store with libuv
# whatever USE_LIBUV says, and Debian 13's torch has no libuv; the static one
# honours USE_LIBUV=0. --redirects/--tee: Debian's torch 1.13 under Python
# 3.11 cannot parse their defaults. torchrun exits non-zero when a rank does.
#   torchrun_test.sh TORCHRUN PYTHON SCRIPT
set -eu
port=$("$2" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
exec "$1" --redirects 1 --tee 1 --nnodes 1 --node_rank 0 --nproc_per_node 3 \
    --master_addr 127.0.0.1 --master_port "$port" "$3"
