#!/bin/sh
# A program on torch's gloo (the trace header's backend) replayed on the gloo
# backend runs each group on two communicators (replay_lanes), on shm on one:
# the table header says so, and a 16 MiB all-reduce with a 4-byte one issued
# 0.1 ms after it end in the order that shows it (on gloo the small one runs
# beside the large one and ends first; on tcp it waits behind it). Labelled
# gloo: the ThreadSanitizer job leaves the gloo backend to AddressSanitizer.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$WORK/gloo"
for f in "$HERE"/in_flight/rank*.jsonl; do
    sed '1s/"backend":"coll"/"backend":"gloo"/' "$f" >"$WORK/gloo/$(basename "$f")"
done
"$BIN" replay "$WORK/gloo" --backend shm,gloo -T 30 >"$WORK/out" 2>&1 &&
    grep -q "^# replay of .* on shm .* gaps recorded, overlap recorded" "$WORK/out" &&
    grep -q "^# replay of .* on gloo .* gaps recorded, overlap recorded on 2 communicators per group" "$WORK/out" ||
    fail "default overlap of a gloo program: $(tail -20 "$WORK/out")"
# two lanes: a 16 MiB all-reduce and a 4-byte one issued 0.1 ms after it, by
# a program on torch's gloo: on gloo the small one runs beside the large one
# and ends first; on tcp (one communicator) it waits behind it
"$BIN" replay "$HERE/two_lanes" --backend tcp,gloo -T 30 --calls "$WORK/lanes.csv" >"$WORK/out" 2>&1 ||
    fail "two lanes: exit $?: $(cat "$WORK/out")"
awk -F, 'NR > 1 { end[$1 "," $3 "," $4] = $12 + $13; seen[$1]++ }
    END { if (seen["tcp"] != 4 || seen["gloo"] != 4) { print "calls missing"; exit 1 }
          for (r = 0; r < 2; r++) {
              if (end["gloo," r ",1"] >= end["gloo," r ",0"]) { print "gloo rank " r ": the small call ended last"; exit 1 }
              if (end["tcp," r ",1"] < end["tcp," r ",0"]) { print "tcp rank " r ": the small call ended first"; exit 1 } } }' \
    "$WORK/lanes.csv" >"$WORK/why" || fail "two lanes: $(cat "$WORK/why"): $(cat "$WORK/lanes.csv")"
finish
