"""Every collective of the 'coll' backend against gloo's result on the same
inputs: dtypes x ops, async forms, gather and scatter, non-contiguous tensors,
bad input.
usage: test_collectives.py WORLD_SIZE"""
import sys
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchtest  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16,
          torch.int8, torch.uint8, torch.int32, torch.int64]
OPS = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT,
       "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def inputs(rank, dtype, n=37, seed=0):
    g = torch.Generator().manual_seed(1000 * seed + rank)
    # small integers: exact in every dtype, no overflow in a product of 6
    return torch.randint(1, 4, (n,), generator=g).to(dtype)


def ref(fn, t, gloo):
    """gloo's answer; for dtypes gloo lacks (bfloat16...), gloo on float64 cast back."""
    try:
        x = t.clone()
        fn(x, gloo)
        return x
    except RuntimeError:
        x = t.to(torch.float64)
        fn(x, gloo)
        return x.to(t.dtype)


def check(name, got, want):
    if not torch.equal(got, want):
        raise AssertionError(f"{name}: coll {got.tolist()} != gloo {want.tolist()}")


def body(rank, world):
    dist.init_process_group("gloo")
    gloo = dist.group.WORLD
    coll = dist.new_group(backend="coll")
    n_checked = 0
    for dt in DTYPES:
        for opname, op in OPS.items():
            t = inputs(rank, dt, seed=len(opname))
            want = ref(lambda x, g: dist.all_reduce(x, op=op, group=g), t, gloo)
            got = t.clone()
            dist.all_reduce(got, op=op, group=coll)
            check(f"all_reduce {dt} {opname}", got, want)
            n_checked += 1
        # avg (floating point): gloo has none in 1.13; its sum / world is the reference
        if dt.is_floating_point:
            t = inputs(rank, dt)
            s = ref(lambda x, g: dist.all_reduce(x, group=g), t, gloo)
            want = (s.to(torch.float64) / world).to(dt)
            got = t.clone()
            dist.all_reduce(got, op=dist.ReduceOp.AVG, group=coll)
            if not torch.allclose(got.double(), want.double(), rtol=1e-2 if torch.finfo(dt).bits == 16 else 1e-6):
                raise AssertionError(f"avg {dt}: {got} vs {want}")
        # all_gather (list) and into tensor
        t = inputs(rank, dt, n=5)
        w = [torch.zeros(5, dtype=dt) for _ in range(world)]
        g = [torch.zeros(5, dtype=dt) for _ in range(world)]
        try:
            dist.all_gather(w, t, group=gloo)
        except RuntimeError:
            w = [x.to(dt) for x in ref_gather(t, world, gloo)]
        dist.all_gather(g, t, group=coll)
        for a, b in zip(g, w):
            check(f"all_gather {dt}", a, b)
        out = torch.zeros(5 * world, dtype=dt)
        getattr(dist, "all_gather_into_tensor", dist._all_gather_base)(out, t, group=coll)
        check(f"all_gather_into_tensor {dt}", out, torch.cat(w))
        # broadcast from the last rank
        t = inputs(rank, dt, seed=3)
        want = ref(lambda x, gg: dist.broadcast(x, src=world - 1, group=gg), t, gloo)
        got = t.clone()
        dist.broadcast(got, src=world - 1, group=coll)
        check(f"broadcast {dt}", got, want)
        n_checked += 3
    for opname, op in OPS.items():
        dt = torch.float32
        # reduce to root 1
        t = inputs(rank, dt, seed=5)
        want = ref(lambda x, g: dist.reduce(x, dst=1, op=op, group=g), t, gloo)
        got = t.clone()
        dist.reduce(got, dst=1, op=op, group=coll)
        if rank == 1:
            check(f"reduce {opname}", got, want)
        # reduce_scatter: gloo in 1.13 has none; reference = all_reduce(gloo) block
        ins = [inputs(rank, dt, n=4, seed=10 + r) for r in range(world)]
        full = ref(lambda x, g: dist.all_reduce(x, op=op, group=g), torch.cat(ins), gloo)
        want = full[4 * rank:4 * rank + 4]
        got = torch.zeros(4, dtype=dt)
        dist.reduce_scatter(got, ins, op=op, group=coll)
        check(f"reduce_scatter {opname}", got, want)
        got2 = torch.zeros(4, dtype=dt)
        getattr(dist, "reduce_scatter_tensor", dist._reduce_scatter_base)(got2, torch.cat(ins), op=op, group=coll)
        check(f"reduce_scatter_tensor {opname}", got2, want)
        n_checked += 3
    # all_to_all_single, even and uneven splits (reference: gloo)
    for dt in (torch.float32, torch.int64):
        t = torch.arange(world * 3, dtype=dt) + 100 * rank
        want = torch.empty_like(t)
        dist.all_to_all_single(want, t, group=gloo)
        got = torch.empty_like(t)
        dist.all_to_all_single(got, t, group=coll)
        check(f"all_to_all_single {dt}", got, want)
        insp = [(rank + r) % 3 + 1 for r in range(world)]
        outsp = [(r + rank) % 3 + 1 for r in range(world)]
        t = torch.arange(sum(insp) * 2, dtype=dt).reshape(-1, 2) + 1000 * rank
        want = torch.empty(sum(outsp), 2, dtype=dt)
        dist.all_to_all_single(want, t, outsp, insp, group=gloo)
        got = torch.full_like(want, -1)
        dist.all_to_all_single(got, t, outsp, insp, group=coll)
        check(f"all_to_all_single uneven {dt}", got, want)
        n_checked += 2
    # gather and scatter (strided outputs at the root), against gloo's on float64
    for dt in (torch.float32, torch.int64, torch.bfloat16):
        root = world - 1
        t = inputs(rank, dt, seed=7)
        want = [torch.zeros(len(t), dtype=torch.float64) for _ in range(world)] if rank == root else None
        dist.gather(t.to(torch.float64), gather_list=want, dst=root, group=gloo)
        got = [torch.zeros(2 * len(t), dtype=dt)[::2] for _ in range(world)] if rank == root else None
        dist.gather(t, gather_list=got, dst=root, group=coll)
        for r in range(world if rank == root else 0):
            check(f"gather {dt} from rank {r}", got[r], want[r].to(dt))
        src = [inputs(r, dt, seed=8) for r in range(world)] if rank == 0 else None
        want = torch.zeros(37, dtype=torch.float64)
        dist.scatter(want, [x.to(torch.float64) for x in src] if src else None, src=0, group=gloo)
        got = torch.zeros(37, dtype=dt)
        dist.scatter(got, src, src=0, group=coll)
        check(f"scatter {dt}", got, want.to(dt))
        n_checked += 2
    # send/recv ring
    t = inputs(rank, torch.float64, seed=7)
    got = torch.zeros_like(t)
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    if rank % 2 == 0:
        dist.send(t, nxt, group=coll)
        dist.recv(got, prv, group=coll)
    else:
        dist.recv(got, prv, group=coll)
        dist.send(t, nxt, group=coll)
    check("send/recv", got, inputs(prv, torch.float64, seed=7))
    dist.barrier(group=coll)
    # async forms: several in flight, then wait
    ts = [inputs(rank, torch.float32, n=1000 + i, seed=20 + i) for i in range(4)]
    wants = [ref(lambda x, g: dist.all_reduce(x, group=g), t, gloo) for t in ts]
    gots = [t.clone() for t in ts]
    works = [dist.all_reduce(x, group=coll, async_op=True) for x in gots]
    b = inputs(rank, torch.float32, seed=30)
    bw = dist.broadcast(b, src=0, group=coll, async_op=True)
    ag = [torch.zeros(5) for _ in range(world)]
    agw = dist.all_gather(ag, inputs(rank, torch.float32, n=5), group=coll, async_op=True)
    for w in works:
        w.wait()
        assert w.is_completed()
    bw.wait()
    agw.wait()
    for i, (g_, w_) in enumerate(zip(gots, wants)):
        check(f"async all_reduce {i}", g_, w_)
    check("async broadcast", b, inputs(0, torch.float32, seed=30))
    for r in range(world):
        check("async all_gather", ag[r], inputs(r, torch.float32, n=5))
    n_checked += 3
    # non-contiguous: a transposed view and a strided slice, results copied back
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) * (rank + 1)
    v = base.t()
    assert not v.is_contiguous()
    want = ref(lambda x, g: dist.all_reduce(x, group=g), v.contiguous(), gloo)
    dist.all_reduce(v, group=coll)
    check("non-contiguous all_reduce", v, want)
    big = torch.zeros(20, dtype=torch.float32)
    sl = big[::2]
    sl.copy_(torch.arange(10, dtype=torch.float32) * (rank + 1))
    want = ref(lambda x, g: dist.broadcast(x, src=0, group=g), sl.contiguous(), gloo)
    w = dist.broadcast(sl, src=0, group=coll, async_op=True)
    w.wait()
    check("non-contiguous async broadcast", sl, want)
    assert torch.count_nonzero(big[1::2]) == 0, "copy-back wrote outside the view"
    n_checked += 2
    # tensors in libcoll memory (the group's empty()): same results as gloo's
    import collbench_torch
    pg = collbench_torch.backend(coll)  # torch 2: the group's CPU backend
    for dt in (torch.float32, torch.int64):
        src = inputs(rank, dt, n=4096, seed=40)
        t = pg.empty([64, 64], dt)
        t.copy_(src.view(64, 64))
        want = ref(lambda x, g: dist.all_reduce(x, group=g), src, gloo)
        dist.all_reduce(t, group=coll)
        check(f"all_reduce in coll memory {dt}", t.view(-1), want)
        n_checked += 1
    n_checked += bitwise(rank, world, coll)
    n_checked += sparse(rank, world, coll, gloo)
    n_checked += coalescing(rank, world, coll)
    n_checked += sequence_number(rank, world, collbench_torch.backend(coll), coll)
    # bad input: a clear RuntimeError, and the communicator still works after it
    for bad, what in ((lambda: dist.all_reduce(torch.ones(3, dtype=torch.bool), op=dist.ReduceOp.AVG, group=coll), "not defined for dtype bool"),
                      (lambda: dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BAND, group=coll), "integer or bool"),
                      (lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32), op=dist.ReduceOp.AVG, group=coll), "avg"),
                      # straight to the backend: dist.broadcast refuses a src outside the group itself
                      (lambda: bad_root_broadcast(pg, world), "root rank")):
        try:
            bad()
        except RuntimeError as e:
            if what not in str(e):
                raise AssertionError(f"unclear error: {e}")
        else:
            raise AssertionError(f"bad input was accepted (expected an error saying '{what}')")
    t = torch.ones(3)
    dist.all_reduce(t, group=coll)
    check("after errors", t, torch.full((3,), float(world)))
    dist.barrier(group=coll)
    dist.destroy_process_group()
    return n_checked


