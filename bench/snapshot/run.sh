#!/usr/bin/env bash
# Snapshot benchmarks of issue 16 (make bench-snapshot): what storing one
# snapshot costs, part by part (snapcost), and `ON ALL BACKENDS
# dump_dot_snapshot()` over NODES nodes (fanout.sh), both on one shape's
# program and dump of bench/heapprof/run.sh (default o2, which make
# bench-heapprof builds first).
#
#   bash bench/snapshot/run.sh                 # make bench-snapshot
#   SHAPE=server NODES=20 RUNS=5 bash bench/snapshot/run.sh
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench/${SHAPE:-o2}
if [ ! -s "$dir/big" ] || [ ! -s "$dir/big.heap" ]; then
  echo "run.sh: $dir/big or big.heap is missing: run make bench-heapprof first (or bench/heapprof/gen.sh)" >&2
  exit 1
fi
cd "$repo"
echo "## What a snapshot costs (snapcost, $dir)"
echo
go run ./bench/snapshot/snapcost -runs "${RUNS:-3}" "$dir/big" "$dir/big.heap"
echo
echo "## ON ALL BACKENDS over ${NODES:-100} nodes (fanout.sh)"
echo
BENCH_DIR=$dir NODES=${NODES:-100} bash bench/snapshot/fanout.sh
