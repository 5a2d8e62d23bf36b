#!/usr/bin/env python3
"""torch.distributed's gloo all-reduce (float32 sum, in place): the seeds'
method (barrier per iteration, slowest rank), one line per size on rank 0:
"NPROCS BYTES TIME_US". A front for torch_allreduce.py, which also runs the
coll backend and writes collbench CSV rows.

    torch_gloo_allreduce.py NPROCS ITERS WARMUP BYTES...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_allreduce  # noqa: E402


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    world, iters, warmup = sys.argv[1:4]
    torch_allreduce.main(["--backends", "gloo", "--nprocs", world, "--iters", iters,
                          "--warmup", warmup, "--sizes", ",".join(sys.argv[4:]), "--lines"])
