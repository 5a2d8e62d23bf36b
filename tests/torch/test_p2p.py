"""Point-to-point on the 'coll' backend: isend/irecv return before their peer
has done anything (the peer is held back on torch's store), irecv(peer) then
send(peer) on both ranks and a symmetric isend + irecv do not deadlock above
shm's 64 KiB mailbox, tags pick the message (sent in one order, received in
the other), batch_isend_irecv around a ring of 3, dtypes the reductions lack
(bool, complex), a non-contiguous receive, and a size mismatch raises naming
both sizes while the pair stays usable. A deadlock fails the test: the ranks
do not report within the harness's timeout."""
import datetime
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

BIG = (1 << 20) + 3  # floats: 4 MiB, far above shm's 64 KiB mailbox


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def pair(rank, store):
    peer = 1 - rank
    # irecv returns at once: the peer sends only once this rank says so
    got = torch.zeros(5)
    w = dist.irecv(got, peer)
    check(not w.is_completed(), "irecv completed before the peer sent")
    store.set(f"posted{rank}", "1")
    store.wait([f"posted{peer}"])
    dist.send(torch.full((5,), float(rank + 1)), peer)
    w.wait()
    check(torch.equal(got, torch.full((5,), float(peer + 1))), f"irecv then send: got {got}")

    # irecv(peer) then a blocking send(peer) on both ranks, above the mailbox
    for n in (1, 1 << 16, BIG):
        got = torch.zeros(n)
        w = dist.irecv(got, peer)
        dist.send(torch.arange(n, dtype=torch.float32) + rank, peer)
        w.wait()
        check(torch.equal(got, torch.arange(n, dtype=torch.float32) + peer),
              f"irecv + send of {n} floats: wrong data")

    # symmetric isend + irecv, the isend waited for first
    got = torch.zeros(BIG, dtype=torch.float64)
    ws = dist.isend(torch.full((BIG,), rank + 0.5, dtype=torch.float64), peer)
    wr = dist.irecv(got, peer)
    ws.wait()
    wr.wait()
    check(torch.equal(got, torch.full((BIG,), peer + 0.5, dtype=torch.float64)),
          "symmetric isend + irecv: wrong data")

    # tags: rank 0 sends tag 1 then tag 2; rank 1 receives tag 2 first
    if rank == 0:
        w1 = dist.isend(torch.arange(3, dtype=torch.float32), 1, tag=1)
        w2 = dist.isend(torch.arange(100, 105, dtype=torch.int64), 1, tag=2)
        w1.wait()
        w2.wait()
    else:
        b = torch.zeros(5, dtype=torch.int64)
        a = torch.zeros(3)
        dist.recv(b, 0, tag=2)
        dist.recv(a, 0, tag=1)
        check(torch.equal(b, torch.arange(100, 105, dtype=torch.int64))
              and torch.equal(a, torch.arange(3, dtype=torch.float32)),
              f"tags: tag 2 got {b}, tag 1 got {a}")

    # dtypes without a reduction: bytes as they are
    for t in (torch.tensor([True, False, True]), torch.tensor([1 + 2j, -3j], dtype=torch.complex64)):
        if rank == 0:
            dist.send(t, 1)
        else:
            got = torch.zeros_like(t)
            dist.recv(got, 0)
            check(torch.equal(got, t), f"{t.dtype}: got {got}")

    # a non-contiguous receive gets the data in its own layout
    if rank == 0:
        dist.send(torch.arange(12, dtype=torch.float32).reshape(3, 4).t().contiguous(), 1)
    else:
        got = torch.zeros(3, 4).t()
        dist.recv(got, 0)
        check(torch.equal(got, torch.arange(12, dtype=torch.float32).reshape(3, 4).t()),
              f"non-contiguous recv: {got}")

    # a size mismatch is an error naming both sizes; the pair stays usable
    if rank == 0:
        dist.send(torch.ones(4), 1, tag=7)
    else:
        try:
            dist.recv(torch.zeros(5), 0, tag=7)
            raise AssertionError("a 5-float recv of a 4-float send did not raise")
        except RuntimeError as e:
            check("16 bytes" in str(e) and "20 bytes" in str(e), f"mismatch message: {e}")
    t = torch.full((3,), 7.0) if rank == 0 else torch.zeros(3)
    if rank == 0:
        dist.send(t, 1)
    else:
        dist.recv(t, 0)
    check(torch.equal(t, torch.full((3,), 7.0)), "send/recv after a mismatch")


def body(rank, world):
    dist.init_process_group("coll", timeout=datetime.timedelta(seconds=60))
    store = dist.distributed_c10d._get_default_store()
    if rank < 2:
        pair(rank, store)
    # batch_isend_irecv around the ring (torch 2's CPU path and 1.13's
    # coalescing both call isend/irecv one by one)
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = torch.zeros(BIG)
    ops = [dist.P2POp(dist.isend, torch.full((BIG,), float(rank)), nxt),
           dist.P2POp(dist.irecv, got, prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check(torch.equal(got, torch.full((BIG,), float(prv))), "batch_isend_irecv ring: wrong data")
    dist.barrier()
    dist.destroy_process_group()
    return True


if __name__ == "__main__":
    torchtest.run(3, body, timeout=150)
    print("p2p: isend/irecv, tags, batch_isend_irecv, dtypes, mismatch: ok")
