#!/usr/bin/env bash
# All-reduce on private buffers against what it must cost on this machine.
# Per process count and size, alternated within each round so that every
# column sees the same machine:
#   floor        bench/floor (its header): the plain operations, all ranks
#                at once, each way an all-reduce can do them (copy + reduce
#                through process_vm_readv/writev, whole inputs, the two fused
#                chunk by chunk, copies through shared memory); the floor is
#                the cheapest way
#   shm          collbench --backend shm --buffers malloc (and thp), bound ranks
#   mpi          collbench --backend mpi --buffers malloc through mpirun
#                (Open MPI's algorithms, same buffers, same timing)
# float32 sum, in place and out of place; the floor runs with the buffers of
# the column it stands beside (in place or not, 4 KiB or huge pages). A cell
# is the median over the rounds of each run's p50 (microseconds), with the
# rounds' range where they differ by more than 5%; each round first probes
# the machine's state (shm, 2 ranks, 4 KiB in place), printed above the tables. Ratios: time over the
# floor's (x floor), and mpi's time over shm's (shm's speed-up; "within noise"
# where the rounds' ranges overlap). Another table pairs each round's shm time
# with the floor run just before it (x floor per round: the median and the
# range) and counts the cells above TARGET: on a machine whose speed changes
# between rounds, the medians of two columns may each come from another
# state, a round's pair from one. The last column checks issue 45's
# targets: shm malloc in place within 1.5x of the floor from 1 MiB, and at
# least 2x Open MPI from 64 KiB, in place and out of place.
# TUNED=FILE runs every shm cell twice, without a tuning file and with FILE
# (the order swapped each round), beside the same floors, and adds a table
# of both against the floor with the cells above TARGET x the floor counted
# (issue 53: 1.15). BEST_OF=K runs each cell's floor and shm K times in
# turn and keeps each column's fastest p50: on a VM whose speed flips within
# seconds (one 2-rank 64 KiB call read 6.5 or 17 us from launch to launch),
# both columns then read the machine's fast state.
#
#   bench/floor.sh   (env: COLLBENCH=build/collbench, FLOOR=build/bench/floor,
#                     PROCS=2,4,6, SIZES=64K,1M,10M,100M,256M, ROUNDS=2,
#                     ITERS=10, WARMUP=3; SMALL_ITERS=100 below 1 MiB;
#                     MPI=0 leaves Open MPI out; TUNED=FILE, TARGET=1.15;
#                     BEST_OF=1;
#                     RAW=FILE keeps every run's reading: "round column ranks
#                     bytes p50_us", after a line "# probes: " with the
#                     rounds' states, to split the rounds by state)
# Exit 77 (a skip for ctest), saying why, without process_vm_readv. Exit 1
# when a run fails or gives wrong results.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
FLOOR=${FLOOR:-build/bench/floor}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-64K,1M,10M,100M,256M}
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-3}
SMALL_ITERS=${SMALL_ITERS:-100}
MPI=${MPI:-1}
TUNED=${TUNED:-}
TARGET=${TARGET:-1.15}
BEST_OF=${BEST_OF:-1}
[[ "$BEST_OF" =~ ^[1-9][0-9]*$ ]] || { echo "floor: BEST_OF=$BEST_OF is not a count of runs (1 or more)" >&2; exit 2; }
if [ -n "$TUNED" ] && [ ! -r "$TUNED" ]; then
    echo "floor: TUNED=$TUNED: no such readable tuning file" >&2
    exit 2
fi
if [ "$MPI" = 1 ] && { ! command -v mpirun >/dev/null || ! "$BIN" info | grep -Eq "^ *backend mpi +available"; }; then
    echo "floor: Open MPI left out: no mpirun or no mpi backend in this build (MPI=0 says so quietly)"
    MPI=0
fi
"$FLOOR" -n 2 -i 1 -w 0 4096 >/dev/null 2>&1 ||
    { echo "floor: skipped: bench/floor cannot run here (process_vm_readv refused?)"; "$FLOOR" -n 2 -i 1 -w 0 4096 || true; exit 77; }

bytes_of() {
    local v=$1 m=1
    case "$v" in
    *[kK]) m=1024; v=${v%?} ;;
    *[mM]) m=$((1024 * 1024)); v=${v%?} ;;
    *[gG]) m=$((1024 * 1024 * 1024)); v=${v%?} ;;
    esac
    [[ "$v" =~ ^[0-9]+$ ]] || { echo "floor: '$1' in SIZES is not a size (digits, then optionally K, M or G)" >&2; return 2; }
    echo $((v * m))
}
work=$(mktemp -d "${TMPDIR:-/tmp}/floor.XXXXXX")
trap 'rm -rf "$work"' EXIT
IFS=, read -r -a plist <<<"$PROCS"
IFS=, read -r -a slist <<<"$SIZES"

