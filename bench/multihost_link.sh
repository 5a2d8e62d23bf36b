#!/bin/bash
# The issue's link targets over 2 emulated hosts (network namespaces, a veth
# pair shaped by tc to $RATE, 10gbit by default): large all-reduce on tcp with
# 1 rank per host reaches >= 90% of the link rate (its bound: each host sends
# and receives the whole buffer once), hierarchical auto with 2 ranks per host
# >= 80% of its bound. Each case also runs on links shaped to 1000gbit, which
# no 2-core machine fills: what the CPUs give with the link out of the way, so
# a missed target says whether the link or the CPUs bound it. Exit 1 when a
# target is missed. Needs root.
#
#   bench/multihost_link.sh [COLLBENCH] [SIZES]      e.g. bench/multihost_link.sh build/collbench 64M,256M
BIN=${1:-build/collbench}
SIZES=${2:-64M,256M}
HERE=$(cd "$(dirname "$0")" && pwd)
rc=0
for c in "tcp 1 0.90" "auto 2 0.80"; do
    set -- $c
    echo "== $1, 2 hosts x $2 ranks: target $3 of the link's bound"
    PER_NODE=$2 BACKENDS=$1 TARGET=$3 bash "$HERE/auto_hier.sh" "$BIN" "$SIZES" || rc=1
    echo "-- the same on 1000gbit links: the CPUs' own ceiling (no target)"
    RATE=1000gbit PER_NODE=$2 BACKENDS=$1 bash "$HERE/auto_hier.sh" "$BIN" "$SIZES" | grep -v '^# target'
done
exit $rc
