"""DDP communication hooks on the 'coll' backend, which need Work.get_future()
to complete with the all-reduced tensors: torch's built-in fp16_compress_hook
and PowerSGD (rank 1, from step 2), 10 SGD steps on 2 ranks, against gloo
with the same hook from the same start and data (rtol 1e-5, atol 1e-6; the
largest difference is printed). Also all_gather_coalesced of float32 (a
non-contiguous output, an empty tensor) and of bool."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

STEPS = 10


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def train(rank, group, hook, make_state):
    return torchtest.ddp_train(make_model(), rank, group, STEPS, hook=hook, make_state=make_state)


def gather_coalesced(rank, world, coll):
    # torch wants one dtype per call: float32 (a non-contiguous output, an
    # empty tensor), then bool
    def mine(r):
        return ([torch.arange(3.0) + r, torch.full((2, 2), r + 0.5), torch.zeros(0)],
                [torch.tensor([r % 2 == 0, True, False]), torch.tensor([r == 1])])
    for k in range(2):
        if k == 0:
            outs = [[torch.zeros(3), torch.zeros(2, 2).t(), torch.zeros(0)] for _ in range(world)]
        else:
            outs = [[torch.zeros(3, dtype=torch.bool), torch.zeros(1, dtype=torch.bool)]
                    for _ in range(world)]
        dist.all_gather_coalesced(outs, mine(rank)[k], group=coll)
        for r in range(world):
            for got, want in zip(outs[r], mine(r)[k]):
                if not torch.equal(got, want):
                    raise AssertionError(f"all_gather_coalesced: rank {r}'s {want} came as {got}")


def body(rank, world):
    torch.set_num_threads(1)
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
    dist.init_process_group("gloo")
    coll = dist.new_group(backend="coll")
    gather_coalesced(rank, world, coll)
    hooks = {
        "fp16_compress": (default_hooks.fp16_compress_hook, lambda g: g),
        "powerSGD": (psgd.powerSGD_hook,
                     lambda g: psgd.PowerSGDState(process_group=g, matrix_approximation_rank=1,
                                                  start_powerSGD_iter=2, random_seed=0)),
    }
    diffs = {}
    for name, (hook, state) in hooks.items():
        pg = train(rank, dist.group.WORLD, hook, state)
        pc = train(rank, coll, hook, state)
        diffs[name] = max((a - b).abs().max().item() for a, b in zip(pg, pc))
        for a, b in zip(pg, pc):
            if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
                raise AssertionError(f"{name} hook: parameters differ, max |gloo - coll| = "
                                     f"{diffs[name]}")
    dist.destroy_process_group()
    return diffs


if __name__ == "__main__":
    res = torchtest.run(2, body, timeout=170)
    print(f"OK: all_gather_coalesced; DDP with fp16_compress and powerSGD hooks, {STEPS} steps: "
          f"coll equals gloo (max abs differences {res[0]})")
