#!/usr/bin/env bash
# Fan-out benchmark: `ADMIN EXECUTE ON ALL BACKENDS 'dump_dot_snapshot()'`
# over NODES StarRocks BEs (bench/snapshot/nodes: one real jemalloc dump of
# gen.sh's program served on NODES loopback ports), through heapproxy's
# embedded default with the mariadb CLI. Reports, per heapproxy build:
# one warm dump_dot_snapshot on one node (wall, heapproxy CPU), the fan-out
# (wall, heapproxy CPU, peak RSS = VmHWM), the time until all NODES
# snapshots are stored (list_snapshots of the last node, then a restart
# finds them), and the target: NODES / CPUs x one dump's CPU. "CPU wait"
# is how long heapproxy's threads were runnable but had no CPU during the
# fan-out (schedstat run delay, summed over threads): on a shared machine,
# wall time lost to other processes, not to heapproxy's own waits.
#
#   BENCH_DIR=DIR NODES=100 bash bench/snapshot/fanout.sh [SRC...]
#
# SRC are heapproxy source trees to compare (default: this one), e.g. a
# copy of an earlier version. BENCH_DIR holds big and big.heap (gen.sh);
# PROF overrides the profile (e.g. $BENCH_DIR/sparse.heap); MAX_DUMPS sets
# max_dumps (default 0: one per CPU); NODE_DELAY makes each node wait that
# long before answering a dump (e.g. 300ms, a BE's prof.dump; default 0).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench}
nodes=${NODES:-100}
prof=${PROF:-$dir/big.heap}
bin=$(realpath "$dir/big")
base=${BASE_PORT:-18040}
port=${PORT:-19030}
if [ ! -s "$prof" ] || [ ! -s "$bin" ]; then echo "fanout.sh: $dir/big and $prof are missing: run bench/heapprof/gen.sh $dir" >&2; exit 1; fi
command -v mariadb >/dev/null || { echo "fanout.sh: the mariadb client is required" >&2; exit 1; }
srcs=("$@")
[ ${#srcs[@]} -gt 0 ] || srcs=("$repo")

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

(cd "$repo" && go build -o "$tmp/nodes" ./bench/snapshot/nodes)
"$tmp/nodes" -n "$nodes" -base "$base" -delay "${NODE_DELAY:-0s}" "$prof" >"$tmp/nodes.out" &
pids+=($!)

{
  echo "listen: 127.0.0.1:$port"
  echo "max_dumps: ${MAX_DUMPS:-0}"
  echo "timeouts: {admin: 30m}"
  echo "nodes:"
  for i in $(seq 0 $((nodes - 1))); do
    echo "  - {id: $((10001 + i)), kind: starrocks, host: 127.0.0.1, http_port: $((base + i)), binary: $bin}"
  done
} >"$tmp/config.yaml"

cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rundelay() { cat "/proc/$1"/task/*/schedstat 2>/dev/null | awk '{ s += $2 } END { printf "%.3f\n", s / 1e9 }'; }
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
sql() { mariadb -h127.0.0.1 -P"$port" -uroot -N -r -e "$1"; }
now() { date +%s.%N; }
tck=$(getconf CLK_TCK)

echo "Fan-out benchmark, $(date -u +%FT%TZ), $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$nodes nodes serving $(basename "$prof") ($(stat -c %s "$prof") bytes, $(grep -c '^@' "$prof") stacks) of $(basename "$bin"), each answer after ${NODE_DELAY:-0s}"
echo
echo "| build | one dump: wall | one dump + its save: CPU | fan-out: wall | fan-out: CPU | fan-out: CPU wait | CPU per node | peak RSS | all stored after | target (nodes/CPUs x one dump CPU) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
n=0
for src in "${srcs[@]}"; do
  n=$((n + 1))
  (cd "$src" && CGO_ENABLED=0 go build -o "$tmp/heapproxy.$n" ./cmd/heapproxy)
  data=$tmp/data.$n
  "$tmp/heapproxy.$n" --config "$tmp/config.yaml" --data-dir "$data" --log-level error 2>"$tmp/heapproxy.$n.err" &
  hp=$!
  pids+=("$hp")
  for _ in $(seq 300); do sql "SELECT 1" >/dev/null 2>&1 && break; kill -0 $hp 2>/dev/null || { cat "$tmp/heapproxy.$n.err" >&2; exit 1; }; sleep 0.2; done
  # Warm: the first dump opens and indexes the binary.
  sql "ADMIN EXECUTE ON 10001 'System.print(HeapProf.getInstance().dump_dot_snapshot())'" >/dev/null
  c0=$(cputicks $hp); t0=$(now)
  sql "ADMIN EXECUTE ON 10002 'System.print(HeapProf.getInstance().dump_dot_snapshot())'" >"$tmp/one.dot"
  t1=$(now); c1=$(cputicks $hp)
  sleep 2 # the background save of that dump, outside the next figures
  c2=$(cputicks $hp); d2=$(rundelay $hp); t2=$(now)
  sql "ADMIN EXECUTE ON ALL BACKENDS 'System.print(HeapProf.getInstance().dump_dot_snapshot())'" >"$tmp/all.out"
  t3=$(now); c3=$(cputicks $hp); d3=$(rundelay $hp)
  # Stored: list_snapshots counts on disk (the Dir's snapshots/ entries).
  while [ "$(find "$data/snapshots" -mindepth 1 -maxdepth 1 | wc -l)" -lt $((nodes + 2)) ]; do sleep 0.05; done
  t4=$(now); c4=$(cputicks $hp)
  peak=$(hwm $hp)
  ok=$(grep -c 'digraph' "$tmp/all.out" || true)
  kill $hp; wait $hp 2>/dev/null || true
  awk -v b="$(basename "$src")" -v n="$nodes" -v cpus="$(nproc)" -v tck="$tck" \
      -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v t2="$t2" -v t3="$t3" -v t4="$t4" -v c2="$c2" -v c3="$c3" -v c4="$c4" -v d2="$d2" -v d3="$d3" -v peak="$peak" 'BEGIN {
    one = (c2 - c0) / tck # the dump and its save
    printf "| %s | %.2f s | %.2f s | %.1f s | %.1f s (+%.1f s saving after) | %.1f s | %.2f s | %.0f MB | %.1f s | %.1f s |\n",
      b, t1 - t0, one, t3 - t2, (c3 - c2) / tck, (c4 - c3) / tck, d3 - d2, (c4 - c2) / tck / n, peak / 1024, t4 - t2, n / cpus * one
  }'
  [ "$ok" -ge "$nodes" ] || { echo "fanout.sh: only $ok of $nodes answers are graphs:" >&2; head -c 600 "$tmp/all.out" >&2; exit 1; }
done
