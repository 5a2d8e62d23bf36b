"""Lifetime of the coll allocator's memory (collbench_torch.use_coll_allocator),
2 ranks.

outlive: a bad COLL_TORCH_ALLOCATOR_CACHE is refused by name; a freed block
  comes back from the block cache; tensors made with the allocator on stay valid after
  dist.destroy_process_group() (each holds the group; the communicator goes
  when the last of them does), and that destroy switched the allocator back;
  a block from c10's raw interface (oneDNN's path) is freed through it after
  the switch back; a fork()ed child with the allocator on gets private memory
  and, freeing its copy of a coll tensor, leaves the parent's memory alone.
exit: COLL_TORCH_ALLOCATOR=1 (no code change), DDP trained 3 steps with its
  parameters and buckets in coll memory, no destroy_process_group, the model
  left in a global and on rank 0 a coll tensor leaked (never freed, so that
  rank never destroys its communicator): every process must exit with status
  0 within 30 s."""
import ctypes
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

N = 1 << 16  # float32: 256 KiB, above the default min_bytes
KEEP = []    # what the exit case leaves to interpreter teardown


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def outlive(rank, world):
    import collbench_torch as cb
    torch.set_num_threads(1)
    dist.init_process_group("coll")
    pg = dist.distributed_c10d._get_default_group()
    os.environ["COLL_TORCH_ALLOCATOR_CACHE"] = "lots"
    try:
        cb.use_coll_allocator()
        check(False, "use_coll_allocator took COLL_TORCH_ALLOCATOR_CACHE=lots")
    except RuntimeError as e:
        check("COLL_TORCH_ALLOCATOR_CACHE" in str(e), f"the error does not name the variable: {e}")
    check(not cb.coll_allocator_enabled(), "a failed use_coll_allocator left the allocator on")
    del os.environ["COLL_TORCH_ALLOCATOR_CACHE"]
    cb.use_coll_allocator()  # the default group
    # the block cache: a freed block comes back for the same size with its
    # contents (coll_free would have punched its pages out: zeros)
    u = torch.full((N,), 7.0)
    at = u.data_ptr()
    del u
    u = torch.empty(N)
    check(u.data_ptr() == at and bool((u == 7.0).all()),
          "a freed 256 KiB block was not reused from the block cache")
    del u
    check(cb.coll_allocator_enabled(pg), "use_coll_allocator() did not take the default group")
    t = torch.full((N,), float(rank + 1))
    check(cb.is_coll_memory(t), "a 256 KiB tensor is not coll memory")
    dist.all_reduce(t)
    want = world * (world + 1) / 2
    check(bool((t == want).all()), "all_reduce on a coll-allocated tensor is wrong")
    raw = cb._raw_allocate(N * 4)
    check(cb._is_coll_block(raw), "raw_allocate of 256 KiB did not give a coll block")

    # fork(): the child's allocations are private and its frees leave our heap alone
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            code |= 1 * cb.is_coll_memory(torch.ones(N))
            del t  # the child's copy: must not punch the parent's pages
        except BaseException:
            code |= 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0,
          f"forked child: status {os.waitstatus_to_exitcode(status)} (1: got coll memory)")
    check(bool((t == want).all()), "the parent's coll tensor changed when a forked child freed its copy")

    dist.destroy_process_group()
    check(not cb.coll_allocator_enabled(), "destroy_process_group left the allocator on")
    check(not cb.is_coll_memory(torch.empty(N)), "a tensor made after destroy_process_group is coll memory")
    # still readable and writable; the communicator is alive while t is
    check(bool((t == want).all()), "a coll tensor changed after destroy_process_group")
    t.mul_(2)
    check(float(t.sum()) == 2 * want * N, "a coll tensor is not writable after destroy_process_group")
    cb._raw_deallocate(raw)
    check(not cb._is_coll_block(raw), "raw_deallocate after the switch back did not free the coll block")
    del t  # the last block: the communicator goes now (closing barrier with the peer)
    return "ok"


def at_exit(rank, world):
    import collbench_torch as cb
    torch.set_num_threads(1)
    os.environ["COLL_TORCH_ALLOCATOR"] = "1"
    os.environ["COLL_TORCH_ALLOCATOR_MIN"] = "4096"
    dist.init_process_group("coll")
    check(cb.coll_allocator_enabled(), "COLL_TORCH_ALLOCATOR=1 did not turn the allocator on")
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(8, 64)).sum().backward()
        opt.step()
    check(cb.is_coll_memory(model.module[0].weight), "a 64 KiB weight is not coll memory")
    KEEP.append(model)
    if rank == 0:
        leak = torch.ones(N)
        check(cb.is_coll_memory(leak), "the leaked tensor is not coll memory")
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(leak))  # never freed
    return "ok"


if __name__ == "__main__":
    torchtest.run(2, outlive, check_exit=True)
    print("OK: coll tensors outlive destroy_process_group, which switched the allocator back; "
          "raw blocks and forked children handled", flush=True)
    torchtest.run(2, at_exit, check_exit=True)
    print("OK: exit with the allocator on, DDP in coll memory and a leaked coll tensor: status 0")
