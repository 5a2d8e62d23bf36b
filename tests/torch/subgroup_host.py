"""One rank of tests/torch/test_subgroup_host.sh: the world's rank 0 on one
emulated host, ranks 1 and 2 on another; a coll subgroup of ranks 1 and 2
(whose rank 0 is world rank 1, not on MASTER_ADDR's host) all-reduces."""
import datetime
import sys

import torch
import torch.distributed as dist
import collbench_torch  # noqa: F401  registers "coll"

dist.init_process_group("coll", timeout=datetime.timedelta(seconds=40))
rank = dist.get_rank()
g = dist.new_group([1, 2], backend="coll")
t = torch.full((1000,), float(rank))
if rank in (1, 2):
    dist.all_reduce(t, group=g)
    if not torch.equal(t, torch.full((1000,), 3.0)):
        sys.exit(f"rank {rank}: subgroup all_reduce gave {t[:4]}, not 3")
w = torch.ones(10)
dist.all_reduce(w)
if not torch.equal(w, torch.full((10,), 3.0)):
    sys.exit(f"rank {rank}: world all_reduce gave {w[:4]}")
dist.destroy_process_group()
print(f"rank {rank}: subgroup across hosts ok")