def bitwise(rank, world, coll):
    """band/bor/bxor on integers, and bool under every op gloo gives it (sum and
    max: or; product and min: and), against every rank's input reduced here."""
    import functools
    n = 0
    ands = (dist.ReduceOp.BAND, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN)
    cases = [(dt, op) for dt in (torch.int8, torch.uint8, torch.int32, torch.int64)
             for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR)]
    cases += [(torch.bool, op) for op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN,
                                          dist.ReduceOp.MAX, dist.ReduceOp.BAND, dist.ReduceOp.BOR,
                                          dist.ReduceOp.BXOR)]
    for dt, op in cases:
        def mine(r):
            g = torch.Generator().manual_seed(7 * r + 1)
            return torch.randint(0, 2 if dt == torch.bool else 100, (2, 19), generator=g).to(dt)
        fn = (torch.bitwise_xor if op == dist.ReduceOp.BXOR else
              torch.bitwise_and if op in ands else torch.bitwise_or)
        want = functools.reduce(fn, [mine(r) for r in range(world)])
        got = mine(rank).t()  # non-contiguous
        dist.all_reduce(got, op=op, group=coll)
        check(f"all_reduce {dt} {op}", got.t(), want)
        n += 1
    # bool moved (broadcast, all_gather straight into chunks of one tensor)
    b = torch.arange(6) % (rank + 2) == 0
    out = torch.zeros(6 * world, dtype=torch.bool)
    dist.all_gather(list(out.chunk(world)), b, group=coll)
    check("all_gather bool", out, torch.cat([torch.arange(6) % (r + 2) == 0 for r in range(world)]))
    dist.broadcast(b, src=0, group=coll)
    check("broadcast bool", b, torch.arange(6) % 2 == 0)
    return n + 2


