"""recv from any source on the 'coll' backend (torch's recvAnysource), 4 ranks:
dist.recv(t) returns the sender and irecv's work._source_rank() names it,
in an order forced on torch's store (rank 3, then 1, then 2: not the peers'
order); all three peers sending at once, each payload its reported sender's;
a message kept for another tag satisfies a later receive from any source; a
ring where every rank isends to the next and receives from any (the paired
send goes out while the header is awaited: no deadlock, also where a send
waits for its receiver, COLL_BACKEND=gloo); the profiler's
coll:recvAnySource record. A deadlock fails it (no report within 150 s)."""
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


def payload(sender, k, n=5):
    return torch.full((n,), float(100 * sender + k))


def ordered(rank, store):
    """Each peer sends once it is told to, rank 0 telling them in turn."""
    order = [3, 1, 2]
    if rank == 0:
        for i, peer in enumerate(order):
            store.set(f"go{peer}", "1")
            got = torch.zeros(5)
            if i % 2 == 0:
                sender = dist.recv(got)
            else:
                w = dist.irecv(got)
                w.wait()
                sender = w._source_rank()
            check(sender == peer, f"message {i}: reported from rank {sender}, rank {peer} sent")
            check(torch.equal(got, payload(peer, 0)), f"message {i} from {sender}: {got}")
    else:
        store.wait([f"go{rank}"])
        dist.send(payload(rank, 0), 0)


def at_once(rank, world):
    if rank == 0:
        seen = []
        for _ in range(world - 1):
            got = torch.zeros(BIG)
            sender = dist.recv(got)
            check(torch.equal(got, payload(sender, 1, BIG)), f"payload is not rank {sender}'s")
            seen.append(sender)
        check(sorted(seen) == list(range(1, world)), f"senders {seen}")
    else:
        dist.send(payload(rank, 1, BIG), 0)


def kept_for_tag(rank, store):
    """Rank 2 sends tag 5, then tag 7; rank 0 asks for tag 7 first, from any."""
    if rank == 2:
        dist.send(payload(2, 5), 0, tag=5)
        dist.send(payload(2, 7), 0, tag=7)
    elif rank == 0:
        got = torch.zeros(5)
        check(dist.recv(got, tag=7) == 2 and torch.equal(got, payload(2, 7)), "tag 7")
        w = dist.irecv(got, tag=5)  # from the kept message, nothing on the wire
        w.wait()
        check(w._source_rank() == 2 and torch.equal(got, payload(2, 5)), "kept tag 5")


def ring(rank, world):
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = torch.zeros(BIG)
    w = dist.isend(payload(rank, 2, BIG), nxt)
    sender = dist.recv(got)
    w.wait()
    check(sender == prv and torch.equal(got, payload(prv, 2, BIG)),
          f"ring: from rank {sender}, want {prv}")


def profiled(rank):
    with torch.autograd.profiler.profile() as prof:
        if rank == 1:
            dist.send(payload(1, 3), 0)
        elif rank == 0:
            dist.recv(torch.zeros(5))
    if rank == 0:
        names = {e.name for e in prof.function_events}
        check("coll:recvAnySource" in names, f"no coll:recvAnySource record in {sorted(names)}")


def body(rank, world):
    dist.init_process_group("coll", timeout=datetime.timedelta(seconds=60))
    store = dist.distributed_c10d._get_default_store()
    for step in (lambda: ordered(rank, store), lambda: at_once(rank, world),
                 lambda: kept_for_tag(rank, store), lambda: ring(rank, world),
                 lambda: profiled(rank)):
        step()
        dist.barrier()
    dist.destroy_process_group()
    return True


if __name__ == "__main__":
    torchtest.run(4, body, timeout=150)
    print(f"recv_any ({os.environ.get('COLL_BACKEND', 'auto')}): order, senders, kept tag, "
          "ring, profiler: ok")
