#!/bin/sh
# `pip install ./bindings/torch` (docs/TORCH.md, "Install") into a temporary
# --target folder, then a 2-rank all_reduce on "coll" through the module
# installed there, with the build tree off the path.
# usage: pip_install_test.sh PYTHON (one that imports torch)
set -eu
py=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "pip install test: $*" >&2; exit 1; }
"$py" -c 'import torch' 2>/dev/null || { echo "SKIP: $py cannot import torch"; exit 77; }
"$py" -m pip --version >/dev/null 2>&1 ||
    { echo "SKIP: $py has no pip (apt-get install python3-pip)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --no-build-isolation: build with the installed torch and setuptools (an
# isolated build would download them); --no-index: nothing from the network.
# The build goes to $tmp (COLL_TORCH_BUILD_BASE), not into the source tree;
# unoptimized: what is checked is the install, not the speed (78 s alone
# here at -O0, where -O2 took 178 s beside the long tier).
COLL_TORCH_BUILD_BASE=$tmp/build JOBS=${JOBS:-2} COLL_TORCH_OPT=-O0 \
    COLL_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0" "$py" -m pip install --no-build-isolation --no-index \
    --no-cache-dir --target "$tmp/site" "$src/bindings/torch" >"$tmp/pip.log" 2>&1 ||
    { tail -40 "$tmp/pip.log"; fail "pip install failed (log above)"; }
ls "$tmp"/site/collbench_torch*.so >/dev/null 2>&1 || fail "no collbench_torch*.so in the --target folder"
env -u PYTHONPATH PYTHONPATH="$tmp/site" "$py" "$src/tests/torch/pip_allreduce.py" "$tmp/site"