def sparse(rank, world, coll, gloo):
    """Sparse (COO) all_reduce: the cases of torch's own test (its
    simple_sparse_reduce_tests: 1-3 sparse dims, 1-3 dense dims, rank r with
    r + 1 entries), an uncoalesced input, a rank with no entries, float64 and
    int64 values, and the async form, each against gloo's sum; a non-sum op is
    refused."""
    n = 0
    for sparse_dims, dense_dims in ((1, 0), (2, 0), (3, 0), (1, 1), (1, 2), (1, 3)):
        def mine(r):
            idx = torch.arange(r + 1).reshape(1, r + 1)
            for _ in range(sparse_dims - 1):
                idx = torch.cat((idx, torch.zeros(1, r + 1, dtype=torch.long)))
            shape = [world] + [world] * (sparse_dims - 1) + [2] * dense_dims
            return torch.sparse_coo_tensor(idx, torch.ones([r + 1] + [2] * dense_dims), shape)
        want = mine(0)
        for r in range(1, world):
            want = want + mine(r)
        got = mine(rank)
        dist.all_reduce(got, group=coll)
        check_sparse(f"sparse all_reduce {tuple(got.shape)}", got, want)
        n += 1
    idx = torch.tensor([[rank % 3, 0, rank % 3], [1, 2, 1]])  # a duplicate entry: uncoalesced
    for dt in (torch.float64, torch.int64):
        val = torch.arange(3, dtype=dt) + rank
        want = torch.sparse_coo_tensor(idx, val, (3, 4))
        dist.all_reduce(want, group=gloo)
        got = torch.sparse_coo_tensor(idx, val, (3, 4))
        dist.all_reduce(got, group=coll)
        check_sparse(f"sparse all_reduce uncoalesced {dt}", got, want)
        n += 1
    empty_here = torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.long), torch.zeros(0),
                                         (3, 4)) if rank == 0 else \
        torch.sparse_coo_tensor(torch.tensor([[rank % 3], [rank % 4]]), torch.ones(1), (3, 4))
    want = empty_here.clone()
    dist.all_reduce(want, group=gloo)
    got = empty_here.clone()
    dist.all_reduce(got, group=coll, async_op=True).wait()
    check_sparse("sparse all_reduce async, rank 0 without entries", got, want)
    try:
        dist.all_reduce(empty_here.clone(), op=dist.ReduceOp.MAX, group=coll)
    except RuntimeError as e:
        if "summed only" not in str(e):
            raise AssertionError(f"unclear error for a sparse max: {e}")
    else:
        raise AssertionError("a sparse all_reduce with max was accepted")
    return n + 1


