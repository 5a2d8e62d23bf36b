#!/usr/bin/env python3
"""Small all-reduces through torch against the library's own, in one run
(issue 50): per round, libcoll's own shm all-reduce (collbench allreduce
--backend shm, in place) and one torch job, in turn (the order reversed every
other round: A B, B A, ...). The torch job's ranks hold three groups and
time, size by size, each group in turn (the order reversed every other size):

  coll         a coll group as made by default (small calls inline, docs/TORCH.md)
  coll-queued  a coll group made with COLL_TORCH_INLINE_BYTES=0 (every call
               through libcoll's progress thread and the completion thread)
  gloo         torch's gloo

each timed as bench/torch_allreduce.py times (per iteration a barrier of the
group, one timed dist.all_reduce of float32 sum in place; an iteration counts
at its slowest rank). Prints, per process count, each cell's p50 in us as the
median over rounds [smallest-largest round]; and (--breakdown) the smallest
size's path through the binding, from COLL_TRACE's timestamps (a job of its
own, every call recorded):

  enter     Python's call -> the binding's entry (torch's Python and C++ layers)
  return    the binding's entry -> the call returns (async_op=True): the enqueue,
            or the whole collective when inline
  complete  the binding's entry -> its Work completed (the recorded t1)
  wake      completion (or the return, if later) -> Work.wait() returns
  total     Python's call -> wait() returns

each the median over iterations of rank 0's.

    torch_latency.py --collbench BIN [--nprocs 2] [--sizes 8,64,4K,64K,1M]
                     [--rounds 3] [--iters 200] [--warmup 20] [--breakdown]
                     [--timeout 300]

Needs collbench_torch on PYTHONPATH (build/bindings/torch); bench/torch_latency.sh
runs it with the machine and its load printed.
"""
import argparse
import csv
import datetime
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_allreduce import free_port, parse_size, pct  # noqa: E402

CONFIGS = ("coll", "coll-queued", "gloo")
PARTS = ("enter", "return", "complete", "wake", "total")


def make_groups(dist):
    """The measured groups, in CONFIGS order: the env knob is read when a coll group is made."""
    inline = dist.new_group(backend="coll")
    os.environ["COLL_TORCH_INLINE_BYTES"] = "0"
    queued = dist.new_group(backend="coll")
    del os.environ["COLL_TORCH_INLINE_BYTES"]
    return {"coll": inline, "coll-queued": queued, "gloo": dist.new_group(backend="gloo")}


