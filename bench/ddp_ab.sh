#!/usr/bin/env bash
# What does a change cost a real program? The seeds' kind of DDP training
# (bench/ddp_program.py: the MLP under torch DDP on the coll backend, the
# host's torch) run with two builds' collbench_torch, alternated A B B A per
# round so that both see the same machine. Each run records its calls
# (COLL_TRACE, the same on both sides); from the traces, per rank and then the
# median over the ranks:
#   train_ms   from the first all-reduce's start to the last call's end (the
#              steps, without DDP's set-up)
#   allreduce_ms  the all-reduces' time on the calling side, summed (DDP's
#              gradient buckets, issued nonblocking beside the backward pass)
# Prints each run's row, then per rank count the medians over the rounds
# [their range] and B/A of the medians ("within noise" where the ranges
# overlap).
#
#   bench/ddp_ab.sh BUILD_A BUILD_B    (env: RANKS="2 4", ROUNDS=3, STEPS=20,
#                                       COLL_TORCH_PYTHON=/usr/bin/python3;
#                                       A_ENV, B_ENV: variables for one side,
#                                       "COLL_SHM_X=1 COLL_SHM_Y=2", with one
#                                       build twice to compare settings)
# Each build needs its collbench_torch (cmake --build BUILD --target
# collbench_torch). Exit 2 on bad usage, 1 when a run fails. Run it on a quiet
# machine: it measures the program's wall time.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,24p' "$0" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
py=${COLL_TORCH_PYTHON:-/usr/bin/python3}
ranks=${RANKS:-2 4}
rounds=${ROUNDS:-3}
steps=${STEPS:-20}
for b in "$1" "$2"; do
  ls "$b"/bindings/torch/collbench_torch*.so >/dev/null 2>&1 ||
    { echo "ddp_ab.sh: no collbench_torch in $b/bindings/torch (cmake --build $b --target collbench_torch)" >&2; exit 2; }
done
build_a=$(cd "$1" && pwd) build_b=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one run: side (A|B), ranks, round -> "train_ms allreduce_ms" (medians over the ranks)
run() {
  local side=$1 n=$2 r=$3 build extra d=$tmp/$1.$2.$3
  if [ "$side" = A ]; then build=$build_a extra=${A_ENV:-}; else build=$build_b extra=${B_ENV:-}; fi
  # shellcheck disable=SC2086 # extra is a list of assignments
  if ! env $extra COLL_TRACE="$d" PYTHONPATH="$build/bindings/torch" OMP_NUM_THREADS=1 \
      "$py" "$src/bench/ddp_program.py" --backend coll --nprocs "$n" --steps "$steps" \
      >"$d.log" 2>&1; then
    echo "ddp_ab.sh: $side, $n ranks, round $r failed:" >&2
    tail -5 "$d.log" >&2
    exit 1
  fi
  "$py" - "$d" <<'PY'
import glob, json, statistics, sys
train, ar = [], []
for f in sorted(glob.glob(sys.argv[1] + "/rank*.jsonl")):
    calls = [c for c in map(json.loads, open(f)) if "seq" in c]
    first = next(i for i, c in enumerate(calls) if c["op"] == "allreduce")
    train.append((calls[-1]["t1"] - calls[first]["t0"]) / 1e6)
    ar.append(sum(c["t1"] - c["t0"] for c in calls[first:] if c["op"] == "allreduce") / 1e6)
print("%.1f %.1f" % (statistics.median(train), statistics.median(ar)))
PY
}

echo "# DDP on coll, A: $build_a ${A_ENV:-}; B: $build_b ${B_ENV:-}"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs," \
  "torch $("$py" -c 'import torch; print(torch.__version__)'), $steps steps;" \
  "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ranks round side train_ms allreduce_ms"
for n in $ranks; do
  for ((r = 1; r <= rounds; r++)); do
    order="A B"
    [ $((r % 2)) = 0 ] && order="B A"
    for side in $order; do
      echo "$n $r $side $(run "$side" "$n" "$r")" | tee -a "$tmp/rows"
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| ranks | A train (ms) | B train (ms) | B/A train | A all-reduce (ms) | B all-reduce (ms) | B/A all-reduce |"
echo "|---|---|---|---|---|---|---|"
cat >"$tmp/table.awk" <<'AWK'
function cell(list) { return lo(list) == hi(list) ? median(list) : sprintf("%.1f [%.1f-%.1f]", median(list), lo(list), hi(list)) }
{ v[$1, $3, "t"] = v[$1, $3, "t"] " " $4; v[$1, $3, "a"] = v[$1, $3, "a"] " " $5; seen[$1] = 1 }
END {
  for (n in seen) {
    line = "| " n
    for (k = 1; k <= 2; k++) {
      key = k == 1 ? "t" : "a"
      a = v[n, "A", key]; b = v[n, "B", key]
      overlap = !(lo(b) + 0 > hi(a) + 0 || hi(b) + 0 < lo(a) + 0)
      line = line " | " cell(a) " | " cell(b) " | " sprintf("%.2fx", median(b) / median(a)) (overlap ? " within noise" : "")
    }
    print line " |"
  }
}
AWK
awk -f "$src/bench/rounds.awk" -f "$tmp/table.awk" "$tmp/rows" | sort -n -t'|' -k2
