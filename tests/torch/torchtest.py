"""Shared helpers of the torch backend tests (tests/torch): skip without torch,
launch N ranks with env:// variables on a free port, collect their verdicts."""
import os
import socket
import sys
import traceback

SKIP = 77  # ctest SKIP_RETURN_CODE

try:
    import torch  # noqa: F401
    import torch.distributed as dist  # noqa: F401
    import torch.multiprocessing as mp
except ImportError as e:  # pragma: no cover
    print(f"SKIP: torch is not importable by {sys.executable}: {e}")
    sys.exit(SKIP)


def ddp_train(model, rank, group, steps, momentum=0.0, hook=None, make_state=None):
    """steps of SGD (lr 0.05) on DDP(model) over group, each rank its own seeded
    data, with hook registered (its state made by make_state(group)) when given;
    the parameters after."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    model = DDP(model, process_group=group)
    if hook is not None:
        model.register_comm_hook(make_state(group), hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=momentum)
    g = torch.Generator().manual_seed(99 + rank)  # each rank its own data
    for _ in range(steps):
        x = torch.randn(16, 32, generator=g)
        y = torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def tcp_store(port, world, rank, timeout):
    """A TCPStore on 127.0.0.1:port, rank 0 its server. Without libuv where
    torch takes the choice (2.x; Debian 13's torch has none: USE_LIBUV=0 is
    read by env:// only, the constructor defaults to libuv)."""
    import inspect
    kw = {}
    try:
        if "use_libuv" in inspect.signature(dist.TCPStore.__init__).parameters:
            kw["use_libuv"] = os.environ.get("USE_LIBUV", "1") != "0"
    except (TypeError, ValueError):  # a pybind11 signature inspect cannot read
        if os.environ.get("USE_LIBUV") == "0" and torch.__version__ >= "2":
            kw["use_libuv"] = False
    return dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timeout, **kw)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _entry(rank, world, port, fn, args, q, timeout):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world))
    import faulthandler
    faulthandler.dump_traceback_later(float(os.environ.get("COLL_TEST_STACKS_AFTER", timeout - 5)), exit=False)
    try:
        import collbench_torch  # noqa: F401  registers "coll"
        res = fn(rank, world, *args)
        q.put((rank, "ok", res))
    except BaseException:  # report, do not hang the others' join
        q.put((rank, "fail", traceback.format_exc()))
        q.close()
        q.join_thread()  # the message must leave before the process does
        sys.stdout.flush()
        os._exit(1)


def run(world, fn, *args, timeout=120, expect_dead=(), check_exit=False):
    """Runs fn(rank, world, *args) on world processes; returns {rank: result}.
    Raises SystemExit(1) naming the ranks that failed. check_exit: every
    process must also exit, with status 0, within 30 s of its report."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_entry, args=(r, world, port, fn, args, q, timeout)) for r in range(world)]
    for p in procs:
        p.start()
    results, failed = {}, []
    import queue
    want = world - len(expect_dead)
    while len(results) + len(failed) < want:
        try:
            rank, status, res = q.get(timeout=timeout)
        except queue.Empty:
            print(f"FAIL: ranks did not report within {timeout} s", flush=True)
            for p in procs:
                p.kill()
            sys.exit(1)
        if status == "ok":
            results[rank] = res
        else:
            print(f"rank {rank} failed:\n{res}", flush=True)
            failed.append(rank)
    import time
    t0 = time.monotonic()
    for r, p in enumerate(procs):
        p.join(30)
        if p.is_alive():
            p.kill()
            if check_exit:
                print(f"FAIL: rank {r} did not exit within 30 s of its report (hung at exit)", flush=True)
                failed.append(r)
        elif check_exit and p.exitcode != 0:
            print(f"FAIL: rank {r} exited with status {p.exitcode}", flush=True)
            failed.append(r)
    if check_exit and not failed:
        print(f"all {world} ranks exited with status 0, {time.monotonic() - t0:.2f} s after "
              f"the last report", flush=True)
    if failed:
        sys.exit(1)
    return results