# One line per reading: round column ranks bytes p50_us.
floor_run() { # round tag flags...
    local r=$1 tag=$2
    shift 2
    "$FLOOR" "$@" | awk -v r="$r" -v t="$tag" 'NR > 1 {
        print r, t "-cr", $1, $2, $3 + $4; if ($5 > 0) print r, t "-whole", $1, $2, $5
        print r, t "-fused", $1, $2, $6; print r, t "-shared", $1, $2, $7; print r, t "-floor", $1, $2, $8 }'
}
coll_run() { # round tag collbench-flags...
    local r=$1 tag=$2 rc=0
    shift 2
    "$BIN" allreduce "$@" -d float32 -o sum -q --csv "$work/c.csv" >"$work/c.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "floor: collbench allreduce $* exited $rc:" >&2
        tail -5 "$work/c.log" >&2
        exit 1
    fi
    awk -F, -v r="$r" -v t="$tag" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { if ($c["wrong"] != "0") { print "floor: wrong results: " t > "/dev/stderr"; exit 1 }
          print r, t, $c["nprocs"], $c["bytes"], $c["time_us_p50"] }' "$work/c.csv"
    rm -f "$work/c.csv"
}

# shm's run of a cell; with TUNED, without a tuning file (tag) and with it
# (tag-t), in an order that swaps each round.
shm_run() { # round tag collbench-flags...
    local r=$1 tag=$2
    shift 2
    if [ -z "$TUNED" ]; then
        coll_run "$r" "$tag" "$@"
    elif [ $((r % 2)) = 1 ]; then
        COLL_TUNING_FILE=/nonexistent coll_run "$r" "$tag" "$@"
        COLL_TUNING_FILE=$TUNED coll_run "$r" "$tag-t" "$@"
    else
        COLL_TUNING_FILE=$TUNED coll_run "$r" "$tag-t" "$@"
        COLL_TUNING_FILE=/nonexistent coll_run "$r" "$tag" "$@"
    fi
}

# The machine's state at each round: this VM's memory-bound work runs at one
# of two speeds, minutes at a time, so each round says which it met.
probe() {
    "$BIN" allreduce --backend shm --bind core --buffers malloc -P 2 --sizes 4K --inplace 1 -n 200 -w 20 \
        -q --csv "$work/probe.csv" >/dev/null 2>&1 || return 0
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%s ", $c["time_us_p50"] }' "$work/probe.csv"
    rm -f "$work/probe.csv"
}
probes=""
for r in $(seq "$ROUNDS"); do
    probes="$probes$(probe)"
    for p in "${plist[@]}"; do
        for sz in "${slist[@]}"; do
            b=$(bytes_of "$sz") || exit 2
            n=$ITERS
            [ "$b" -lt $((1024 * 1024)) ] && n=$SMALL_ITERS
            f=(-n "$p" --bind -i "$n" -w "$WARMUP")
            c=(--sizes "$b" -P "$p" -n "$n" -w "$WARMUP")
            for _ in $(seq "$BEST_OF"); do
                floor_run "$r" in "${f[@]}" --inplace 1 "$b"
                shm_run "$r" shm-in "${c[@]}" --backend shm --bind core --buffers malloc --inplace 1
                floor_run "$r" out "${f[@]}" --inplace 0 "$b"
                shm_run "$r" shm-out "${c[@]}" --backend shm --bind core --buffers malloc --inplace 0
                floor_run "$r" thp "${f[@]}" --inplace 1 --thp "$b"
                shm_run "$r" thp-in "${c[@]}" --backend shm --bind core --buffers thp --inplace 1
                floor_run "$r" thpout "${f[@]}" --inplace 0 --thp "$b"
                shm_run "$r" thp-out "${c[@]}" --backend shm --bind core --buffers thp --inplace 0
            done
            if [ "$MPI" = 1 ]; then
                coll_run "$r" mpi-in "${c[@]}" --backend mpi --buffers malloc --inplace 1
                coll_run "$r" mpi-out "${c[@]}" --backend mpi --buffers malloc --inplace 0
            fi
        done
    done
