#!/bin/bash
# Did a change make anything slower? Two collbench binaries (before, after) run
# the same sweep alternately, ROUNDS times each, in one go, so that both see the
# same machine; per backend, ranks and size the table gives each side's p50
# and p25-p75 (medians over the rounds), the range of its rounds' p50s, and
# after/before, "within noise" where the two p25-p75 ranges overlap (the rule
# of collbench report's analysis) or the two sides' rounds overlap (a machine
# whose speed drifts between runs moves whole runs, not iterations). The two
# runs of a round are back to back (their order swapped every round), so the
# last column pairs them: after/before round by round, the median and the
# range, and "every pair" where all rounds agree on the side (faster or
# slower): on a machine that changes speed between rounds, a pair sees one
# speed where the medians of the sides may each see another.
#
#   bench/ab.sh BEFORE AFTER [collbench allreduce flags...]
#   e.g. bench/ab.sh /tmp/old/build/collbench build/collbench --backend tcp,shm -P 2,4 --sizes 8,64K,1M,16M
# env: ROUNDS (3). The flags default to --backend tcp,shm -P 2,4 --sizes 8,64K,1M,16M
# -n 50 -w 5; results are checked (-c 1) on both sides.
set -u
BEFORE=${1:?usage: $0 BEFORE AFTER [collbench allreduce flags...]}
AFTER=${2:?usage: $0 BEFORE AFTER [collbench allreduce flags...]}
shift 2
[ $# -gt 0 ] || set -- --backend tcp,shm -P 2,4 --sizes 8,64K,1M,16M -n 50 -w 5
ROUNDS=${ROUNDS:-3}
for b in "$BEFORE" "$AFTER"; do
    [ -x "$b" ] || { echo "ab.sh: $b is not an executable" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

for r in $(seq "$ROUNDS"); do
    sides="before after"
    [ $((r % 2)) = 0 ] && sides="after before"
    for side in $sides; do
        bin=$BEFORE
        [ "$side" = after ] && bin=$AFTER
        if ! "$bin" allreduce "$@" -c 1 -q --csv "$work/$side.$r.csv" >"$work/$side.$r.log" 2>&1; then
            echo "ab.sh: the $side binary failed (round $r):" >&2
            tail -5 "$work/$side.$r.log" >&2
            exit 1
        fi
    done
done

# One line per (side, round, backend, buffers, nprocs, in_place, bytes): p25, p50, p75.
for f in "$work"/*.csv; do
    base=$(basename "$f" .csv)
    awk -F, -v tag="${base%%.*} ${base#*.}" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print tag, $c["backend"], $c["buffers"], $c["nprocs"], $c["in_place"], $c["bytes"],
                $c["time_us_p25"], $c["time_us_p50"], $c["time_us_p75"] }' "$f"
done >"$work/all"

echo "| backend | buffers | ranks | in place | bytes | before p50 us (p25-p75) | after p50 us (p25-p75) | after/before | rounds' p50 before / after | after/before by round |"
echo "|---|---|---|---|---|---|---|---|---|---|"
awk -f "$(dirname "$0")/rounds.awk" -f /dev/stdin "$work/all" <<'AWK'
{   key = $3 " | " $4 " | " $5 " | " $6 " | " $7
    if (!(key in seen)) { seen[key] = 1; order[++k] = key }
    p25[key, $1] = p25[key, $1] " " $8; p50[key, $1] = p50[key, $1] " " $9
    p75[key, $1] = p75[key, $1] " " $10; round[key, $1, $2] = $9; rounds[$2] = 1 }
END {
    for (i = 1; i <= k; i++) {
        key = order[i]
        b = median(p50[key, "before"]); a = median(p50[key, "after"])
        bl = median(p25[key, "before"]); bh = median(p75[key, "before"])
        al = median(p25[key, "after"]); ah = median(p75[key, "after"])
        # the report's rule: a difference only where the p25-p75 ranges do not overlap;
        # and only where no round of one side reached the other side's rounds
        rbl = lo(p50[key, "before"]); rbh = hi(p50[key, "before"])
        ral = lo(p50[key, "after"]); rah = hi(p50[key, "after"])
        verdict = (al > bh && ral > rbh) ? "slower" : (ah < bl && rah < rbl) ? "faster" : "within noise"
        pairs = ""
        for (r in rounds)
            if (round[key, "before", r] > 0) pairs = pairs " " round[key, "after", r] / round[key, "before", r]
        pl = lo(pairs); ph = hi(pairs)
        every = ph < 1 ? ", every pair faster" : pl > 1 ? ", every pair slower" : ""
        printf "| %s | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.2fx %s | %.1f-%.1f / %.1f-%.1f | %.2fx [%.2f-%.2f]%s |\n",
               key, b, bl, bh, a, al, ah, (b > 0 ? a / b : 0), verdict, rbl, rbh, ral, rah,
               median(pairs), pl, ph, every
    }
}
AWK
