#!/bin/bash
# The cost model on one host with a process count held out (docs/PERFORMANCE.md
# "Cost model: a process count held out"): all-reduce measured at each of
# RANKS (out of place, malloc buffers, float32), the counts alternated round by
# round (2 3 4 6, 2 3 4 6, ...) so that a slow minute lands on every count, all
# rows in one results.json with this machine's cores (machines.<host>.cores).
# Then `collbench model` leaves each count out in turn and predicts it from the
# others, and, for the case the model must meet (FIT -> HELD: 2,3 -> 4), prints
# each size's prediction beside the median of its measured rounds.
#
#   bench/model_heldout_ranks.sh [COLLBENCH]
# env: RANKS ("2 3 4 6"), SIZES (64K,128K,256K,512K,1M,2M,4M,8M,16M), ROUNDS (3),
#      BACKEND (tcp), FIT ("2 3"), HELD (4), KEEP (a directory to keep results.json in)
set -u
BIN=${1:-build/collbench}
RANKS=${RANKS:-2 3 4 6}
SIZES=${SIZES:-64K,128K,256K,512K,1M,2M,4M,8M,16M}
ROUNDS=${ROUNDS:-3}
BACKEND=${BACKEND:-tcp}
FIT=${FIT:-2 3}
HELD=${HELD:-4}
[ -x "$BIN" ] || { echo "no collbench at $BIN (build first, or pass its path)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is needed (scripts/deps.sh installs it)" >&2; exit 2; }
OUT=$(mktemp -d "${TMPDIR:-/tmp}/model_heldout.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
J=$OUT/results.json

echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
    for p in $RANKS; do
        "$BIN" allreduce -P "$p" --backend "$BACKEND" --sizes "$SIZES" --inplace 0 -w 3 -n 20 \
            -q -J "$J" || { echo "round $round, $p ranks failed" >&2; exit 1; }
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$J" "$KEEP/"

echo "== every count left out in turn (collbench model)"
"$BIN" model "$J" --no-rows | grep -E "^[^ ]|formula|cores:|alpha|beta|gamma|residuals|held"

# FIT -> HELD: the rows of the FIT counts alone, fitted and asked for HELD.
fit_json=$OUT/fit.json
# shellcheck disable=SC2086 # one term per count
sel=$(printf '.nprocs == %s or ' $FIT)
jq ".results.communication.allreduce |= map(select(${sel% or }))" "$J" >"$fit_json"
cores=$(nproc)
echo
echo "== fit $(echo "$FIT" | tr ' ' ,) -> $HELD ranks, cell by cell"
"$BIN" model "$fit_json" --no-rows --sizes "$SIZES" \
    --predict "hosts=1,ranks-per-host=$HELD,cores=$cores" >"$OUT/pred" || exit 1
printf '%10s %14s %14s %8s\n' bytes measured_us predicted_us error
jq -r --argjson p "$HELD" '[.results.communication.allreduce[] | select(.nprocs == $p)] |
    group_by(.bytes)[] | (map(.time_us_p50) | sort) as $v | ($v | length) as $n |
    "\(.[0].bytes) \(if $n % 2 == 1 then $v[($n - 1) / 2] else ($v[$n / 2 - 1] + $v[$n / 2]) / 2 end)"' "$J" |
    awk -v pred="$OUT/pred" '
    function bytes(s,   v, u) { v = s + 0; u = substr(s, length(s))
        return u == "K" ? v * 1024 : u == "M" ? v * 1048576 : u == "G" ? v * 1073741824 : v }
    BEGIN { while ((getline l < pred) > 0) { n = split(l, f, " ")
                if (n >= 3 && f[2] != "pick:" && f[3] ~ /^[0-9.]+$/ && f[1] ~ /^[0-9]+[KMG]?$/) p[bytes(f[1])] = f[3] } }
    $1 in p { e = (p[$1] - $2) / $2; printf "%10d %14.1f %14.1f %+7.1f%%\n", $1, $2, p[$1], 100 * e }' |
    sort -n | tee "$OUT/cells"
sed 's/.* \([-+][0-9.]*\)%$/\1/; s/^[-+]//' "$OUT/cells" | sort -g |
    awk '{ v[++n] = $1 } END { if (!n) { print "no cell predicted"; exit 1 }
          printf "median |error| %.1f%% over %d sizes, max %.1f%%\n",
              n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, n, v[n] }'
