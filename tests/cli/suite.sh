#!/bin/sh
# collbench suite --quick: every available backend (shm and auto with both
# buffer kinds) x -P 2,4 x 3 sizes (in-place, the suite's default), then the
# training benchmark and the report, into one results directory. Checks the
# rows against the plan the suite announced, the JSON, the log, the plain
# progress lines (stderr is not a terminal here) and the directory it prints.
. "$(dirname "$0")/lib.sh"

HEADER="timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong,pass"
OUT="$WORK/run"

expect_exit 0 "" suite --quick -o "$OUT"
[ "$(tail -n 1 "$WORK/out")" = "results: $OUT" ] || fail "last line is not 'results: $OUT': $(tail -n 1 "$WORK/out")"
grep -q "^collbench suite: [0-9]* of [0-9]* steps ok, in [0-9]* min [0-9][0-9] s$" "$WORK/out" \
    || fail "the summary does not state the time taken: $(cat "$WORK/out")"

# "collbench suite: 6 collective steps (allreduce on tcp shm auto mpi; -P 2,4; ...)"
plan=$(grep '^collbench suite: [0-9]* collective steps' "$WORK/err")
[ -n "$plan" ] || fail "no plan line on stderr: $(cat "$WORK/err")"
nsteps=$(echo "$plan" | sed 's/^collbench suite: \([0-9]*\) collective steps.*/\1/')
backends=$(echo "$plan" | sed 's/.*(allreduce on \([^;]*\);.*/\1/')
# Per -P: one step of the backends our launcher starts (malloc buffers), one of
# shm and auto with coll buffers, one each for mpi (mpirun) and nccl (GPU).
kinds=0 shared=0 coll=0
for b in $backends; do
    case $b in shm|auto) kinds=$((kinds + 2)) coll=1 shared=1 ;; *) kinds=$((kinds + 1)) ;; esac
    case $b in mpi|nccl) ;; *) shared=1 ;; esac
done
apart=$(echo "$backends" | tr ' ' '\n' | grep -cx 'mpi\|nccl')
[ "$nsteps" -eq $(((shared + coll + apart) * 2)) ] || fail "$nsteps steps for backends '$backends' and -P 2,4"
echo "$backends" | grep -qw tcp || fail "tcp is not in the plan: $plan"
echo "$backends" | grep -qw shm || fail "shm is not in the plan: $plan"

# Each backend x buffer kind x -P: 3 sizes, in-place, in 2 passes where a step
# compares backends (--same-ranks --passes 2), once in a step of its own.
[ "$(head -n 1 "$OUT/results.csv")" = "$HEADER" ] || fail "CSV header differs"
n_shared=0 n_coll=0
for b in $backends; do
    case $b in mpi|nccl) ;; *) n_shared=$((n_shared + 1)) ;; esac
    case $b in shm|auto) n_coll=$((n_coll + 1)) ;; esac
