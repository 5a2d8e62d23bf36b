#!/bin/bash
# The issue's link targets over 2 emulated hosts (network namespaces, a veth
# pair shaped by tc to $RATE, 10gbit by default): large all-reduce on tcp with
# 1 rank per host reaches >= 90% of the link rate (its bound: each host sends
# and receives the whole buffer once), hierarchical auto with 2 ranks per host
# >= 80% of its bound. Exit 1 when a target is missed. Needs root.
#
#   bench/multihost_link.sh [COLLBENCH] [SIZES]      e.g. bench/multihost_link.sh build/collbench 64M,256M
BIN=${1:-build/collbench}
SIZES=${2:-64M,256M}
HERE=$(cd "$(dirname "$0")" && pwd)
rc=0
echo "== tcp, 2 hosts x 1 rank: target 0.90 of the link"
PER_NODE=1 BACKENDS=tcp TARGET=0.90 bash "$HERE/auto_hier.sh" "$BIN" "$SIZES" || rc=1
echo "== auto (hierarchical), 2 hosts x 2 ranks: target 0.80 of the bound"
PER_NODE=2 BACKENDS=auto TARGET=0.80 bash "$HERE/auto_hier.sh" "$BIN" "$SIZES" || rc=1
exit $rc
