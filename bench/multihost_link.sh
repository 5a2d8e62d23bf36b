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
# env: ITERS (auto_hier.sh's, 10), TARGETS=off (tables only: no target judged,
# the smoke run's way). Exit 77 (a skip for ctest) without root or ip netns.
# Smallest run (ctest bench/multihost_link): TARGETS=off ITERS=2, SIZES 4K.
BIN=${1:-build/collbench}
SIZES=${2:-64M,256M}
HERE=$(cd "$(dirname "$0")" && pwd)
rc=0
tmp=$(mktemp "${TMPDIR:-/tmp}/multihost_link.XXXXXX")
trap 'rm -f "$tmp"' EXIT
for c in "tcp 1 0.90" "auto 2 0.80"; do
    set -- $c
    echo "== $1, 2 hosts x $2 ranks: target $3 of the link's bound$([ "${TARGETS:-on}" = off ] && echo " (TARGETS=off: not judged)")"
    target=$3
    [ "${TARGETS:-on}" = off ] && target=
    PER_NODE=$2 BACKENDS=$1 TARGET=$target bash "$HERE/auto_hier.sh" "$BIN" "$SIZES" || rc=$?
    [ "$rc" -ne 77 ] || exit 77
    echo "-- the same on 1000gbit links: the CPUs' own ceiling (no target)"
    RATE=1000gbit PER_NODE=$2 BACKENDS=$1 bash "$HERE/auto_hier.sh" "$BIN" "$SIZES" >"$tmp" || rc=1
    grep -v '^# target' "$tmp"
done
exit $rc
