#!/usr/bin/env python3
"""torch.distributed's gloo all-reduce (float32 sum, in place, as torch does it),
timed as collbench times a call: the slowest rank's mean over ITERS calls after
WARMUP, a barrier before each size. One line per size on rank 0:
"NPROCS BYTES TIME_US".

    torch_gloo_allreduce.py NPROCS ITERS WARMUP BYTES...
"""
import os
import socket
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, world, port, iters, warmup, sizes):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    for nbytes in sizes:
        t = torch.ones(nbytes // 4, dtype=torch.float32)
        for _ in range(warmup):
            dist.all_reduce(t)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        mean = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
        dist.all_reduce(mean, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(world, nbytes, f"{mean.item() * 1e6:.3f}", flush=True)
    dist.destroy_process_group()


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    world, iters, warmup = (int(a) for a in sys.argv[1:4])
    sizes = [int(a) for a in sys.argv[4:]]
    import torch.multiprocessing as mp

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.spawn(rank_main, args=(world, free_port(), iters, warmup, sizes), nprocs=world)


if __name__ == "__main__":
    main()
