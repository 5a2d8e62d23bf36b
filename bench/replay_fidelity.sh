#!/usr/bin/env bash
# Issue 49's replay fidelity in one run: how close `collbench replay` comes to
# the program it replays. Run it on a quiet machine (nothing else running: the
# replays are timed), on traces bench/record_ddp.sh already recorded:
#
#   bench/record_ddp.sh COLL_DIR PROFILE_DIR       (the recording, once)
#   bench/replay_fidelity.sh COLL_DIR [PROFILE_DIR]
#
# COLL_DIR/torch<V>/<N>ranks/rank<R>.jsonl: the DDP program recorded on the
# torch backend coll (COLL_TRACE); PROFILE_DIR/torch<V>/<N>ranks/*.json: the
# same program on gloo under torch.profiler (torch 2.x, record_shapes=True).
#
# What it measures, each row against the issue's threshold ("within X%":
# replayed / recorded between 1 - X and 1 + X):
#  (a) same backend, coll: each coll trace replayed on shm (--buffers malloc,
#      --gaps $GAPS, --passes 2): the trace's communication (the calls'
#      time, the mean over ranks) replayed against recorded (15%), and per
#      collective one call's median time replayed against recorded (15%; the
#      median over the calls of each call position's mean over the ranks,
#      collbench replay's median_s and recorded_median_s);
#  (b) same backend, gloo: each profiler trace imported (`collbench trace
#      import`) and replayed on gloo and shm (--passes 2, the backends
#      alternated), gloo's communication against the profiler's own times
#      (20%), per collective one call's median beside it (shown, no verdict:
#      the issue sets none);
#  (c) across backends: the gloo program's trace replayed on shm against the
#      same program (same torch version, same ranks) run on coll: the
#      communication recorded in COLL_DIR/torch<V>/<N>ranks (25%); then the
#      same from each call's last rank's arrival on (collbench replay's
#      comm_s - skew_s against the recording's recorded_s - recorded_skew_s,
#      25%): the two recordings' ranks arrive apart by different amounts (a
#      profile on gloo has one rank issue each bucket tens of ms late on 2
#      cores), which the replay reproduces. Each row names the coll recording
#      it used; without one the row says so.
# Replayed: the median over the passes (with 2 passes, their mean).
#
# Output: on stdout the machine (CPU model from /proc/cpuinfo, cores), the
# load (`uptime`) before and after the whole run, and one markdown table: the
# command, the load before and after it, recorded and replayed ms, the ratio,
# the threshold and the verdict (pass, FAIL). The same table, the rows (CSV)
# and each replay's own output go to OUT (default ./replay_fidelity.<time>).
#
# Environment: COLLBENCH (default build/collbench), OUT, PASSES (default 2),
# TIMEOUT (collbench replay's -T, default 600), GAPS, OVERLAP, BIND and PLAN
# (collbench replay's --gaps, --overlap, --bind and --plan, default recorded,
# auto, recorded and recorded). Exit 0 when every
# measurement ran (whatever the verdicts), 1 when a command failed (said on
# stderr, the others still run), 2 on bad usage or a build without gloo for
# PROFILE_DIR. Test of the plumbing (tests/replay/replay_fidelity.sh): the small
# checked-in traces laid out as record_ddp.sh lays out its own.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    echo "usage: replay_fidelity.sh COLL_DIR [PROFILE_DIR] (env COLLBENCH, OUT, PASSES, TIMEOUT, GAPS, OVERLAP, BIND, PLAN)" >&2
    exit 2
}
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
coll_dir=$1
prof_dir=${2:-}
BIN=${COLLBENCH:-$src/build/collbench}
PASSES=${PASSES:-2}
TIMEOUT=${TIMEOUT:-600}
# recorded (the calling thread's recorded CPU time spun, the rest slept),
# sleep, busy or none; OVERLAP: auto, recorded or none (collbench replay)
GAPS=${GAPS:-recorded}
OVERLAP=${OVERLAP:-auto}
BIND=${BIND:-recorded}
PLAN=${PLAN:-recorded}
out=${OUT:-replay_fidelity.$(date -u +%Y%m%dT%H%M%S)}
[ -d "$coll_dir" ] || { echo "replay_fidelity.sh: no directory $coll_dir" >&2; exit 2; }
[ -z "$prof_dir" ] || [ -d "$prof_dir" ] || { echo "replay_fidelity.sh: no directory $prof_dir" >&2; exit 2; }
[ -x "$BIN" ] || { echo "replay_fidelity.sh: no collbench at $BIN (set COLLBENCH)" >&2; exit 2; }
if [ -n "$prof_dir" ] && ! "$BIN" info 2>/dev/null | grep -Eq "^ *backend gloo +available"; then
    echo "replay_fidelity.sh: the gloo backend is not in $BIN: (b) and (c) cannot run" >&2
    exit 2