done >"$work/runs"
# BEST_OF: each column's fastest run in its round and cell, in the order read
awk '{ k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
       if (!(k in t)) { order[++n] = k; line[k] = $1 " " $2 " " $3 " " $4 }
       if (!(k in t) || $5 + 0 < t[k] + 0) t[k] = $5 }
     END { for (i = 1; i <= n; i++) print line[order[i]], t[order[i]] }' "$work/runs" >"$work/all"

[ -z "${RAW:-}" ] || { echo "# probes: $probes"; cat "$work/runs"; } >"$RAW"
best=""
[ "$BEST_OF" = 1 ] || best=" (each the fastest of $BEST_OF runs in turn)"
echo "all-reduce float32 sum on $(nproc) cores, $ROUNDS rounds alternated; cells: median of the rounds' p50 us$best [their range]"
echo "the machine's state per round (shm, 2 ranks, 4 KiB in place, p50 us): $probes"
echo "floor = the cheapest way of the plain operations (bench/floor.c): copy + reduce, whole inputs (to 4 MiB),"
echo "fused (CMA), shared (memory every rank maps); x floor = time / floor; shm/mpi = mpi time / shm time"
echo
awk -v mpi="$MPI" -v tuned="$TUNED" -v limit="$TARGET" -f "$(dirname "$0")/rounds.awk" -f /dev/stdin "$work/all" <<'AWK'
function num(v) { return v >= 100 ? sprintf("%.0f", v) : sprintf("%.1f", v) }
function cell(t, k,   l) {
    if (!((t, k) in v)) return "-"
    l = v[t, k]
    return num(median(l)) (hi(l) > 1.05 * lo(l) ? " [" num(lo(l)) "-" num(hi(l)) "]" : "")
}
function need(t, k) { if (!((t, k) in v)) missing = missing " " t "/" k; return cell(t, k) }
function x(t, f, k) {
    if (!((t, k) in v) || !((f, k) in v) || median(v[f, k]) <= 0) return "-"
    return sprintf("%.2fx", median(v[t, k]) / median(v[f, k]))
}
function speedup(s, m, k) { # mpi time over shm time
    if (!((s, k) in v) || !((m, k) in v)) return "-"
    return sprintf("%.2fx%s", median(v[m, k]) / median(v[s, k]),
                   lo(v[s, k]) <= hi(v[m, k]) && lo(v[m, k]) <= hi(v[s, k]) ? " within noise" : "")
}
# x floor without a tuning file and with TUNED, per place and buffer kind;
# a cell with the file above limit (TARGET) x the floor is counted.
function over(t, f, k,   r) {
    r = x(t, f, k)
    if (r == "-") return r
    cells++
    if (r + 0 > limit + 0) { above++; return r " (above)" }
    return r
}
function tuned_table(   i, j, p, b, k, pl, place, fl, tf) {
    split("in out", place, " "); split("in out", fl, " "); split("thp thpout", tf, " ")
    cells = above = 0
    print ""
    print "Without a tuning file and with TUNED=" tuned " (x floor; above: over " limit "x with the file):"
    print ""
    print "| place | ranks | bytes | shm malloc | with the file | shm thp | with the file |"
    print "|---|---|---|---|---|---|---|"
    for (pl = 1; pl <= 2; pl++) for (i = 1; i <= np; i++) for (j = 1; j <= nb; j++) {
        p = procs[i]; b = sizes[j]; k = p SUBSEP b
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", place[pl], p, human(b),
               x("shm-" place[pl], fl[pl] "-floor", k), over("shm-" place[pl] "-t", fl[pl] "-floor", k),
               x("thp-" place[pl], tf[pl] "-floor", k), over("thp-" place[pl] "-t", tf[pl] "-floor", k)
    }
    printf "\nwith the file: %d of %d cells above %sx the floor\n", above, cells, limit
}
function human(b) { return b >= 1048576 ? b / 1048576 " MiB" : b >= 1024 ? b / 1024 " KiB" : b " B" }
function target(k, p, b,   t) {
    t = ""
    if (b >= 1048576 && (("shm-in", k) in v))
        t = median(v["shm-in", k]) <= 1.5 * median(v["in-floor", k]) ? "1.5x floor: met" : "1.5x floor: MISSED"
    if (mpi && b >= 65536 && (("mpi-in", k) in v) && (("mpi-out", k) in v)) {
        t = t (t == "" ? "" : ", ")
        t = t (median(v["mpi-in", k]) >= 2 * median(v["shm-in", k]) && median(v["mpi-out", k]) >= 2 * median(v["shm-out", k]) \
               ? "2x mpi: met" : "2x mpi: MISSED")
    }
    return t == "" ? "-" : t
}
# x floor paired by round: each round's cell over the floor it ran beside
# (the two back to back, so both saw the machine in one state), the median
# over the rounds and their range; a cell whose median is above limit is
# counted.
function px(t, f, k,   r, l) {
    l = ""
    for (r = 1; r <= nr; r++)
        if (((t, k, r) in rv) && ((f, k, r) in rv) && rv[f, k, r] > 0) l = l " " rv[t, k, r] / rv[f, k, r]
    if (l == "") return "-"
    pcells++
    if (median(l) > limit + 0) pabove++
    return sprintf("%.2fx", median(l)) (hi(l) > 1.05 * lo(l) ? sprintf(" [%.2f-%.2f]", lo(l), hi(l)) : "") \
           (median(l) > limit + 0 ? " (above)" : "")
}
function paired_table(   i, j, p, b, k) {
    pcells = pabove = 0
    print ""
    print "x floor paired by round (each round's time over the floor beside it: the median of the rounds [their range]):"
    print ""
    print "| ranks | bytes | in place: malloc | thp | out of place: malloc | thp |"
    print "|---|---|---|---|---|---|"
    for (i = 1; i <= np; i++) for (j = 1; j <= nb; j++) {
        p = procs[i]; b = sizes[j]; k = p SUBSEP b
        printf "| %s | %s | %s | %s | %s | %s |\n", p, human(b), px("shm-in", "in-floor", k),
               px("thp-in", "thp-floor", k), px("shm-out", "out-floor", k), px("thp-out", "thpout-floor", k)
    }
    printf "\n%d of %d cells above %sx the floor (the median of the pairs)\n", pabove, pcells, limit
}
{   k = $3 SUBSEP $4; v[$2, k] = v[$2, k] " " $5; rv[$2, k, $1] = $5; if ($1 > nr) nr = $1
    if (!($3 in pseen)) { pseen[$3] = 1; procs[++np] = $3 }
    if (!($4 in bseen)) { bseen[$4] = 1; sizes[++nb] = $4 } }
