#!/usr/bin/env python3
"""torch.distributed all-reduce (float32 sum, in place) over gloo, coll and/or
nccl, timed as the seeds time it: WARMUP untimed calls, then per iteration a
barrier and one timed dist.all_reduce (with --device cuda, up to the end of a
torch.cuda.synchronize(), as collbench ends each iteration with
cudaDeviceSynchronize); each iteration counts at the slowest rank (MAX over
ranks). Prints one line per (backend, nprocs, size) on stdout and, with
--csv FILE, appends rows in collbench's CSV schema (backend torch-gloo /
torch-coll, torch-nccl; buffers malloc, or cuda with --device cuda) that
`collbench report` reads with the rest. The
file is never truncated: the header is written only when it is empty, and each
row goes in with one O_APPEND write under an flock.

    torch_allreduce.py [--backends gloo,coll] [--nprocs 2,4,6]
                       [--sizes 1M,10M,100M,1G] [--iters 20] [--warmup 5]
                       [--csv FILE] [--lines] [--buffers malloc|coll|alloc]
                       [--device cpu|cuda]

Sizes are bytes with K/M/G = KiB/MiB/GiB. --lines prints only
"NPROCS BYTES TIME_US_AVG" (torch_gloo_allreduce.py's format). The coll
backend needs collbench_torch on PYTHONPATH (build/bindings/torch).

--device cuda: rank r's tensor lives on GPU r % (GPUs here), as collbench's
--device cuda places ranks; gloo stages it through host memory (torch's gloo
CUDA path), nccl needs one GPU per rank, so a process count above the GPU
count is skipped with a note, as collbench skips it; coll takes CPU tensors
only and is refused.
"""
import argparse
import datetime
import fcntl
import inspect
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


def rank_main(rank, world, port, backend, iters, warmup, sizes, q, buffers="malloc",
              device="cpu"):
    import torch
    import torch.distributed as dist
    if backend == "coll":
        import collbench_torch  # noqa: F401  registers the backend

    torch.set_num_threads(1)
    dev = torch.device("cpu")
    sync = lambda: None  # noqa: E731
    if device == "cuda":
        dev = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(dev)
        sync = torch.cuda.synchronize
    # nccl reduces device tensors only; gloo's bookkeeping stays on the host
    meta = dev if backend == "nccl" else torch.device("cpu")
    kwargs = {}
    if backend == "nccl" and "device_id" in inspect.signature(dist.init_process_group).parameters:
        kwargs["device_id"] = dev  # torch >= 2.3: its barrier then knows the rank's GPU
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world, **kwargs)
    for nbytes in sizes:
        count = max(nbytes // 4, 1)
        if device == "cuda":
            t = torch.ones(count, dtype=torch.float32, device=dev)
        elif buffers == "coll":  # libcoll's memory (shm: shared heap, no copy through the segment)
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
        sync()
        times = torch.zeros(iters, dtype=torch.float64)
        for i in range(iters):
            dist.barrier()
            sync()
            start = time.perf_counter()
            dist.all_reduce(t)
            sync()
            times[i] = time.perf_counter() - start
        times = times.to(meta)
        dist.all_reduce(times, op=dist.ReduceOp.MAX)  # each iteration at its slowest rank
        times = times.cpu()
        # check: every rank contributes rank+1
        t.fill_(rank + 1)
        dist.all_reduce(t)
        wrong = torch.tensor([int((t != world * (world + 1) / 2).sum().item())], device=meta)
        dist.all_reduce(wrong)
        if rank == 0:
            q.put((nbytes, count, [x * 1e6 for x in times.tolist()], int(wrong.item())))
        del t
    dist.destroy_process_group()


def csv_row(backend, world, nbytes, count, warmup, us, wrong, buffers="malloc", device="cpu"):
    s = sorted(us)
    avg = sum(s) / len(s)
    algbw = nbytes / avg * 1e-3 if avg > 0 else 0.0  # GB/s, as collbench
    busbw = algbw * 2 * (world - 1) / world
    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    f = [ts, os.environ.get("COLLBENCH_HOST") or socket.gethostname(), "allreduce", f"torch-{backend}", "auto", device, buffers,
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
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="where the tensors live (cuda: GPU rank %% GPUs; CSV buffers cuda)")
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
        if b not in ("gloo", "coll", "nccl"):
            ap.error(f"unknown backend {b!r} (gloo, coll, nccl)")
        if b == "coll" and a.device == "cuda":
            ap.error("--device cuda: the coll backend takes CPU tensors (gloo stages CUDA ones)")
        if b == "nccl" and a.device != "cuda":
            ap.error("the nccl backend reduces GPU tensors: add --device cuda")
    ngpus = 0
    if a.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            sys.exit("torch_allreduce: --device cuda: torch sees no CUDA device "
                     f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
        ngpus = torch.cuda.device_count()
    import torch.multiprocessing as mp
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ctx = mp.get_context("spawn")
    for backend in backends:
        for world in nprocs:
            if backend == "nccl" and world > ngpus:
                print(f"# allreduce torch-nccl {world} ranks: skipped: {ngpus} CUDA device(s) "
                      "here and NCCL needs one GPU per rank", flush=True)
                continue
            q = ctx.Queue()
            port = free_port()
            procs = [ctx.Process(target=rank_main,
                                 args=(r, world, port, backend, a.iters, a.warmup, sizes, q,
                                       a.buffers if backend == "coll" else "malloc", a.device))
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
                if a.device == "cuda":
                    buf = "cuda"
                # CSV: the memory kind (alloc gives the same coll memory as empty())
                row, avg, p50 = csv_row(backend, world, nbytes, count, a.warmup, us, wrong,
                                        "coll" if buf == "alloc" else buf, a.device)
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
