"""Groups of overlapping members created in different orders by different
ranks, as pipeline stages make them: on 4 ranks the ring of pairs {0,1},
{1,2}, {2,3}, {3,0}, each made with new_group(..., use_local_synchronization=
True) by its two members only, even ranks making their left pair first, odd
ranks their right pair first; then an all_reduce in each pair, in each rank's
own order, and every group destroyed. On gloo and on coll in the same test.
Needs torch >= 2.1 (use_local_synchronization); skipped on older, saying so."""
import inspect
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

if "use_local_synchronization" not in inspect.signature(dist.new_group).parameters:
    print(f"SKIP: torch {torch.__version__}: new_group has no use_local_synchronization (2.1 and later)")
    sys.exit(torchtest.SKIP)


def body(rank, world, port):
    import datetime
    timeout = datetime.timedelta(seconds=60)
    base = torchtest.tcp_store(port, world, rank, timeout)
    for backend in ("gloo", "coll"):
        dist.init_process_group(backend, store=dist.PrefixStore(backend, base), rank=rank,
                                world_size=world, timeout=timeout)
        left, right = sorted([(rank - 1) % world, rank]), sorted([rank, (rank + 1) % world])
        pairs = [left, right] if rank % 2 == 0 else [right, left]
        groups = [(p, dist.new_group(p, use_local_synchronization=True)) for p in pairs]
        for members, g in groups:
            t = torch.full((4096,), float(rank + 1))
            dist.all_reduce(t, group=g)
            want = float(sum(r + 1 for r in members))
            if not torch.equal(t, torch.full_like(t, want)):
                raise AssertionError(f"{backend}: pair {members}: all_reduce gave {t[0].item()}, want {want}")
        for _, g in groups:
            dist.destroy_process_group(g)
        dist.destroy_process_group()
    return True


if __name__ == "__main__":
    torchtest.run(4, body, torchtest.free_port(), timeout=150)
    print("OK: overlapping pairs made in different orders (local synchronization): "
          "all_reduce in each, on gloo and coll alike")
