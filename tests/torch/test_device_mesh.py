"""A 2-D device mesh on 4 ranks, as tensor and data parallelism make one
(init_device_mesh("cpu", (2, 2)): one group per mesh dimension): all_reduce
and all_gather in each dimension's group, then DDP over one dimension's group;
dist.new_subgroups(group_size=2); on gloo and on coll in the same test, the
results compared. Needs torch >= 2.2
(torch.distributed.device_mesh); skipped on older, saying so."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

try:
    from torch.distributed.device_mesh import init_device_mesh
except ImportError:
    print(f"SKIP: torch {torch.__version__} has no torch.distributed.device_mesh (2.2 and later)")
    sys.exit(torchtest.SKIP)


def body(rank, world, port):
    import datetime
    timeout = datetime.timedelta(seconds=60)
    base = torchtest.tcp_store(port, world, rank, timeout)
    out = {}
    for backend in ("gloo", "coll"):
        dist.init_process_group(backend, store=dist.PrefixStore(backend, base), rank=rank,
                                world_size=world, timeout=timeout)
        mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        for dim in ("dp", "tp"):
            g = mesh.get_group(dim)
            members = dist.get_process_group_ranks(g)
            if rank not in members or len(members) != 2:
                raise AssertionError(f"{backend}: mesh dimension {dim}: members {members}")
            t = torch.full((1000,), float(rank + 1))
            dist.all_reduce(t, group=g)
            want = float(sum(r + 1 for r in members))
            if not torch.equal(t, torch.full_like(t, want)):
                raise AssertionError(f"{backend}: {dim} all_reduce gave {t[0].item()}, want {want}")
            parts = [torch.empty(3) for _ in members]
            dist.all_gather(parts, torch.full((3,), float(rank)), group=g)
            got = [int(p[0].item()) for p in parts]
            if got != members:
                raise AssertionError(f"{backend}: {dim} all_gather gave {got}, want {members}")
        # two subgroups of two, each rank in one (torch 1.13 allowed them only with CUDA)
        sub, subs = dist.new_subgroups(group_size=2)
        t = torch.full((100,), float(rank))
        dist.all_reduce(t, group=sub)
        want = float(sum(dist.get_process_group_ranks(sub)))
        if len(subs) != 2 or not torch.equal(t, torch.full_like(t, want)):
            raise AssertionError(f"{backend}: new_subgroups: {len(subs)} groups, sum {t[0].item()}, want {want}")
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 10))
        params = torchtest.ddp_train(model, rank, mesh.get_group("dp"), steps=3)
        out[backend] = params
        dist.destroy_process_group()
    for a, b in zip(out["gloo"], out["coll"]):
        if not torch.allclose(a, b, atol=1e-5):
            raise AssertionError("DDP on the dp group: coll's parameters differ from gloo's")
    return True


if __name__ == "__main__":
    torchtest.run(4, body, torchtest.free_port(), timeout=150)
    print("OK: 2x2 device mesh: all_reduce and all_gather in each dimension, DDP over 'dp', "
          "on gloo and coll alike")
