#!/usr/bin/env bash
# Records the seeds' kind of DDP training (bench/ddp_program.py: the MLP
# 1024-4096-4096-2048-10 under torch DDP) as traces to replay (issue 49;
# docs/TORCH.md "Recording a trace"). Just the recording; `collbench replay`
# replays them.
#
#   bench/record_ddp.sh COLL_DIR [PROFILE_DIR]
#
#   COLL_DIR/torch<V>/<N>ranks/rank<R>.jsonl   on coll with COLL_TRACE, for
#       the host's torch (Debian 12: 1.13) and, when scripts/torch_root.sh's
#       root exists, its torch 2.x
#   PROFILE_DIR/torch<V>/<N>ranks/rank<R>.json on gloo under torch.profiler
#       (record_shapes=True, export_chrome_trace per rank), torch 2.x only
#       (the root); skipped without PROFILE_DIR or without the root
#
# Environment: RANKS (default "2 4"), STEPS (default 20), TINY=1 (the
# 64-128-10 MLP: a quick check of the script), BUILD (the host build with
# collbench_torch, default build), BUILD2 (the torch 2 build, default
# $BUILD/torch2-root, as ctest's torch2/tests: made here when absent),
# TORCH2=0 (the host's torch only).
# Nothing is timed here; run it on a quiet machine all the same, the traces
# carry the program's own times.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
coll_dir=${1:?usage: record_ddp.sh COLL_DIR [PROFILE_DIR]}
prof_dir=${2:-}
ranks=${RANKS:-2 4}
steps=${STEPS:-20}
build=$(cd "${BUILD:-$src/build}" && pwd)
build2=${BUILD2:-$build/torch2-root}
tiny=()
[ "${TINY:-0}" = 1 ] && tiny=(--tiny)
mkdir -p "$coll_dir"
coll_dir=$(cd "$coll_dir" && pwd)
if [ -n "$prof_dir" ]; then
  mkdir -p "$prof_dir"
  prof_dir=$(cd "$prof_dir" && pwd)
fi
program=$src/bench/ddp_program.py
py=${COLL_TORCH_PYTHON:-/usr/bin/python3}

die() { echo "record_ddp.sh: $*" >&2; exit 1; }

# Checks a directory of coll traces: one complete file per rank.
complete() {
  local d=$1 n=$2 r
  for ((r = 0; r < n; r++)); do
    [ -f "$d/rank$r.jsonl" ] || die "$d/rank$r.jsonl missing"
    tail -1 "$d/rank$r.jsonl" | grep -q '"end":true' || die "$d/rank$r.jsonl has no footer"
  done
  echo "record_ddp.sh: $d: $n ranks, $(cat "$d"/rank*.jsonl | grep -c '"seq"') calls"
}

# The host's torch, on coll.
ls "$build"/bindings/torch/collbench_torch*.so >/dev/null 2>&1 ||
  die "no collbench_torch in $build/bindings/torch (cmake --build $build --target collbench_torch)"
v=$("$py" -c 'import torch; print(torch.__version__.split("+")[0])')
for n in $ranks; do
  d=$coll_dir/torch$v/${n}ranks
  rm -rf "$d"
  COLL_TRACE=$d PYTHONPATH=$build/bindings/torch OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
    "$py" "$program" --backend coll --nprocs "$n" --steps "$steps" "${tiny[@]}"
  complete "$d" "$n"
done

# torch 2.x in the Debian 13 root: coll (the module built for it), and gloo
# under the profiler.
[ "${TORCH2:-1}" = 0 ] && exit 0
if ! "$src/scripts/torch_root.sh" status >/dev/null 2>&1; then
  echo "record_ddp.sh: no torch 2 root (sudo scripts/torch_root.sh create): torch 2 traces skipped"
  exit 0
fi
case "$build2/" in "$src"/*) ;; *) die "BUILD2 must be inside the source tree ($src): the root sees only that" ;; esac
in_root() { "$src/scripts/torch_root.sh" run "$@"; }
if ! ls "$build2"/bindings/torch/collbench_torch*.so >/dev/null 2>&1; then
  in_root sh -ec "cmake -S . -B '$build2' -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOLL_TORCH_PYTHON=/usr/bin/python3 >/dev/null && cmake --build '$build2' --target collbench_torch -j2"
fi
v2=$(in_root python3 -c 'import torch; print(torch.__version__.split("+")[0])')
for n in $ranks; do
  # the root sees the source tree only: record in the build there, then move the files out
  tmp=$build2/record_ddp.$$
  rm -rf "$tmp"
  in_root env COLL_TRACE="$tmp/coll" PYTHONPATH="$build2/bindings/torch" \
    OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" python3 "$program" --backend coll --nprocs "$n" \
    --steps "$steps" "${tiny[@]}"
  if [ -n "$prof_dir" ]; then
    in_root env OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" python3 "$program" --backend gloo \
      --nprocs "$n" --steps "$steps" --profile "$tmp/prof" "${tiny[@]}"
  fi
  d=$coll_dir/torch$v2/${n}ranks
  rm -rf "$d"
  mkdir -p "$(dirname "$d")"
  mv "$tmp/coll" "$d"
  complete "$d" "$n"
  if [ -n "$prof_dir" ]; then
    p=$prof_dir/torch$v2/${n}ranks
    rm -rf "$p"
    mkdir -p "$(dirname "$p")"
    mv "$tmp/prof" "$p"
    echo "record_ddp.sh: $p: $(ls "$p" | wc -l) profiler traces"
  fi
  rm -rf "$tmp"
done
