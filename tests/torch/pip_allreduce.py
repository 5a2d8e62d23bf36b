"""2 ranks: all_reduce on "coll" through the collbench_torch that
`import collbench_torch` finds, which must lie in the folder given (where
pip_install_test.sh installed it), not in a build tree.
usage: pip_allreduce.py DIR"""
import os
import sys

import torchtest
import torch
import torch.distributed as dist


def allreduce(rank, world):
    import collbench_torch
    dist.init_process_group("coll")
    t = torch.arange(1000, dtype=torch.float32) + rank
    dist.all_reduce(t)
    want = torch.arange(1000, dtype=torch.float32) * world + sum(range(world))
    dist.destroy_process_group()
    if not torch.equal(t, want):
        raise AssertionError(f"rank {rank}: wrong all-reduce result {t[:4]} != {want[:4]}")
    return collbench_torch.__file__


if __name__ == "__main__":
    where = os.path.realpath(sys.argv[1])
    files = torchtest.run(2, allreduce)
    for rank, f in sorted(files.items()):
        if not os.path.realpath(f).startswith(where + os.sep):
            sys.exit(f"FAIL: rank {rank} imported collbench_torch from {f}, not from {where}")
    print(f"2 ranks: all_reduce on coll ok, collbench_torch from {files[0]}")