fi
mkdir -p "$out/import"
coll_dir=$(cd "$coll_dir" && pwd)
[ -z "$prof_dir" ] || prof_dir=$(cd "$prof_dir" && pwd)
out=$(cd "$out" && pwd)
# the CSV's trace column is read with awk -F,: no commas in the paths
case "$coll_dir$prof_dir$out" in *,*) echo "replay_fidelity.sh: a path holds a comma" >&2; exit 2 ;; esac

load() { uptime | sed 's/.*load average: *//'; }
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
cores=$(nproc)
load_start=$(load)
rows=$out/table.md
: >"$rows"
failed=0

# run LOG CMD...: the command, its load before and after in $ran (for row()),
# its output in LOG; a failure is counted and said.
run() {
    local log=$1 before
    shift
    before=$(load)
    if ! "$@" >"$log" 2>&1; then
        echo "replay_fidelity.sh: failed ($(tail -1 "$log")): $*" >&2
        failed=1
        ran=""
        return 1
    fi
    ran="\`$(echo "$*" | sed "s|$out/||g; s|$src/||g")\` | $before / $(load)"
}

# row WHAT TRACE RECORDED_S REPLAYED_S THRESHOLD(0.15; - for none) [COMMAND | LOAD]
row() {
    awk -v what="$1" -v trace="$2" -v rec="$3" -v rep="$4" -v th="$5" -v ran="${6:-- | -}" 'BEGIN {
        ok = rec != "" && rep != "" && rec > 0
        ratio = ok ? sprintf("%.3f", rep / rec) : "-"
        verdict = !ok ? "no data" : th == "-" ? "-" : (rep / rec >= 1 - th && rep / rec <= 1 + th) ? "pass" : "FAIL"
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", what, trace, ran,
            rec == "" ? "-" : sprintf("%.3f", rec * 1e3), rep == "" ? "-" : sprintf("%.3f", rep * 1e3),
            ratio, th == "-" ? "-" : sprintf("%.0f%%", th * 100), verdict
    }' >>"$rows"
}

