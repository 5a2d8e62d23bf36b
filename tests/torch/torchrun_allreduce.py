"""A rank under the real torchrun: init_process_group("coll") from the
environment torchrun sets (its agent holds MASTER_PORT with torch's own store),
an all-reduce whose sum is known, and a clean exit."""
import torch
import torch.distributed as dist

import collbench_torch  # noqa: F401  (registers the "coll" backend)

dist.init_process_group("coll")
rank, size = dist.get_rank(), dist.get_world_size()
t = torch.arange(1000, dtype=torch.float32) + rank
dist.all_reduce(t)
want = torch.arange(1000, dtype=torch.float32) * size + sum(range(size))
if not torch.equal(t, want):
    raise SystemExit(f"rank {rank}: wrong all-reduce result: {t[:4]} != {want[:4]}")
print(f"rank {rank} of {size}: all_reduce ok")
dist.destroy_process_group()
