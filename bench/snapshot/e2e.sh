#!/usr/bin/env bash
# End-to-end dump over SQL (issue 16): `ADMIN EXECUTE ON <node>
# 'System.print(HeapProf.getInstance().dump_dot_snapshot())'` through the
# mariadb CLI against heapproxy's embedded default, the node a StarRocks BE
# serving one real jemalloc dump over HTTP (bench/snapshot/nodes).
#
#   SHAPES="o2 server" RUNS=5 bash bench/snapshot/e2e.sh [SRC...]
#   BENCH_DIR=DIR bash bench/snapshot/e2e.sh [SRC...]
#
# For each heapproxy source tree SRC (default: this one), RUNS times:
#   cold: a new heapproxy process, its first dump (opens and indexes the
#         binary, decodes its DWARF);
#   warm: the same process, one more dump_dot_snapshot(), then snapshot()
#         (which answers once the snapshot is stored) and to_dot_format()
#         of that snapshot, each after the previous dump's background save.
# Prints medians, the fetch alone (curl of the node), heapproxy's peak RSS
# (VmHWM), and checks the graph equals `heapproxy dot BIN PROF`'s.
# Each shape is a directory of bench/heapprof/run.sh's (default o2, issue
# 4's example, and server, a PIE with threads) holding big and big.heap;
# BENCH_DIR names one such directory instead; PROF overrides the dump.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench
dirs=()
if [ -n "${BENCH_DIR:-}" ]; then dirs=("$BENCH_DIR"); else for s in ${SHAPES:-o2 server}; do dirs+=("$cache/$s"); done; fi
runs=${RUNS:-5}
nodeport=${NODE_PORT:-18140}
port=${PORT:-19130}
for dir in "${dirs[@]}"; do
  if [ ! -s "$dir/big" ] || [ ! -s "${PROF:-$dir/big.heap}" ]; then echo "e2e.sh: $dir/big or its dump is missing: run bench/heapprof/run.sh (or gen.sh $dir)" >&2; exit 1; fi
done
command -v mariadb >/dev/null || { echo "e2e.sh: the mariadb client is required" >&2; exit 1; }
srcs=("$@")
[ ${#srcs[@]} -gt 0 ] || srcs=("$repo")

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

(cd "$repo" && go build -o "$tmp/nodes" ./bench/snapshot/nodes)
for dir in "${dirs[@]}"; do
prof=${PROF:-$dir/big.heap}
bin=$(realpath "$dir/big")
"$tmp/nodes" -n 1 -base "$nodeport" "$prof" >"$tmp/nodes.out" &
nodes=$!
pids+=("$nodes")
cat >"$tmp/config.yaml" <<EOF
listen: 127.0.0.1:$port
nodes:
  - {id: 10001, kind: starrocks, host: 127.0.0.1, http_port: $nodeport, binary: $bin}
EOF

sql() { mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -N -r -e "$1"; }
admin() { sql "ADMIN EXECUTE ON 10001 'System.print(HeapProf.getInstance().$1)'"; }
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# stored waits until the data directory holds n snapshots (background saves).
stored() { while [ "$(find "$1/snapshots" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" -lt "$2" ]; do sleep 0.02; done; }
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$nodeport/pprof/heap" && break; sleep 0.05; done

echo "End-to-end dump over SQL, $(date -u +%FT%TZ), $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(basename "$prof") ($(stat -c %s "$prof") bytes, $(grep -c '^@' "$prof") stacks) of $bin ($(( $(stat -c %s "$bin") / 1000000 )) MB), medians of $runs"
echo
echo "| build | fetch alone | dump_dot_snapshot cold (first after start) | dump_dot_snapshot warm | snapshot() warm | to_dot_format() warm | peak RSS (VmHWM) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
n=0
for src in "${srcs[@]}"; do
  n=$((n + 1))
  (cd "$src" && CGO_ENABLED=0 go build -o "$tmp/heapproxy.$n" ./cmd/heapproxy)
  "$tmp/heapproxy.$n" dot "$bin" "$prof" | tail -n +2 >"$tmp/cli.dot"
  : >"$tmp/fetch"; : >"$tmp/cold"; : >"$tmp/warm"; : >"$tmp/snap"; : >"$tmp/todot"; : >"$tmp/hwm"
  for r in $(seq "$runs"); do
    data=$tmp/data.$n.$r
    t0=$(now); curl -sf -o /dev/null "http://127.0.0.1:$nodeport/pprof/heap"; t1=$(now)
    echo "$t1 - $t0" | bc -l >>"$tmp/fetch"
    "$tmp/heapproxy.$n" --config "$tmp/config.yaml" --data-dir "$data" --log-level error 2>"$tmp/err" &
    hp=$!
    pids+=("$hp")
    for _ in $(seq 300); do sql "SELECT 1" >/dev/null 2>&1 && break; kill -0 $hp 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }; sleep 0.05; done
    t0=$(now); admin "dump_dot_snapshot()" >"$tmp/cold.dot"; t1=$(now)
    echo "$t1 - $t0" | bc -l >>"$tmp/cold"
    stored "$data" 1
    t0=$(now); admin "dump_dot_snapshot()" >"$tmp/warm.dot"; t1=$(now)
    echo "$t1 - $t0" | bc -l >>"$tmp/warm"
    stored "$data" 2
    t0=$(now); name=$(admin "snapshot()"); t1=$(now)
    echo "$t1 - $t0" | bc -l >>"$tmp/snap"
    t0=$(now); admin "to_dot_format(\"$name\")" >"$tmp/todot.dot"; t1=$(now)
    echo "$t1 - $t0" | bc -l >>"$tmp/todot"
    awk '/^VmHWM/ { print $2 / 1024 }' "/proc/$hp/status" >>"$tmp/hwm"
    kill $hp; wait $hp 2>/dev/null || true
    # The graph over SQL is heapproxy dot's (the title line names the node
    # and time instead of the files).
    for f in cold warm todot; do
      tail -n +2 "$tmp/$f.dot" | cmp -s - "$tmp/cli.dot" || { echo "e2e.sh: the $f graph differs from heapproxy dot's" >&2; exit 1; }
    done
  done
  printf '| %s | %.3f s | %.3f s | %.3f s | %.3f s | %.3f s | %.0f MB |\n' "$(basename "$src")" \
    "$(median <"$tmp/fetch")" "$(median <"$tmp/cold")" "$(median <"$tmp/warm")" "$(median <"$tmp/snap")" \
    "$(median <"$tmp/todot")" "$(median <"$tmp/hwm")"
done
kill $nodes; wait $nodes 2>/dev/null || true
echo
done
