#!/usr/bin/env python3
"""The seeds' kind of DDP training as a program to record (bench/record_ddp.sh):
the MLP 1024-4096-4096-2048-10 (batch 64, SGD; --tiny: 64-128-10) under torch
DDP on --nprocs ranks for --steps steps, each rank its own seeded data, and
nothing else: no barriers, no timing collectives, so that a trace holds the
program's own communication (DDP's parameter broadcast, then its bucketed
gradient all-reduces every step).

    ddp_program.py --backend coll|gloo [--nprocs 2] [--steps 20] [--tiny]
                   [--profile DIR]

--backend coll: set COLL_TRACE=DIR to record (docs/TORCH.md "Recording a
trace"); collbench_torch must be on PYTHONPATH. --profile DIR: the steps run
under torch.profiler (CPU, record_shapes=True) and each rank writes
DIR/rank<R>.json with export_chrome_trace. Exits non-zero when a rank fails
or the run outlasts --timeout.
"""
import argparse
import os
import socket
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(model, steps, dims, rank):
    import torch
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(64, dims[0], generator=g)
    y = torch.randint(0, dims[-1], (64,), generator=g)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def rank_main(rank, world, port, args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    if args.backend == "coll":
        import collbench_torch  # noqa: F401  registers "coll"
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group(args.backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    dims = [64, 128, 10] if args.tiny else [1024, 4096, 4096, 2048, 10]
    torch.manual_seed(0)
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(torch.nn.ReLU())
    model = DDP(torch.nn.Sequential(*layers))
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            train(model, args.steps, dims, rank)
        os.makedirs(args.profile, exist_ok=True)
        prof.export_chrome_trace(os.path.join(args.profile, f"rank{rank}.json"))
    else:
        train(model, args.steps, dims, rank)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", required=True, choices=["coll", "gloo"])
    ap.add_argument("--nprocs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--profile", metavar="DIR")
    ap.add_argument("--timeout", type=float, default=900,
                    help="seconds for the whole run; then the ranks are killed")
    args = ap.parse_args()
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    port = free_port()
    procs = [ctx.Process(target=rank_main, args=(r, args.nprocs, port, args))
             for r in range(args.nprocs)]
    for p in procs:
        p.start()
    import time
    deadline = time.monotonic() + args.timeout
    failed = []
    for r, p in enumerate(procs):
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():  # a rank that failed leaves the others waiting
            for q in procs:
                q.kill()
            sys.exit(f"ddp_program.py: ranks still running after {args.timeout:.0f} s: killed")
        if p.exitcode != 0:
            failed.append(r)
    if failed:
        sys.exit(f"ddp_program.py: ranks {failed} failed")


if __name__ == "__main__":
    main()
