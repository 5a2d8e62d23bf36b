#!/usr/bin/env bash
# Where a small all-reduce's time goes through torch (issue 50): libcoll's own
# shm all-reduce, torch's coll backend (small calls inline, and with
# COLL_TORCH_INLINE_BYTES=0: queued) and torch's gloo, alternated in one run,
# p50 per size; and the smallest size's path through the binding (call,
# completion, wake-up), from COLL_TRACE's timestamps. bench/torch_latency.py
# has the method.
#
#   bench/torch_latency.sh        (env: BUILD=build (collbench and the module
#                                  built there), PROCS=2 (4,6: oversubscribed
#                                  on 2 cores), SIZES=8,64,4K,64K,1M, ROUNDS=3,
#                                  ITERS=200, WARMUP=20, BREAKDOWN=1,
#                                  PYTHON: the python3 with torch, default
#                                  python3 or /usr/bin/python3)
#
# Prints the machine (CPU model from /proc/cpuinfo, cores), the load (uptime)
# before and after, torch's version and the conditions, then one table per
# process count and the breakdown. Run it on a quiet machine: nothing else
# should share the cores. Exit 77 without a python3 that imports torch,
# without the module or without collbench.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${BUILD:-$here/../build}" && pwd)
py=""
for p in ${PYTHON:-python3 /usr/bin/python3}; do
    if "$p" -c "import torch.distributed" 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "torch_latency: no ${PYTHON:-python3 or /usr/bin/python3} imports torch.distributed"; exit 77; }
export PYTHONPATH=$build/bindings/torch${PYTHONPATH:+:$PYTHONPATH}
"$py" -c "import collbench_torch" 2>/dev/null ||
    { echo "torch_latency: collbench_torch is not built in $build/bindings/torch (cmake --build $build --target collbench_torch)"; exit 77; }
# libcoll's own column needs collbench beside the module (the torch 2 root's
# build makes the module alone)
[ -x "$build/collbench" ] ||
    { echo "torch_latency: no collbench in $build (cmake --build $build --target collbench)"; exit 77; }
# (before OMP_NUM_THREADS: GNU nproc counts that instead of the cores)
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
export PYTHONWARNINGS=ignore OMP_NUM_THREADS=1

load() { uptime | sed 's/.*load average: *//'; }
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
echo "# machine: ${cpu:-unknown CPU}, $cores cores; load (uptime) before: $(load)"
echo "# torch $("$py" -c 'import torch; print(torch.__version__)'), python $("$py" -c 'import platform; print(platform.python_version())'); COLL_BACKEND=${COLL_BACKEND:-auto} for coll; libcoll's own: collbench --backend shm, its ranks bound to cores (collbench's default), torch's unbound"
bd=()
[ "${BREAKDOWN:-1}" = 1 ] && bd=(--breakdown)
"$py" "$here/torch_latency.py" --collbench "$build/collbench" --nprocs "${PROCS:-2}" \
    --sizes "${SIZES:-8,64,4K,64K,1M}" --rounds "${ROUNDS:-3}" --iters "${ITERS:-200}" \
    --warmup "${WARMUP:-20}" "${bd[@]}"
echo
echo "# load (uptime) after: $(load)"
