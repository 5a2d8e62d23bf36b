"""A rank killed (SIGKILL) mid-job: the others' next all_reduce on 'coll' must
raise a RuntimeError naming the dead rank, and saying that it died
([COLL_EPEER]) rather than that the group's 300 s timeout ran out: libcoll
detects the closed connections. The time it took is printed, not asserted
(the machine may be loaded)."""
import datetime
import os
import signal
import sys
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

WORLD, VICTIM = 3, 2


def body(rank, world):
    dist.init_process_group("coll", timeout=datetime.timedelta(seconds=300))  # the default group is coll
    t = torch.ones(1000)
    dist.all_reduce(t)
    assert t[0].item() == world
    dist.barrier()
    if rank == VICTIM:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.5)
    t0 = time.monotonic()
    try:
        for _ in range(50):
            x = torch.ones(1 << 20)
            dist.all_reduce(x)
    except RuntimeError as e:
        took = time.monotonic() - t0
        if f"rank {VICTIM}" not in str(e):
            raise AssertionError(f"the error does not name rank {VICTIM}: {e}")
        if "[COLL_EPEER]" not in str(e):
            raise AssertionError(f"the error is not libcoll's dead-peer error (COLL_EPEER): {e}")
        return (took, str(e))
    raise AssertionError("all_reduce with a dead rank did not raise")


if __name__ == "__main__":
    res = torchtest.run(WORLD, body, expect_dead=(VICTIM,))
    for r, (took, msg) in sorted(res.items()):
        print(f"rank {r}: RuntimeError after {took:.2f} s: {msg}")
    print(f"OK: the dead rank {VICTIM} was named on every surviving rank")
