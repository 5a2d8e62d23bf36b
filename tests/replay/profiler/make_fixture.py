"""The real profiler traces in gloo/: a 2-rank gloo program under
torch.profiler with record_shapes=True (torch 2.6's gloo writes no
record_param_comms; its c10d and gloo events carry sizes only then), exported
with prof.export_chrome_trace and cut down to the events of its collectives and
their context (the process and thread names) so the files stay small.

Run in the torch 2.x root (scripts/torch_root.sh run python3
tests/replay/profiler/make_fixture.py tests/replay/profiler/gloo; KEEP_RAW=1
keeps the whole export beside them as raw<R>.json); the calls
tests/replay/profiler/trace_import_cli.sh expects are below."""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile

KEEP = ("record_param_comms", "c10d::", "gloo:")


def program(rank, world, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    pair = dist.new_group([0, 1])
    grad = torch.ones(1024) * (rank + 1)
    ids = torch.arange(64, dtype=torch.long) * (rank + 1)
    shard = torch.full((256,), float(rank))
    gathered = torch.empty(512)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for step in range(3):
            dist.all_reduce(grad)  # the gradients, summed
            torch.mm(torch.ones(64, 64), torch.ones(64, 64))  # the compute between
        dist.broadcast(ids, src=1)
        dist.all_gather_into_tensor(gathered, shard)
        if rank == 0:
            dist.send(shard, 1)
        else:
            dist.recv(shard, 0)
        dist.reduce(ids, dst=1)
        dist.all_to_all_single(torch.empty(8 * world), torch.ones(8 * world))
        dist.reduce_scatter_tensor(torch.empty(16), torch.ones(16 * world))
        dist.all_reduce(grad[:100], group=pair)  # a second group: placed in the world's
        dist.barrier()
    raw = os.path.join(out, f"raw{rank}.json")
    prof.export_chrome_trace(raw)
    dist.destroy_process_group()
    with open(raw) as f:
        doc = json.load(f)
    if not os.environ.get("KEEP_RAW"):
        os.remove(raw)
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if e.get("ph") == "M" or str(e.get("name", "")).startswith(KEEP)]
    with open(os.path.join(out, f"rank{rank}.pt.trace.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    mp.spawn(program, args=(2, 29517, out), nprocs=2)
