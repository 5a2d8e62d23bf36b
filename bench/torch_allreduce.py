#!/usr/bin/env python3
"""torch.distributed all-reduce (float32 sum, in place) over gloo and/or coll,
timed as the seeds time it: WARMUP untimed calls, then per iteration a barrier
and one timed dist.all_reduce; each iteration counts at the slowest rank (MAX
over ranks). Prints one line per (backend, nprocs, size) on stdout and, with
--csv FILE, appends rows in collbench's CSV schema (backend torch-gloo /
torch-coll, buffers malloc) that `collbench report` reads with the rest. The
file is never truncated: the header is written only when it is empty, and each
row goes in with one O_APPEND write under an flock.

    torch_allreduce.py [--backends gloo,coll] [--nprocs 2,4,6]
                       [--sizes 1M,10M,100M,1G] [--iters 20] [--warmup 5]
                       [--csv FILE] [--lines] [--buffers malloc|coll|alloc]

Sizes are bytes with K/M/G = KiB/MiB/GiB. --lines prints only
"NPROCS BYTES TIME_US_AVG" (torch_gloo_allreduce.py's format). The coll
backend needs collbench_torch on PYTHONPATH (build/bindings/torch).
"""
import argparse
import datetime
import fcntl
import os
import queue
import socket
import sys
import time

HEADER = ("timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,"
          "in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,"
          "time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong")


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().rstrip("B").rstrip("I")
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(sorted_vals, p):
    """Nearest-rank-interpolated percentile of a sorted list."""
    if not sorted_vals:
        return 0.0
    k = (len(sorted_vals) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def rank_main(rank, world, port, backend, iters, warmup, sizes, q, buffers="malloc"):
    import torch
    import torch.distributed as dist
    if backend == "coll":
        import collbench_torch  # noqa: F401  registers the backend

    torch.set_num_threads(1)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    for nbytes in sizes:
        count = max(nbytes // 4, 1)
        if buffers == "coll":  # libcoll's memory (shm: shared heap, no copy through the segment)
            t = collbench_torch.backend().empty([count], torch.float32)
            t.fill_(1)
        elif buffers == "alloc":  # the same memory, from torch's allocator with the opt-in on
            import collbench_torch
            collbench_torch.use_coll_allocator(min_bytes=1)
            t = torch.ones(count, dtype=torch.float32)
            collbench_torch.use_default_allocator()
            if not collbench_torch.is_coll_memory(t):
                raise RuntimeError("--buffers alloc: the tensor is not coll memory")
        else:
            t = torch.ones(count, dtype=torch.float32)
        for _ in range(warmup):
            dist.all_reduce(t)
        times = torch.zeros(iters, dtype=torch.float64)
        for i in range(iters):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times[i] = time.perf_counter() - start
        dist.all_reduce(times, op=dist.ReduceOp.MAX)  # each iteration at its slowest rank
        # check: every rank contributes rank+1
        t.fill_(rank + 1)
        dist.all_reduce(t)
        wrong = torch.tensor([int((t != world * (world + 1) / 2).sum().item())])
        dist.all_reduce(wrong)
        if rank == 0:
            q.put((nbytes, count, [x * 1e6 for x in times.tolist()], int(wrong.item())))
        del t
    dist.destroy_process_group()


def csv_row(backend, world, nbytes, count, warmup, us, wrong, buffers="malloc"):
    s = sorted(us)
    avg = sum(s) / len(s)
    algbw = nbytes / avg * 1e-3 if avg > 0 else 0.0  # GB/s, as collbench
    busbw = algbw * 2 * (world - 1) / world
    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    f = [ts, socket.gethostname(), "allreduce", f"torch-{backend}", "auto", "cpu", buffers,
         str(world), "1", "float32", "sum", "1", str(nbytes), str(count), str(warmup),
         str(len(s))]
    f += [f"{v:.3f}" for v in (avg, s[0], pct(s, 25), pct(s, 50), pct(s, 75), pct(s, 99), s[-1])]
    f += [f"{algbw:.6g}", f"{busbw:.6g}", str(wrong)]
    return ",".join(f), avg, pct(s, 50)


def append_rows(path, rows):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = ""
        if os.fstat(fd).st_size == 0:
            data = HEADER + "\n"
        data += "".join(r + "\n" for r in rows)
        os.write(fd, data.encode())
    finally:
        os.close(fd)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", default="gloo,coll")
    ap.add_argument("--nprocs", default="2,4,6")
    ap.add_argument("--sizes", default="1M,10M,100M,1G")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--csv")
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--buffers", default="malloc", choices=["malloc", "coll", "alloc"],
                    help="coll: torch-coll tensors from the group's empty() (libcoll memory); "
                         "alloc: the same memory from torch.ones with the coll allocator on "
                         "(CSV buffers coll as well); gloo always uses malloc")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per size")
    a = ap.parse_args(argv)
    if a.iters < 1 or a.warmup < 0:
        ap.error("--iters must be >= 1 and --warmup >= 0")
    try:
        sizes = [parse_size(s) for s in a.sizes.split(",") if s]
        nprocs = [int(n) for n in a.nprocs.split(",") if n]
    except ValueError as e:
        ap.error(f"bad size or nprocs: {e}")
    backends = [b for b in a.backends.split(",") if b]
    for b in backends:
        if b not in ("gloo", "coll"):
            ap.error(f"unknown backend {b!r} (gloo, coll)")
    import torch.multiprocessing as mp
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ctx = mp.get_context("spawn")
    for backend in backends:
        for world in nprocs:
            q = ctx.Queue()
            port = free_port()
            procs = [ctx.Process(target=rank_main,
                                 args=(r, world, port, backend, a.iters, a.warmup, sizes, q,
                                       a.buffers if backend == "coll" else "malloc"))
                     for r in range(world)]
            for p in procs:
                p.start()
            rows = []
            for _ in sizes:
                try:
                    nbytes, count, us, wrong = q.get(timeout=a.timeout)
                except queue.Empty:
                    for p in procs:
                        p.kill()
                    sys.exit(f"torch_allreduce: torch-{backend} x {world}: no result "
                             f"within {a.timeout} s (a rank failed?)")
                buf = a.buffers if backend == "coll" else "malloc"
                # CSV: the memory kind (alloc gives the same coll memory as empty())
                row, avg, p50 = csv_row(backend, world, nbytes, count, a.warmup, us, wrong,
                                        "coll" if buf == "alloc" else buf)
                rows.append(row)
                if a.lines:
                    print(world, nbytes, f"{avg:.3f}", flush=True)
                else:
                    print(f"torch-{backend:4s} {buf:6s} nprocs {world} bytes {nbytes:>11d}  "
                          f"avg {avg:12.1f} us  p50 {p50:12.1f} us  wrong {wrong}", flush=True)
            for p in procs:
                p.join()
            if any(p.exitcode != 0 for p in procs):
                sys.exit(f"torch_allreduce: a rank of torch-{backend} x {world} failed")
            if a.csv:
                append_rows(a.csv, rows)
            if any(r.rsplit(",", 1)[1] != "0" for r in rows):
                sys.exit(f"torch_allreduce: torch-{backend} x {world} gave wrong results "
                         f"(the wrong column)")


if __name__ == "__main__":
    main()