def coalescing(rank, world, coll):
    """torch 2's coalescing manager (sync and async) around all_reduce,
    all_gather_into_tensor and reduce_scatter_tensor: each group of calls goes
    to coll as one coalesced call; results against values computed here."""
    if not hasattr(dist, "_coalescing_manager"):
        if rank == 0:
            print(f"torch {torch.__version__} has no coalescing manager: not checked", flush=True)
        return 0
    mine = [torch.arange(4 * world, dtype=torch.float32) * (rank + 1) + k for k in range(3)]
    total = sum(range(1, world + 1))
    sums = [torch.arange(4 * world, dtype=torch.float32) * total + k * world for k in range(3)]
    for async_ops in (False, True):
        got = [t.clone() for t in mine]
        with dist._coalescing_manager(group=coll, async_ops=async_ops) as cm:
            for t in got:
                dist.all_reduce(t, group=coll)
        if async_ops:
            cm.wait()
        for k in range(3):
            check(f"coalesced all_reduce {k} (async {async_ops})", got[k], sums[k])
    outs = [torch.empty(4 * world * world) for _ in range(3)]
    with dist._coalescing_manager(group=coll):
        for o, t in zip(outs, mine):
            dist.all_gather_into_tensor(o, t, group=coll)
    for k in range(3):
        want = torch.cat([torch.arange(4 * world, dtype=torch.float32) * (r + 1) + k
                          for r in range(world)])
        check(f"coalesced all_gather_into_tensor {k}", outs[k], want)
    outs = [torch.empty(4) for _ in range(3)]
    with dist._coalescing_manager(group=coll):
        for o, t in zip(outs, mine):
            dist.reduce_scatter_tensor(o, t, group=coll)
    for k in range(3):
        check(f"coalesced reduce_scatter_tensor {k}", outs[k], sums[k][4 * rank:4 * rank + 4])
    return 4


def sequence_number(rank, world, pg, coll):
    """The group's sequence number, which torch's ProcessGroupWrapper
    (TORCH_DISTRIBUTED_DEBUG=DETAIL) sets when it wraps the group and puts in
    every collective's fingerprint: 0 until set, then one nonzero number on
    every rank, and after a second set again one number on every rank."""
    if pg._get_sequence_number_for_group() != 0:
        raise AssertionError("sequence number before it was set: not 0")
    for _ in range(2):
        pg._set_sequence_number_for_group()
        mine = torch.tensor([pg._get_sequence_number_for_group()], dtype=torch.int64)
        every = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
        dist.all_gather(every, mine, group=coll)
        if mine.item() == 0 or any(e.item() != mine.item() for e in every):
            raise AssertionError(f"sequence numbers differ or are 0: {[e.item() for e in every]}")
    return 1


def check_sparse(name, got, want):
    if not got.is_sparse:
        raise AssertionError(f"{name}: the result is no longer sparse")
    if not torch.equal(got.to_dense(), want.to_dense()):
        raise AssertionError(f"{name}: coll {got.to_dense().tolist()} != {want.to_dense().tolist()}")


def bad_root_broadcast(pg, world):
    opts = dist.BroadcastOptions()
    opts.rootRank = world
    pg.broadcast([torch.ones(3)], opts).wait()


def ref_gather(t, world, gloo):
    x = t.to(torch.float64)
    out = [torch.zeros(len(t), dtype=torch.float64) for _ in range(world)]
    dist.all_gather(out, x, group=gloo)
    return out


if __name__ == "__main__":
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    res = torchtest.run(world, body)
    print(f"OK: {world} ranks, {res[0]} coll results equal to gloo's")
