#!/usr/bin/env python3
"""DDP training-step time on the seeds' MLP (1024-4096-4096-2048-10, batch 64,
SGD), 2 ranks by default: gloo, coll, coll with the coll allocator on, and the
same step without DDP (no communication). Exposed communication = DDP step -
no-DDP step. Prints one line per mode (median step time of --steps after
--warmup untimed steps, slowest rank).

    torch_ddp_step.py [--nprocs 2] [--steps 20] [--warmup 3]
                      [--modes none,gloo,coll,none-alloc,coll-alloc] [--tiny]
                      [--bucket-view]

coll: DDP's buckets in private memory (libcoll copies them through its
segment). coll-alloc: collbench_torch.use_coll_allocator() before the model
and DDP are built, so parameters, buckets and every other CPU tensor of at
least 64 KiB are libcoll memory (shm: the direct all-reduce; docs/TORCH.md).
none-alloc: the step without DDP with that allocator on, coll-alloc's
baseline (the allocator's block cache alone makes the step faster).
--tiny uses a 64-128-10 MLP (smoke runs; --tiny's coll-alloc uses
min_bytes 4 KiB, its one bucket being 38 KiB). The coll modes need
collbench_torch on PYTHONPATH (build/bindings/torch).
"""
import argparse
import os
import socket
import statistics
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, world, port, mode, steps, warmup, tiny, bucket_view, q):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    backend, ddp, alloc, _ = MODES[mode]
    if backend == "coll":
        import collbench_torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    if alloc:  # before the model and DDP: parameters and buckets in coll memory
        collbench_torch.use_coll_allocator(min_bytes=4096 if tiny else 64 * 1024)
    dims = [64, 128, 10] if tiny else [1024, 4096, 4096, 2048, 10]
    torch.manual_seed(0)
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    if ddp:
        model = DDP(model, gradient_as_bucket_view=bucket_view)
    first = model.module[0] if ddp else model[0]
    if alloc and not collbench_torch.is_coll_memory(first.weight):
        raise RuntimeError(f"{mode}: the parameters are not in coll memory")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(64, dims[0], generator=g)
    y = torch.randint(0, dims[-1], (64,), generator=g)
    times = []
    for i in range(warmup + steps):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    tt = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(tt, op=dist.ReduceOp.MAX, group=None)
    if rank == 0:
        q.put(statistics.median(tt.tolist()) * 1e3)
    dist.destroy_process_group()


def result(q, procs, mode):
    """Rank 0's median, or exit 1 naming the mode once a rank has died without it."""
    import queue
    while True:
        try:
            return q.get(timeout=1)
        except queue.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if dead or all(p.exitcode is not None for p in procs):
                for p in procs:
                    p.kill()
                sys.exit(f"torch_ddp_step: mode {mode}: a rank exited ({dead}) without a result")


# mode: (process group backend, DDP, coll allocator, the no-DDP mode its
# exposed communication is measured against). "none" still joins a gloo
# group, only to report the slowest rank; "none-alloc" a coll group, for its
# allocator. Like for like: the allocator alone changes the step (no page
# faults on reused blocks), so coll-alloc is compared with none-alloc.
MODES = {
    "none": ("gloo", False, False, None),
    "gloo": ("gloo", True, False, "none"),
    "coll": ("coll", True, False, "none"),
    "none-alloc": ("coll", False, True, None),
    "coll-alloc": ("coll", True, True, "none-alloc"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nprocs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--modes", default="none,gloo,coll,none-alloc,coll-alloc")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--bucket-view", action="store_true",
                    help="DDP(gradient_as_bucket_view=True) in every DDP mode: gradients are "
                         "views of the buckets, no copy into them")
    a = ap.parse_args()
    import torch.multiprocessing as mp
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ctx = mp.get_context("spawn")
    res = {}
    for mode in a.modes.split(","):
        if mode not in MODES:
            ap.error(f"unknown mode {mode!r} ({', '.join(MODES)})")
        q = ctx.Queue()
        port = free_port()
        procs = [ctx.Process(target=rank_main,
                             args=(r, a.nprocs, port, mode, a.steps, a.warmup, a.tiny,
                                   a.bucket_view, q))
                 for r in range(a.nprocs)]
        for p in procs:
            p.start()
        res[mode] = result(q, procs, mode)
        for p in procs:
            p.join()
        bname = MODES[mode][3]
        base = res.get(bname)
        extra = f"  exposed comm {res[mode] - base:9.1f} ms (vs {bname})" if base is not None else ""
        print(f"ddp-step mode {mode:4s} nprocs {a.nprocs} {'tiny' if a.tiny else 'mlp'}: "
              f"median step {res[mode]:9.1f} ms{extra}", flush=True)


if __name__ == "__main__":
    main()
