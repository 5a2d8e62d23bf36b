"""DDP of a small MLP, 20 SGD steps on 2 ranks, once over gloo and once over
coll from the same start and data: the parameters must agree. Tolerance:
rtol 1e-6, atol 1e-7 (float32); with 2 ranks a sum has one order, so the
result is expected bitwise equal, and the test prints the largest difference."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

STEPS = 20


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 10))


def train(rank, group):
    return torchtest.ddp_train(make_model(), rank, group, STEPS, momentum=0.9)


def body(rank, world):
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    coll = dist.new_group(backend="coll")
    pg = train(rank, dist.group.WORLD)
    pc = train(rank, coll)
    start = [p.detach() for p in make_model().parameters()]
    moved = max((a - b).abs().max().item() for a, b in zip(pg, start))
    if moved == 0:
        raise AssertionError("training did not change the parameters")
    diff = max((a - b).abs().max().item() for a, b in zip(pg, pc))
    for a, b in zip(pg, pc):
        if not torch.allclose(a, b, rtol=1e-6, atol=1e-7):
            raise AssertionError(f"DDP parameters differ: max |gloo - coll| = {diff}")
    dist.destroy_process_group()
    return diff


if __name__ == "__main__":
    res = torchtest.run(2, body)
    print(f"OK: DDP {STEPS} steps, 2 ranks: coll parameters equal gloo's "
          f"(max abs difference {max(res.values())})")