done
passes() { [ "$1" -gt 1 ] && echo 2 || echo 1; }
want_rows=0
for b in $backends; do
    case $b in shm|auto) bufs="malloc coll" ;; nccl) bufs=cuda ;; *) bufs=malloc ;; esac
    for k in $bufs; do
        case $b/$k in mpi/*|nccl/*) per=3 ;; */coll) per=$((3 * $(passes $n_coll))) ;; *) per=$((3 * $(passes $n_shared))) ;; esac
        want_rows=$((want_rows + 2 * per))
        for p in 2 4; do
            n=$(awk -F, -v b="$b" -v k="$k" -v p="$p" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["backend"] == b && $col["buffers"] == k && $col["nprocs"] == p' "$OUT/results.csv" | wc -l)
            [ "$n" -eq "$per" ] || fail "CSV: $n rows for $b ($k buffers) with $p ranks, want $per"
        done
    done
done
rows=$(($(wc -l <"$OUT/results.csv") - 1))
[ "$rows" -eq "$want_rows" ] || fail "CSV: $rows rows for $kinds backend x buffer kinds, want $want_rows"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != "0" || $col["in_place"] != "1" { bad = 1 } END { exit bad }' "$OUT/results.csv" \
    || fail "CSV has wrong != 0 or out-of-place rows"
grep -q '\] allreduce shm,auto/coll 2 ranks: ok (' "$WORK/err" || fail "no 'allreduce shm,auto/coll 2 ranks: ok' line"
command -v jq >/dev/null || fail "jq is needed to check the JSON output (scripts/deps.sh installs it)"
n=$(jq '.results.communication.allreduce | length' "$OUT/results.json") || fail "results.json does not parse"
[ "$n" -eq "$rows" ] || fail "JSON: $n all-reduce rows, CSV $rows"
# this machine's memory-copy rate, once, under the rows' host; the report compares with it
jq -e '.results.communication.allreduce[0].host as $h | .machines[$h].memcpy_GBps > 0' \
    "$OUT/results.json" >/dev/null || fail "results.json: no machines.<host>.memcpy_GBps"
# and the cores the ranks could run on (the cost model's fit needs them)
want=$(nproc)
jq -e --argjson n "$want" '.results.communication.allreduce[0].host as $h | .machines[$h].cores == $n' \
    "$OUT/results.json" >/dev/null || fail "results.json: machines.<host>.cores is not $want"
grep -q "single-thread memory-copy rate" "$OUT/analysis.txt" ||
    fail "analysis.txt: no bus bandwidth against the memory-copy rate"

# Plain progress: one line per step, the last one numbered N/N.
steps=$(grep -c '^\[[0-9]*/[0-9]*\] ' "$WORK/err")
total=$(grep '^\[1/' "$WORK/err" | sed 's/^\[1\/\([0-9]*\)\].*/\1/')
[ "$steps" -eq "$total" ] || fail "$steps progress lines for $total steps: $(cat "$WORK/err")"
[ "$total" -eq $((nsteps + 2)) ] || fail "$total steps, want $nsteps collective steps + training + report"
grep -q "^\[$total/$total\] report: " "$WORK/err" || fail "the report is not the last step: $(cat "$WORK/err")"
grep -q '\[1/.*allreduce tcp,shm,[a-z,]*/malloc 2 ranks: ok (' "$WORK/err" || fail "no 'allreduce tcp,shm,.../malloc 2 ranks: ok' line"
grep -q "$(printf '\033')" "$WORK/err" && fail "terminal escapes on stderr that is not a terminal"

# The log holds every step's command line and the tables.
grep -q "^==== \[1/$total\] allreduce tcp,shm,[a-z,]*/malloc 2 ranks: .* allreduce --backend tcp,shm,[a-z,]* -P 2 .*--same-ranks --passes 2" "$OUT/suite.log" \
    || fail "suite.log lacks the first command line: $(head -n 5 "$OUT/suite.log")"
grep -q "Avg bus bandwidth" "$OUT/suite.log" || fail "suite.log lacks the tables"

# Training: ran (training.csv) or said why not; the report: ran (index.html) or said why not.
if grep -q 'training benchmark: skipped' "$WORK/err"; then
    echo "note: training benchmark not available in this build"
elif grep -q 'training benchmark: ok' "$WORK/err"; then
    [ -s "$OUT/training.csv" ] || jq -e '.results.training | length > 0' "$OUT/results.json" >/dev/null \
        || fail "the training benchmark ran but left no results"
else
    fail "training benchmark neither ok nor skipped: $(grep training "$WORK/err")"
fi
if grep -q '\] report: ok' "$WORK/err"; then
    [ -s "$OUT/index.html" ] || fail "report ok but no $OUT/index.html"
    grep -q "^report: $OUT/index.html" "$WORK/out" || fail "the report's page is not named on stdout"
    # One source per run: the report reads results.json alone, which holds the
    # training rows too; nothing is read twice.
    ! grep -q "duplicate rows merged" "$OUT/suite.log" || fail "the report read rows twice: $(grep 'collbench report:' "$OUT/suite.log")"
    if [ -s "$OUT/training.csv" ] && [ -s "$OUT/results.json" ]; then
        grep -q "collbench report: [0-9]* communication and [1-9][0-9]* training rows from 1 file;" "$OUT/suite.log" \
            || fail "the report did not read the training rows from results.json alone: $(grep 'collbench report:' "$OUT/suite.log")"
    fi
else
    grep -q '\] report: skipped' "$WORK/err" || fail "report neither ok nor skipped: $(grep report "$WORK/err")"
fi

# An existing results directory is kept unless --force; with it, replaced, not
# appended (--inplace 2: both placements, 6 rows).
expect_exit 2 "is not empty; use --force" suite --quick --no-train --no-report --backend tcp -P 2 -o "$OUT"
expect_exit 0 "" suite --quick --no-train --no-report --backend tcp -P 2 -o "$OUT" --force --inplace 2
rows=$(($(wc -l <"$OUT/results.csv") - 1))
[ "$rows" -eq 6 ] || fail "after --force --inplace 2: $rows rows, want the new run's 6"

# No -o: results/<UTC time>/ under the current directory.
mkdir "$WORK/cwd"
(cd "$WORK/cwd" && "$BIN" suite --quick --no-train --no-report --backend tcp -P 2 >"$WORK/out" 2>"$WORK/err") \
    || fail "suite without -o failed: $(cat "$WORK/err")"
dir=$(sed -n 's/^results: //p' "$WORK/out")
echo "$dir" | grep -Eq '^results/[0-9]{8}T[0-9]{6}Z$' || fail "default directory '$dir' is not results/<UTC time>"
[ -s "$WORK/cwd/$dir/results.csv" ] || fail "no results.csv in $WORK/cwd/$dir"
finish
