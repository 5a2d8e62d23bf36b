"""The short path of small calls (COLL_TORCH_INLINE_BYTES, docs/TORCH.md
"Small calls"): with nothing of the group in flight, a small all_reduce or
broadcast runs on the caller's thread and returns a completed Work, its sum
right, its future done and then() callbacks run, a non-contiguous tensor
copied back; it returns only once the peer joined (held back on torch's
store, rank 0's call in a thread: still blocked after 0.5 s); behind an
async call still in flight it is queued and completes after it; on a group
made with COLL_TORCH_INLINE_BYTES=0 it is queued as before; and an inline
call that fails (the peer never joins, the group's 2 s timeout) returns and
raises " Timed out " at wait(), as a queued one does."""
import datetime
import os
import sys
import threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def check(ok, what):
    if not ok:
        raise AssertionError(what)


def inline(rank, world):
    dist.init_process_group("coll", timeout=datetime.timedelta(seconds=60))
    store = dist.distributed_c10d._get_default_store()
    total = world * (world + 1) / 2

    t = torch.full((16,), float(rank + 1))
    w = dist.all_reduce(t, async_op=True)
    check(w.is_completed(), "a 64 B all_reduce with nothing in flight was not complete at return")
    check(torch.equal(t, torch.full((16,), total)), f"inline all_reduce: wrong sum {t}")
    fut = w.get_future()
    check(fut.done(), "the inline all_reduce's future is not done")
    doubled = fut.then(lambda f: f.value()[0] * 2).wait()
    check(torch.equal(doubled, torch.full((16,), 2 * total)), f"then() gave {doubled}")
    m = torch.arange(8, dtype=torch.float32).view(2, 4).t()  # not contiguous
    dist.all_reduce(m)
    check(torch.equal(m, torch.arange(8, dtype=torch.float32).view(2, 4).t() * world),
          f"inline all_reduce of a transposed tensor: {m}")
    b = torch.full((3,), float(rank))
    dist.broadcast(b, src=world - 1)
    check(torch.equal(b, torch.full((3,), float(world - 1))), f"inline broadcast: {b}")

    # Inline, rank 0's call returns only once the peer has joined.
    x = torch.ones(4)
    if rank == 0:
        got = {}
        th = threading.Thread(target=lambda: got.update(w=dist.all_reduce(x, async_op=True)))
        th.start()
        th.join(0.5)
        check(th.is_alive(), "a 16 B all_reduce(async_op=True) returned before the peer joined: "
              "the inline path was not taken")
        store.set("inline_go", "1")
        th.join()
        check(got["w"].is_completed(), "the inline Work is not complete")
    else:
        store.wait(["inline_go"])
        dist.all_reduce(x)
    check(torch.equal(x, torch.full((4,), float(world))), f"held-back inline all_reduce: {x}")

    # Behind an async call in flight, a small one is queued and completes after it.
    big, small = torch.ones(1 << 16), torch.ones(4)
    if rank == 1:
        store.wait(["queued_go"])
    wb = dist.all_reduce(big, async_op=True)
    ws = dist.all_reduce(small, async_op=True)
    if rank == 0:
        check(not ws.is_completed(), "a small all_reduce behind one in flight completed first")
        store.set("queued_go", "1")
    ws.wait()
    check(wb.is_completed(), "the small all_reduce completed before the async one issued before it")
    wb.wait()
    check(torch.equal(big, torch.full((1 << 16,), float(world))) and
          torch.equal(small, torch.full((4,), float(world))), "queued all_reduces: wrong sums")

    # COLL_TORCH_INLINE_BYTES=0 (read when a group is made): always queued.
    os.environ["COLL_TORCH_INLINE_BYTES"] = "0"
    off = dist.new_group(backend="coll")
    del os.environ["COLL_TORCH_INLINE_BYTES"]
    y = torch.ones(4)
    if rank == 1:
        store.wait(["off_go"])
    w = dist.all_reduce(y, group=off, async_op=True)
    if rank == 0:
        check(not w.is_completed(), "COLL_TORCH_INLINE_BYTES=0: a 16 B all_reduce completed "
              "before the peer joined")
        store.set("off_go", "1")
    w.wait()
    check(torch.equal(y, torch.full((4,), float(world))), f"COLL_TORCH_INLINE_BYTES=0: {y}")
    dist.destroy_process_group()
    return True


def inline_timeout(rank, world):
    """The peer never joins a small all_reduce: rank 0's inline call returns
    after the group's 2 s timeout and its wait() raises " Timed out "."""
    import time
    dist.init_process_group("gloo")
    store = dist.distributed_c10d._get_default_store()
    g = dist.new_group(backend="coll", timeout=datetime.timedelta(seconds=2))
    if rank == 0:
        t0 = time.monotonic()
        w = dist.all_reduce(torch.ones(2), group=g, async_op=True)
        took = time.monotonic() - t0
        check(took >= 1.5, f"the inline all_reduce the peer never joined returned after {took:.1f} s")
        check(w.is_completed() and not w.is_success(), "the failed inline Work: not completed "
              "with an error")
        try:
            w.wait()
            raise AssertionError("wait() of a failed inline all_reduce returned")
        except RuntimeError as e:
            check(" Timed out " in str(e), f"the failed inline all_reduce raised: {e}")
        store.set("raised", "1")
    else:
        store.wait(["raised"], datetime.timedelta(seconds=120))
    return True


if __name__ == "__main__":
    torchtest.run(2, inline, timeout=150)
    torchtest.run(2, inline_timeout, timeout=150)
    print("OK: small calls inline (complete, future, then(), copy back, broadcast, blocked "
          "until the peer joins), queued behind one in flight, COLL_TORCH_INLINE_BYTES=0 "
          "queued, a failed inline call raises Timed out at wait()")