def timed_job(rank, world, port, sizes, iters, warmup, flip, q):
    import torch
    import torch.distributed as dist
    import collbench_torch  # noqa: F401  registers the backend
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    groups = make_groups(dist)
    for si, nbytes in enumerate(sizes):
        order = CONFIGS if (si + flip) % 2 == 0 else tuple(reversed(CONFIGS))
        for name in order:
            g = groups[name]
            t = torch.ones(max(nbytes // 4, 1), dtype=torch.float32)
            for _ in range(warmup):
                dist.all_reduce(t, group=g)
            times = torch.zeros(iters, dtype=torch.float64)
            for i in range(iters):
                dist.barrier(group=g)
                start = time.perf_counter()
                dist.all_reduce(t, group=g)
                times[i] = time.perf_counter() - start
            dist.all_reduce(times, op=dist.ReduceOp.MAX)  # at the slowest rank (default gloo)
            t.fill_(rank + 1)
            dist.all_reduce(t, group=g)
            wrong = int((t != world * (world + 1) / 2).sum().item())
            if rank == 0:
                s = sorted(x * 1e6 for x in times.tolist())
                q.put((name, nbytes, pct(s, 50), wrong))
    dist.destroy_process_group()


def breakdown_job(rank, world, port, nbytes, iters, warmup, q):
    """Every call recorded (COLL_TRACE, set by the parent); Python's clock
    beside the recorded t0/t1 (both CLOCK_MONOTONIC)."""
    import torch
    import torch.distributed as dist
    import collbench_torch  # noqa: F401
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    groups = make_groups(dist)
    stamps = {}
    for name in ("coll", "coll-queued"):
        g = groups[name]
        t = torch.ones(max(nbytes // 4, 1), dtype=torch.float32)
        for _ in range(warmup):
            dist.all_reduce(t, group=g)
        rows = []
        for _ in range(iters):
            dist.barrier(group=g)
            p0 = time.monotonic_ns()
            w = dist.all_reduce(t, group=g, async_op=True)
            p1 = time.monotonic_ns()
            w.wait()
            rows.append((p0, p1, time.monotonic_ns()))
        stamps[name] = rows
    dist.destroy_process_group()
    if rank == 0:
        q.put(stamps)


def spawn(target, world, args, timeout, env=None):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        procs = [ctx.Process(target=target, args=(r, world, port) + args + (q,))
                 for r in range(world)]
        for p in procs:
            p.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return procs, q


def collect(procs, q, n, timeout, what):
    got = []
    for _ in range(n):
        try:
            got.append(q.get(timeout=timeout))
        except queue.Empty:
            for p in procs:
                p.kill()
            sys.exit(f"torch_latency: {what}: no result within {timeout} s (a rank failed?)")
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        sys.exit(f"torch_latency: a rank of {what} failed")
    return got


def run_torch(world, sizes, iters, warmup, flip, timeout):
    procs, q = spawn(timed_job, world, (sizes, iters, warmup, flip), timeout)
    res = {}
    for name, nbytes, p50, wrong in collect(procs, q, len(sizes) * len(CONFIGS), timeout,
                                            f"torch x {world}"):
        if wrong:
            sys.exit(f"torch_latency: {name} x {world} at {nbytes} B: wrong results")
        res[(name, nbytes)] = p50
    return res


def run_shm(collbench, world, sizes, iters, warmup, timeout):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "shm.csv")
        cmd = [collbench, "allreduce", "--backend", "shm", "-P", str(world), "--sizes",
               ",".join(str(s) for s in sizes), "-n", str(iters), "-w", str(warmup),
               "--inplace", "1", "-d", "float32", "-o", "sum", "-c", "1", "-q", "--csv", out]
        r = subprocess.run(cmd, timeout=timeout)
        if r.returncode != 0:
            sys.exit(f"torch_latency: {' '.join(cmd)}: exit {r.returncode}")
        with open(out) as f:
            return {("shm", int(row["bytes"])): float(row["time_us_p50"])
                    for row in csv.DictReader(f)}


def breakdown(world, nbytes, iters, warmup, timeout):
    with tempfile.TemporaryDirectory() as d:
        procs, q = spawn(breakdown_job, world, (nbytes, iters, warmup), timeout,
                         {"COLL_TRACE": d})
        stamps = collect(procs, q, 1, timeout, f"breakdown x {world}")[0]
        with open(os.path.join(d, "rank0.jsonl")) as f:
            lines = [json.loads(x) for x in f]
    # the coll groups in the order made (make_groups): coll, then coll-queued
    ids = [x["group"] for x in lines if "ranks" in x and x.get("desc") != "default_pg"]
    out = {}
    for name, gid in zip(("coll", "coll-queued"), ids):
        calls = [x for x in lines if x.get("group") == gid and x.get("op") == "allreduce"]
        calls = calls[-len(stamps[name]):]  # past the warm-up
        parts = {k: [] for k in PARTS}
        for (p0, p1, p2), c in zip(stamps[name], calls):
            parts["enter"].append(c["t0"] - p0)
            parts["return"].append(p1 - c["t0"])
            parts["complete"].append(c["t1"] - c["t0"])
            parts["wake"].append(p2 - max(c["t1"], p1))
            parts["total"].append(p2 - p0)
        out[name] = {k: statistics.median(v) / 1e3 for k, v in parts.items()}
    return out


def cell(vals):
    if not vals:
        return "-"
    m = statistics.median(vals)
    return f"{m:.1f} [{min(vals):.1f}-{max(vals):.1f}]" if len(vals) > 1 else f"{m:.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collbench", required=True)
    ap.add_argument("--nprocs", default="2")
    ap.add_argument("--sizes", default="8,64,4K,64K,1M")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per job")
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.iters < 1 or a.warmup < 0:
        ap.error("--rounds and --iters must be >= 1, --warmup >= 0")
    sizes = [parse_size(s) for s in a.sizes.split(",") if s]
    nprocs = [int(n) for n in a.nprocs.split(",") if n]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ}: {a.rounds} "
          f"rounds, {a.iters} iterations ({a.warmup} warm-up) per cell; p50 us, median over "
          "rounds [smallest-largest round]", flush=True)
    for world in nprocs:
        per = {}
        for r in range(a.rounds):
            steps = [lambda: run_shm(a.collbench, world, sizes, a.iters, a.warmup, a.timeout),
                     lambda: run_torch(world, sizes, a.iters, a.warmup, r % 2, a.timeout)]
            for step in (steps if r % 2 == 0 else reversed(steps)):
                for k, v in step().items():
                    per.setdefault(k, []).append(v)
        print(f"\n## {world} ranks: all_reduce float32 sum, in place, p50 us")
        print("| bytes | libcoll shm | torch coll | torch coll-queued | torch gloo "
              "| coll / shm | gloo / coll |")
        print("|---|---|---|---|---|---|---|")
        for b in sizes:
            m = {k: statistics.median(per.get((k, b), [0])) for k in ("shm",) + CONFIGS}
            ratio = lambda x, y: f"{x / y:.1f}x" if y > 0 else "-"  # noqa: E731
            print(f"| {b} | {cell(per.get(('shm', b)))} | {cell(per.get(('coll', b)))} "
                  f"| {cell(per.get(('coll-queued', b)))} | {cell(per.get(('gloo', b)))} "
                  f"| {ratio(m['coll'], m['shm'])} | {ratio(m['gloo'], m['coll'])} |", flush=True)
        if a.breakdown:
            bd = breakdown(world, sizes[0], a.iters, a.warmup, a.timeout)
            print(f"\n## {world} ranks: the {sizes[0]} B path through the binding "
                  "(async_op=True, then wait; COLL_TRACE on), rank 0, median us")
            print("| path | " + " | ".join(PARTS) + " |")
            print("|---|" + "---|" * len(PARTS))
            for name in ("coll", "coll-queued"):
                print(f"| {name} | " + " | ".join(f"{bd[name][k]:.1f}" for k in PARTS) + " |",
                      flush=True)


if __name__ == "__main__":
    main()
