"""DDP with the coll allocator on (collbench_torch.use_coll_allocator): the
small MLP of test_ddp.py, 20 SGD steps on 2 ranks, once over gloo (allocator
off) and once over coll with the allocator on for the coll group; both runs
go through the same comm hook (the default hooks' allreduce_hook), which on
the coll run records whether each bucket DDP hands it is coll memory, before
and after the Reducer rebuilds its buckets (after the first iteration).
Asserted: parameters within test_ddp.py's tolerance (rtol 1e-6, atol 1e-7);
every bucket of every step is coll memory; tensors below min_bytes and the
tensors made after use_default_allocator() are not; with
gradient_as_bucket_view=True the gradients are coll memory (views of the
buckets); use_coll_allocator on a gloo group, or twice, raises."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

STEPS = 20
MIN_BYTES = 4096  # the MLP's one bucket is 27 KiB; its biases 40-256 bytes


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 10))


def train(rank, group, steps=STEPS, as_view=False):
    import collbench_torch as cb
    model = DDP(make_model(), process_group=group, gradient_as_bucket_view=as_view)
    seen = []  # (step, bucket index, bucket buffer is coll memory, its address)
    step = [0]

    def hook(pg, bucket):
        buf = bucket.buffer()
        seen.append((step[0], bucket.index(), cb.is_coll_memory(buf), buf.data_ptr()))
        return default_hooks.allreduce_hook(pg, bucket)

    model.register_comm_hook(group, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(99 + rank)  # each rank its own data
    for i in range(steps):
        step[0] = i
        x = torch.randn(16, 32, generator=g)
        y = torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return model, seen


def expect_error(fn, words):
    try:
        fn()
    except RuntimeError as e:
        if words not in str(e):
            raise AssertionError(f"error without {words!r}: {e}")
        return
    raise AssertionError(f"no error (expected one with {words!r})")


def body(rank, world):
    import collbench_torch as cb
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    coll = dist.new_group(backend="coll")
    gloo = dist.group.WORLD

    ref, _ = train(rank, gloo)
    pg = [p.detach().clone() for p in ref.parameters()]

    expect_error(lambda: cb.use_coll_allocator(gloo), "not a coll group")
    if cb.coll_allocator_enabled():
        raise AssertionError("the allocator is on after a failed use_coll_allocator")
    cb.use_coll_allocator(coll, min_bytes=MIN_BYTES)
    expect_error(lambda: cb.use_coll_allocator(coll), "already on")
    if not cb.coll_allocator_enabled(coll) or cb.coll_allocator_enabled(gloo):
        raise AssertionError("coll_allocator_enabled does not name the coll group")

    model, seen = train(rank, coll)
    pc = [p.detach().clone() for p in model.parameters()]
    steps_seen = sorted({s[0] for s in seen})
    if steps_seen != list(range(STEPS)):
        raise AssertionError(f"the comm hook ran at steps {steps_seen}")
    private = [(s, b) for s, b, c, _ in seen if not c]
    if private:
        raise AssertionError(f"DDP buckets not in coll memory (step, bucket): {private}")
    # the parameters were made with the allocator on: weights are coll, biases not
    params = dict(model.module.named_parameters())
    if not cb.is_coll_memory(params["2.weight"]):  # 64x64 float: 16 KiB
        raise AssertionError("a 16 KiB weight is not coll memory")
    if cb.is_coll_memory(params["2.bias"]) or cb.is_coll_memory(torch.empty(MIN_BYTES // 4 - 1)):
        raise AssertionError("a tensor below min_bytes is coll memory")
    if not cb.is_coll_memory(torch.empty(MIN_BYTES // 4)):
        raise AssertionError("a tensor of min_bytes is not coll memory")

    viewed, _ = train(rank, coll, steps=3, as_view=True)
    nocoll = [n for n, p in viewed.module.named_parameters() if not cb.is_coll_memory(p.grad)]
    if nocoll:
        raise AssertionError(f"gradient_as_bucket_view=True: gradients not in coll memory: {nocoll}")

    cb.use_default_allocator()
    if cb.coll_allocator_enabled() or cb.is_coll_memory(torch.empty(1 << 20)):
        raise AssertionError("use_default_allocator() left the allocator on")

    diff = max((a - b).abs().max().item() for a, b in zip(pg, pc))
    start = [p.detach() for p in make_model().parameters()]
    if max((a - b).abs().max().item() for a, b in zip(pg, start)) == 0:
        raise AssertionError("training did not change the parameters")
    for a, b in zip(pg, pc):
        if not torch.allclose(a, b, rtol=1e-6, atol=1e-7):
            raise AssertionError(f"DDP parameters differ: max |gloo - coll allocator| = {diff}")
    nbuckets = len({s[1] for s in seen})
    # the Reducer's rebuilt buckets (second step on) are new tensors
    rebuilt = seen[0][3] != seen[-1][3]
    dist.destroy_process_group()
    return diff, len(seen), nbuckets, rebuilt


if __name__ == "__main__":
    res = torchtest.run(2, body)
    diff, calls, nb, rebuilt = res[0]
    print(f"OK: DDP {STEPS} steps, 2 ranks, coll allocator on: {calls} bucket all-reduces "
          f"({nb} bucket(s){', rebuilt after step 0' if rebuilt else ''}), all on coll memory; "
          f"parameters equal gloo's "
          f"(max abs difference {max(r[0] for r in res.values())})")