# From a replay's CSV, for BACKEND: "recorded replayed" of the summary rows
# (communication), the replayed the median over the passes. With "after",
# the communication after each call's last rank arrived (comm_s less skew_s,
# recorded_s less recorded_skew_s; nothing where the CSV has no skew).
summary() { # CSV BACKEND [after]
    awk -F, -v b="$2" -v after="${3:+1}" 'NR > 1 && $2 == b && $7 == "all" && $8 == "all" && (!after || $22 != "") {
            if (!after) rec = $11; else if ($23 != "") rec = $11 - $23
            v[n++] = after ? $10 - $22 : $10 }
        END { if (!n) exit; asort_n(v, n); printf "%s %s\n", rec, med(v, n) }
        function asort_n(a, n,   i, j, t) { for (i = 1; i < n; i++) for (j = i; j > 0 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
        function med(a, n) { return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2 }' "$1"
}

# The same per collective overall (size_class "all"): "collective recorded replayed"
# of one call's median, a line each.
medians() {
    awk -F, -v b="$2" 'NR > 1 && $2 == b && $7 != "all" && $8 == "all" {
            if (!($7 in k)) { k[$7] = 1; order[nc++] = $7 }
            rec[$7] = $19; v[$7, cnt[$7]++] = $18 }
        END { for (c = 0; c < nc; c++) { name = order[c]; n = cnt[name]
                for (i = 0; i < n; i++) a[i] = v[name, i]
                for (i = 1; i < n; i++) for (j = i; j > 0 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                printf "%s %s %s\n", name, rec[name], n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2 } }' "$1"
}

# "torch2.6.0/2ranks" of DIR/torch2.6.0/2ranks
name_of() { echo "$(basename "$(dirname "$1")")/$(basename "$1")"; }

# ---- (a) coll traces replayed on shm ----
declare -A coll_csv
for d in "$coll_dir"/torch*/*ranks; do
    [ -f "$d/rank0.jsonl" ] || continue
    n=$(name_of "$d")
    csv=$out/coll-${n//\//-}.csv
    run "$out/coll-${n//\//-}.log" "$BIN" replay "$d" --backend shm --buffers malloc --gaps "$GAPS" --overlap "$OVERLAP" \
        --bind "$BIND" --plan "$PLAN" --passes "$PASSES" -T "$TIMEOUT" --csv "$csv" || continue
    coll_csv[$n]=$csv
    read -r rec rep < <(summary "$csv" shm) || true
    row "coll on shm: communication" "$n" "${rec:-}" "${rep:-}" 0.15 "$ran"
    while read -r c rec rep; do
        row "coll on shm: one $c (median)" "$n" "$rec" "$rep" 0.15
    done < <(medians "$csv" shm)
done

# ---- (b) gloo profiler traces imported, replayed on gloo and shm; (c) shm against coll ----
if [ -n "$prof_dir" ]; then
    for d in "$prof_dir"/torch*/*ranks; do
        ls "$d"/*.json >/dev/null 2>&1 || continue
        n=$(name_of "$d")
        tr=$out/import/${n//\//-}
        run "$out/import-${n//\//-}.log" "$BIN" trace import "$d"/*.json -o "$tr" --force || continue
        csv=$out/gloo-${n//\//-}.csv
        run "$out/gloo-${n//\//-}.log" "$BIN" replay "$tr" --backend gloo,shm --buffers malloc \
            --gaps "$GAPS" --overlap "$OVERLAP" --bind "$BIND" --plan "$PLAN" --passes "$PASSES" -T "$TIMEOUT" \
            --csv "$csv" || continue
        read -r rec rep < <(summary "$csv" gloo) || true
        row "gloo profile on gloo: communication" "$n" "${rec:-}" "${rep:-}" 0.20 "$ran"
        while read -r c rec rep; do
            row "gloo profile on gloo: one $c (median)" "$n" "$rec" "$rep" -
        done < <(medians "$csv" gloo)
        read -r rec rep < <(summary "$csv" shm) || true
        if [ -n "${coll_csv[$n]:-}" ]; then
            # the program on coll: its recorded communication (the mean over ranks)
            read -r crec _ < <(summary "${coll_csv[$n]}" shm) || true
            row "gloo profile on shm vs the program on coll ($(basename "$coll_dir")/$n)" "$n" \
                "${crec:-}" "${rep:-}" 0.25 "$ran"
            # the same from each call's last rank's arrival on: the part a
            # backend moves, without the recordings' different rank skew
            read -r crec _ < <(summary "${coll_csv[$n]}" shm after) || true
            read -r _ rep < <(summary "$csv" shm after) || true
            row "gloo profile on shm vs the program on coll, after each call's last rank arrived ($(basename "$coll_dir")/$n)" \
                "$n" "${crec:-}" "${rep:-}" 0.25
        else
            row "gloo profile on shm vs the program on coll (no coll recording $n)" "$n" "" \
                "${rep:-}" 0.25 "$ran"
        fi
    done
fi

{
    echo "# Replay fidelity (issue 49)"
    echo
    echo "machine: $cpu, $cores cores; load (uptime) before: $load_start, after: $(load)"
    echo "collbench: $BIN; passes: $PASSES; replayed: the median over the passes; one call (median):"
    echo "each call position's mean over the ranks, the median over the calls"
    echo
    echo "| measurement | trace | command | load before / after | recorded (ms) | replayed (ms) | replayed / recorded | within | verdict |"
    echo "|---|---|---|---|---:|---:|---:|---:|---|"
    cat "$rows"
} | tee "$out/fidelity.md"
echo "replay_fidelity.sh: rows and logs in $out" >&2
exit "$failed"
