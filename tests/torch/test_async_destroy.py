"""An async all_reduce on coll memory whose Work and tensor the caller drops,
then destroy_process_group() while it is in flight: the group's completion
thread then holds its last reference (through the tensor's coll block), and
destroys it when the operation completes. It must do so without joining
itself (std::terminate), and every rank must exit with status 0."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def body(rank, world):
    import collbench_torch as cb
    dist.init_process_group("coll")
    store = dist.distributed_c10d._get_default_store()
    t = cb.backend().empty([1 << 18], torch.float32)
    t.fill_(1)
    if rank == 0:
        dist.all_reduce(t, async_op=True)  # the Work is dropped at once
        del t
        dist.destroy_process_group()  # the completion thread holds the last reference
        store.set("destroyed", "1")
        # rank 1's closing barrier (coll_comm_destroy) needs this rank's,
        # which the completion thread runs once the all_reduce completes
        store.wait(["rank1 destroyed"])
    else:
        store.wait(["destroyed"])  # rank 0's all_reduce stays in flight until then
        dist.all_reduce(t)
        if not torch.equal(t, torch.full_like(t, world)):
            raise AssertionError("wrong sum")
        del t
        dist.destroy_process_group()
        store.set("rank1 destroyed", "1")
    return True


if __name__ == "__main__":
    torchtest.run(2, body, timeout=150, check_exit=True)
    print("OK: a group destroyed by its own completion thread; every rank exited with status 0")
