#!/usr/bin/env bash
# Replay fidelity across backends, alternated (issue 49): the DDP program
# recorded once on torch's gloo under torch.profiler, imported, and replayed
# on shm, against the same program run on coll, ROUNDS times, the two
# alternated (program then replay, then replay then program), so that both
# see the machine's slow and fast minutes alike. The program's own
# communication moves by up to 1.4x between runs minutes apart on this VM, so
# one run of each compares two machine states; the medians over the rounds do
# not.
#
#   bench/replay_across.sh OUT_DIR   (env: ROUNDS=4, RANKS=2 (one count),
#                                     STEPS=20, GAPS=recorded, COLLBENCH,
#                                     BUILD, BUILD2 as record_ddp.sh takes them;
#                                     GLOO_TRACE: a gloo trace imported before,
#                                     instead of recording one)
#
# Both sides run torch 2.x in scripts/torch_root.sh's root (the profiler's
# record_shapes needs torch 2; the program on coll runs there too, so that
# only the backend differs). The gloo profile is recorded once by
# bench/record_ddp.sh (RANKS, STEPS) into OUT_DIR/record and imported with
# `collbench trace import`. Each round: the program on coll (COLL_TRACE; its
# communication: each rank's calls' t1 - t0 summed, the mean over ranks, as
# `collbench replay` reads a trace's recorded communication) and `collbench
# replay` of the gloo trace on shm (--buffers malloc, --gaps GAPS, --overlap
# auto: kept in flight as recorded). Output: the machine, the load before and
# after, a row per round, and the medians' ratio against the issue's 25%.
# Exit 0 when every step ran (whatever the verdict), 1 when one failed (said
# on stderr), 2 on bad usage, 77 without the torch 2 root or gloo.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: replay_across.sh OUT_DIR (env ROUNDS, RANKS, STEPS, GAPS, COLLBENCH, BUILD, BUILD2)" >&2; exit 2; }
ROUNDS=${ROUNDS:-4}
RANKS=${RANKS:-2}
STEPS=${STEPS:-20}
GAPS=${GAPS:-recorded}
BIN=${COLLBENCH:-$src/build/collbench}
build=$(cd "${BUILD:-$src/build}" && pwd)
build2=${BUILD2:-$build/torch2-root}
case "$build2" in /*) ;; *) build2=$PWD/$build2 ;; esac
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "replay_across.sh: ROUNDS must be a positive count, not '$ROUNDS'" >&2; exit 2 ;; esac
case "$RANKS" in '' | *[!0-9]* | 0 | 1) echo "replay_across.sh: RANKS must be one rank count of 2 or more, not '$RANKS'" >&2; exit 2 ;; esac
[ -x "$BIN" ] || { echo "replay_across.sh: no collbench at $BIN (set COLLBENCH)" >&2; exit 2; }
"$src/scripts/torch_root.sh" status >/dev/null 2>&1 ||
    { echo "replay_across.sh: skipped: no torch 2 root (sudo scripts/torch_root.sh create)"; exit 77; }
"$BIN" info 2>/dev/null | grep -Eq "^ *backend gloo +available" ||
    { echo "replay_across.sh: skipped: the gloo backend is not in $BIN"; exit 77; }
mkdir -p "$1"
out=$(cd "$1" && pwd)

# The gloo profile (and a coll recording record_ddp.sh makes beside it, unused),
# unless GLOO_TRACE names one imported before.
trace=$out/gloo-trace
if [ -n "${GLOO_TRACE:-}" ]; then
    [ -f "$GLOO_TRACE/rank0.jsonl" ] || { echo "replay_across.sh: no rank0.jsonl in GLOO_TRACE=$GLOO_TRACE" >&2; exit 2; }
    trace=$(cd "$GLOO_TRACE" && pwd)
    prof=$trace
else
    RANKS=$RANKS STEPS=$STEPS BUILD=$build BUILD2=$build2 COLLBENCH=$BIN \
        "$src/bench/record_ddp.sh" "$out/record/coll" "$out/record/prof" >"$out/record.log" 2>&1 ||
        { echo "replay_across.sh: the recording failed ($(tail -1 "$out/record.log"))" >&2; exit 1; }
    prof=$(ls -d "$out"/record/prof/torch*/"${RANKS}ranks")
    "$BIN" trace import "$prof"/*.json -o "$trace" --force >"$out/import.log" 2>&1 ||
        { echo "replay_across.sh: the import failed ($(tail -1 "$out/import.log"))" >&2; exit 1; }
fi

load() { cut -d' ' -f1-3 /proc/loadavg; }
failed=0

# The program on coll, round R: its communication (ms, the mean over ranks);
# nothing printed when it failed (said on stderr). Run in $(...): the caller
# counts the failure.
program() {
    local d=$build2/replay_across.$$
    rm -rf "$d"
    if ! "$src/scripts/torch_root.sh" run env COLL_TRACE="$d" PYTHONPATH="$build2/bindings/torch" \
        OMP_NUM_THREADS=1 python3 "$src/bench/ddp_program.py" --backend coll --nprocs "$RANKS" \
        --steps "$STEPS" >"$out/program.$1.log" 2>&1; then
        echo "replay_across.sh: round $1: the program failed ($(tail -1 "$out/program.$1.log"))" >&2
        return
    fi
    rm -rf "$out/program.$1"
    mv "$d" "$out/program.$1"
    awk '/"seq":/ { match($0, /"t0":[0-9]+/); t0 = substr($0, RSTART + 5, RLENGTH - 5)
                   match($0, /"t1":[0-9]+/); t1 = substr($0, RSTART + 5, RLENGTH - 5); s += t1 - t0 }
         END { printf "%.1f", s / 1e6 / n }' n="$RANKS" "$out/program.$1"/rank*.jsonl
}

# The gloo trace replayed on shm, round R: its communication (ms); nothing
# printed when it failed (said on stderr).
replay() {
    local csv=$out/replay.$1.csv
    rm -f "$csv"
    if ! "$BIN" replay "$trace" --backend shm --buffers malloc --gaps "$GAPS" \
        --overlap auto --csv "$csv" >"$out/replay.$1.log" 2>&1; then
        echo "replay_across.sh: round $1: the replay failed ($(tail -1 "$out/replay.$1.log"))" >&2
        return
    fi
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
             NR > 1 && $c["collective"] == "all" && $c["size_class"] == "all" { printf "%.1f", $c["time_s"] * 1e3; exit }' "$csv"
}

echo "# Replay fidelity across backends, alternated: $ROUNDS rounds, $RANKS ranks, $STEPS steps"
echo
echo "machine: $(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1), $(nproc) cores; load before: $(load)"
echo "the gloo trace: $prof, on shm (--buffers malloc --gaps $GAPS --overlap auto)"
echo
echo "| round | order | program on coll (ms) | gloo trace on shm (ms) | replay / program |"
echo "|---|---|---:|---:|---:|"
progs="" reps=""
for r in $(seq 1 "$ROUNDS"); do
    if ((r % 2)); then p=$(program "$r"); q=$(replay "$r"); order="program, replay"
    else q=$(replay "$r"); p=$(program "$r"); order="replay, program"; fi
    if [ -n "$p" ]; then progs="$progs $p"; else failed=1; fi
    if [ -n "$q" ]; then reps="$reps $q"; else failed=1; fi
    awk -v r="$r" -v o="$order" -v p="$p" -v q="$q" 'BEGIN {
        printf "| %d | %s | %s | %s | %s |\n", r, o, p == "" ? "-" : p, q == "" ? "-" : q,
            (p > 0 && q != "") ? sprintf("%.3f", q / p) : "-" }'
done
echo
echo "load after: $(load)"
awk -v p="$progs" -v q="$reps" -f "$src/bench/rounds.awk" -f /dev/stdin <<'AWK'
BEGIN {
    if (p == "" || q == "") { print "no rounds to compare"; exit }
    mp = median(p); mq = median(q)
    printf "medians: program %.1f ms [%.1f-%.1f], replay %.1f ms [%.1f-%.1f]; replay / program %.3f: %s (within 25%%)\n",
        mp, lo(p), hi(p), mq, lo(q), hi(q), mq / mp, (mq / mp >= 0.75 && mq / mp <= 1.25) ? "pass" : "FAIL"
}
AWK
echo "rows and logs in $out" >&2
exit "$failed"
