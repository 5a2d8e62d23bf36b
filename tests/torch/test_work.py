"""Work objects of the 'coll' backend: Work.wait(timeout) honours its timeout,
is_success() and is_completed() answer while the operation is in flight,
all_reduce_coalesced(async_op=True) returns before it completes, the profiler
sees each operation, all_to_all_single splits dimension 0; and
COLL_TORCH_ALLOCATOR_MIN=-1 is refused (a warning, the default), not taken as
2^64-1; a rank's own COLL_JOB_TOKEN survives init_process_group, and the
token rank 0 publishes never appears in a rank's environment. The peer is held back on torch's store, not by sleeping: nothing here
depends on timing but the 0.3 s wait timeout, which must run out."""
import datetime
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def in_flight(rank, store, key, start):
    """start() on both ranks; rank 1 joins only once rank 0 has set key, so
    rank 0 sees the operation in flight. Returns start()'s Work."""
    if rank == 1:
        store.wait([key])
    return start()


def body(rank, world):
    dist.init_process_group("coll", timeout=datetime.timedelta(seconds=60))
    store = dist.distributed_c10d._get_default_store()
    t = torch.ones(1 << 16)
    w = in_flight(rank, store, "wait", lambda: dist.all_reduce(t, async_op=True))
    if rank == 0:
        # (Work.exception() has no Python conversion in torch 1.13; is_success() takes
        # the same lock)
        if w.is_success() or w.is_completed():
            raise AssertionError("is_success()/is_completed() of an all_reduce in flight")
        try:
            w.wait(timeout=datetime.timedelta(milliseconds=300))
            raise AssertionError("wait(timeout=0.3 s) returned while the peer had not joined")
        except RuntimeError as e:
            if "timed out" not in str(e):
                raise
        store.set("wait", "1")
    w.wait()
    if not torch.equal(t, torch.full_like(t, world)):
        raise AssertionError("all_reduce after a timed-out wait: wrong sum")

    a, b = torch.ones(5), torch.arange(7, dtype=torch.float32)  # torch 2: one dtype
    w = in_flight(rank, store, "coalesced",
                  lambda: dist.all_reduce_coalesced([a, b], async_op=True))
    if rank == 0:
        # torch 2 returns the Work's future (done()), torch 1.13 the Work
        if w.done() if hasattr(w, "done") else w.is_completed():
            raise AssertionError("all_reduce_coalesced(async_op=True) completed before the peer joined")
        store.set("coalesced", "1")
    w.wait()
    if not (torch.equal(a, torch.full((5,), float(world)))
            and torch.equal(b, torch.arange(7, dtype=torch.float32) * world)):
        raise AssertionError(f"all_reduce_coalesced: wrong sums {a} {b}")

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        dist.all_reduce(torch.ones(8), async_op=True).wait()
    names = {e.name for e in prof.events()}
    if not any("coll:all_reduce" in n for n in names):
        raise AssertionError(f"the profiler has no coll:all_reduce record: {sorted(names)[:20]}")

    try:  # 3 rows: numel 6 divides by 2, the first dimension does not
        dist.all_to_all_single(torch.empty(3, 2), torch.ones(3, 2))
        raise AssertionError("all_to_all_single of 3 rows on 2 ranks was accepted")
    except RuntimeError as e:
        if "first dimension" not in str(e):
            raise
    dist.destroy_process_group()
    return True


def allocator_min(rank, world):
    os.environ.update(COLL_TORCH_ALLOCATOR="1", COLL_TORCH_ALLOCATOR_MIN="-1")
    if rank == 1:  # a token of its own on one rank only: rank 0 publishes one
        os.environ["COLL_JOB_TOKEN"] = "ab" * 16
    import collbench_torch as cb
    import ctypes
    import threading
    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p
    # The published token must never pass through rank 0's environment: the
    # backend is made without the GIL, beside threads like this one.
    seen, stop = [], threading.Event()

    def watch():
        while not stop.wait(0.001):
            if getenv(b"COLL_JOB_TOKEN"):
                seen.append(1)
    watcher = threading.Thread(target=watch, daemon=True)
    if rank == 0:
        watcher.start()
    dist.init_process_group("coll")
    stop.set()
    if seen:
        raise AssertionError("COLL_JOB_TOKEN was set in rank 0's environment during "
                             "init_process_group")
    if rank == 1 and getenv(b"COLL_JOB_TOKEN") != b"ab" * 16:
        raise AssertionError(f"init_process_group left COLL_JOB_TOKEN={getenv(b'COLL_JOB_TOKEN')}, "
                             "not the rank's own token")
    if not cb.coll_allocator_enabled() or not cb.is_coll_memory(torch.empty(1 << 20)):
        raise AssertionError("COLL_TORCH_ALLOCATOR_MIN=-1 was not refused: a 4 MiB tensor is "
                             "not coll memory (the default min_bytes is 64 KiB)")
    dist.barrier()  # torch 1.13: rank 1 may still poll rank 0's store in init's barrier
    dist.destroy_process_group()
    return True


def barrier_timeout(rank, world):
    """A barrier the peer never joins raises " Timed out " after the group's
    timeout (5 s), as torch's backends do; the peer waits on torch's store."""
    import time
    dist.init_process_group("gloo")
    store = dist.distributed_c10d._get_default_store()
    g = dist.new_group(backend="coll", timeout=datetime.timedelta(seconds=5))
    if rank == 0:
        t0 = time.monotonic()
        try:
            dist.barrier(group=g)
            raise AssertionError("a barrier the peer never joined returned")
        except RuntimeError as e:
            took = time.monotonic() - t0
            if " Timed out " not in str(e) or took < 4.5:
                raise AssertionError(f"barrier after {took:.1f} s: {e}")
        store.set("barrier_raised", "1")
    else:
        store.wait(["barrier_raised"], datetime.timedelta(seconds=120))
    return True


if __name__ == "__main__":
    torchtest.run(2, barrier_timeout, timeout=150)
    torchtest.run(2, body, timeout=150)
    torchtest.run(2, allocator_min, timeout=150)
    print("OK: wait(timeout), exception() in flight, async all_reduce_coalesced, profiler, "
          "all_to_all rows, COLL_TORCH_ALLOCATOR_MIN=-1, own COLL_JOB_TOKEN kept, none set, "
          "barrier Timed out")