END {
    print "In place (what dist.all_reduce calls):"
    print ""
    printf "| ranks | bytes | copy + reduce | whole | fused | shared | floor | shm malloc | x floor | floor thp | shm thp | x floor thp |%s targets |\n", mpi ? " mpi | shm/mpi | mpi x floor |" : ""
    printf "|---|---|---|---|---|---|---|---|---|---|---|---|%s---|\n", mpi ? "---|---|---|" : ""
    for (i = 1; i <= np; i++) for (j = 1; j <= nb; j++) {
        p = procs[i]; b = sizes[j]; k = p SUBSEP b
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", p, human(b), need("in-cr", k),
               cell("in-whole", k), need("in-fused", k), need("in-shared", k), need("in-floor", k),
               need("shm-in", k), x("shm-in", "in-floor", k), need("thp-floor", k), need("thp-in", k),
               x("thp-in", "thp-floor", k)
        if (mpi) printf " %s | %s | %s |", need("mpi-in", k), speedup("shm-in", "mpi-in", k), x("mpi-in", "in-floor", k)
        printf " %s |\n", target(k, p, b)
    }
    print ""
    print "Out of place:"
    print ""
    printf "| ranks | bytes | copy + reduce | whole | fused | shared | floor | shm malloc | x floor | out / in place (shm) | out / in place (floor) | floor thp | shm thp | x floor thp |%s\n", mpi ? " mpi | shm/mpi | mpi x floor |" : ""
    printf "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|%s\n", mpi ? "---|---|---|" : ""
    for (i = 1; i <= np; i++) for (j = 1; j <= nb; j++) {
        p = procs[i]; b = sizes[j]; k = p SUBSEP b
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", p, human(b), need("out-cr", k),
               cell("out-whole", k), need("out-fused", k), need("out-shared", k), need("out-floor", k),
               need("shm-out", k), x("shm-out", "out-floor", k), x("shm-out", "shm-in", k), x("out-floor", "in-floor", k),
               need("thpout-floor", k), need("thp-out", k), x("thp-out", "thpout-floor", k)
        if (mpi) printf " %s | %s | %s |", need("mpi-out", k), speedup("shm-out", "mpi-out", k), x("mpi-out", "out-floor", k)
        printf "\n"
    }
    paired_table()
    if (tuned != "") tuned_table()
    if (missing) { printf "\nno result for:%s\n", missing; exit 1 }
}
AWK
