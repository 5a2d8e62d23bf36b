#!/usr/bin/env bash
# torch's own distributed tests against coll and gloo (tests/torch/conformance.py):
# fails when a test passing on gloo does not pass on coll. docs/TORCH.md,
# "torch's distributed tests".
#
#   scripts/torch_conformance.sh [--full] [--torch2] [BUILD_DIR] [-- CONFORMANCE_ARGS...]
#
# Default: the quick set (ctest torch/conformance_quick); --full: the whole
# suite (gloo then coll; 10 minutes or more); after --, conformance.py's own
# selection (-n NAME, -k PATTERN, -x PATTERN) instead. The module is BUILD_DIR's
# (default build/: `make torch`); --torch2: torch 2 in scripts/torch_root.sh's
# root, the module that `scripts/torch_root.sh test BUILD_DIR/torch2-root`
# built there.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
sel=(--quick) torch2=0 build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --full) sel=() ;;
    --torch2) torch2=1 ;;
    --) shift; sel=("$@"); break ;;
    -*) echo "torch_conformance.sh: unknown option '$1' (usage: torch_conformance.sh [--full] [--torch2] [BUILD_DIR] [-- ARGS])" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
[ -d "$build" ] || { echo "torch_conformance.sh: no build directory '$build'" >&2; exit 2; }
build=$(cd "$build" && pwd)
if [ $torch2 = 1 ]; then
  mod=$build/torch2-root/bindings/torch
  ls "$mod"/collbench_torch*.so >/dev/null 2>&1 ||
    { echo "torch_conformance.sh: no module in $mod (sudo scripts/torch_root.sh test $build/torch2-root)" >&2; exit 2; }
  exec "$src/scripts/torch_root.sh" run env PYTHONPATH="$mod" OMP_NUM_THREADS=1 PYTHONWARNINGS=ignore \
    python3 "$src/tests/torch/conformance.py" "${sel[@]}"
fi
mod=$build/bindings/torch
ls "$mod"/collbench_torch*.so >/dev/null 2>&1 ||
  { echo "torch_conformance.sh: no module in $mod (make torch BUILD=${build#"$src"/})" >&2; exit 2; }
py=$(sed -n 's/^COLL_TORCH_PYTHON:FILEPATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
PYTHONPATH=$mod OMP_NUM_THREADS=1 PYTHONWARNINGS=ignore exec "${py:-/usr/bin/python3}" \
  "$src/tests/torch/conformance.py" "${sel[@]}"
