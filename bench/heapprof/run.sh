#!/usr/bin/env bash
# Issue-4 benchmark: `jeprof --dot BIN PROF` against `heapproxy dot BIN PROF`
# on the generated program of gen.sh, cold (a new process each run, with
# /usr/bin/time for wall time and peak RSS) and warm (symbench: the second
# Parse + Symbolize + WriteDOT in one process, with the symbolizer's cache).
# Prints a markdown table and checks that both DOT outputs have the same
# node lines and the same edge lines (in any order).
#
#   bash bench/heapprof/run.sh            # make bench-heapprof
#
# Environment: BENCH_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench)
# holds big and big.heap (built by gen.sh when missing: ~5 minutes on 2 cores);
# RUNS (default 3) cold runs per tool.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench}
runs=${RUNS:-3}
for tool in jeprof g++ /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 1; }
done

# gen.sh records its arguments in big.args; a program built with other
# ones (an older gen.sh) is built again.
if [ ! -s "$dir/big" ] || [ ! -s "$dir/big.heap" ] || [ "$(cat "$dir/big.args" 2>/dev/null)" != "$(sh "$repo/bench/heapprof/gen.sh" --args)" ]; then
  echo "building the benchmark program into $dir (about 5 minutes)" >&2
  rm -rf "$dir/src"
  sh "$repo/bench/heapprof/gen.sh" "$dir" >&2
fi
bin=$(realpath "$dir/big")
prof=$dir/big.heap
# jeprof finds the program's mapping only under the path the profile
# recorded; a moved or copied program is profiled again where it is.
if ! grep -q " $bin\$" "$prof"; then
  echo "profiling $bin again: $prof names another path" >&2
  rm -f "$dir"/big.*.heap
  MALLOC_CONF=prof:true,lg_prof_sample:0,prof_final:true,prof_prefix:"$dir/big" "$bin"
  mv "$(ls "$dir"/big.*.heap | head -1)" "$prof"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && go build -o "$tmp/heapproxy" ./cmd/heapproxy && go build -o "$tmp/symbench" ./bench/heapprof/symbench &&
  go build -o "$tmp/treerss" ./bench/heapprof/treerss)

# timed NAME OUT CMD...: runs CMD with stdout to OUT and appends
# "wall_seconds peak_rss_kb" to $tmp/NAME.times.
timed() {
  local name=$1 out=$2
  shift 2
  /usr/bin/time -f '%e %M' -o "$tmp/time.1" "$@" >"$out" 2>"$tmp/$name.err" || {
    echo "run.sh: $* failed:" >&2
    cat "$tmp/$name.err" >&2
    exit 1
  }
  cat "$tmp/time.1" >>"$tmp/$name.times"
}

# A sparser profile of the same program: every 10th stack (fewer PCs in the
# same binary, closer to a server's profile).
if [ ! -s "$dir/sparse.heap" ] || [ "$prof" -nt "$dir/sparse.heap" ]; then
  awk '/^MAPPED_LIBRARIES:/ { maps = 1 } maps || !seen { if (/^@/) seen = 1; else { print; next } }
       /^@/ { keep = (n++ % 10 == 0) } keep && !maps { print }' "$prof" >"$dir/sparse.heap"
fi

# Same graph: the same node lines and the same edges, with node ids replaced
# by their labels (jeprof numbers nodes of equal weight, and orders edges of
# equal weight, by Perl's randomized hash order).
# With DROP_SOURCE=1 edges are compared without their source node: when
# more edges of exactly equal weight lead into a node than --maxdegree
# keeps, which of them jeprof keeps follows that hash order too (two jeprof
# runs differ that way on big.heap).
canon() {
  awk -v drop_source="${DROP_SOURCE:-0}" '
    /^N[0-9]+ \[label=/ { id = $1; sub(/^N[0-9]+ /, ""); label[id] = $0; print "node " $0; next }
    / -> / { edges[++n] = $0; next }
    { print "line " $0 }
    END {
      for (i = 1; i <= n; i++) {
        split(edges[i], f, " ")
        rest = edges[i]; sub(/^N[0-9]+ -> N[0-9]+ /, "", rest)
        print "edge " (drop_source ? "" : label[f[1]]) " -> " label[f[3]] " " rest
      }
    }' "$1" | sort
}

# bench PROFILE: the runs, the table and the DOT check for one profile.
bench() {
  local prof=$1 name
  name=$(basename "$prof" .heap)
  for _ in $(seq "$runs"); do
    timed $name.jeprof "$tmp/jeprof.dot" jeprof --dot "$bin" "$prof"
    timed $name.heapproxy "$tmp/heapproxy.dot" "$tmp/heapproxy" dot "$bin" "$prof"
    # The same pipeline in a process without heapproxy's other packages
    # (their init functions cost ~0.1 s of a cold run).
    timed $name.pipeline /dev/null "$tmp/symbench" -jeprof=false -warm=false -dot "$bin" "$prof"
  done
  # Memory of the whole process tree (jeprof runs nm and addr2line beside
  # Perl), sampled every millisecond in runs of their own.
  "$tmp/treerss" -o "$tmp/$name.jeprof.tree" jeprof --dot "$bin" "$prof" >/dev/null 2>&1
  "$tmp/treerss" -o "$tmp/$name.heapproxy.tree" "$tmp/heapproxy" dot "$bin" "$prof" >/dev/null
  # What heapproxy holds before it reads anything: its package
  # initialization (the SQL engine of the snapshot views, TiDB's parser)
  # and the pages of its own binary that touches.
  /usr/bin/time -f '%M' -o "$tmp/startup.rss" "$tmp/heapproxy" dot -h >/dev/null 2>&1 || true
  for _ in $(seq "$runs"); do
    "$tmp/symbench" -jeprof=false -dot -warmruns 3 "$bin" "$prof" | awk '$1 == "RESULT" && $2 == "warm"' >>"$tmp/$name.warm.txt"
  done

  # median FILE COLUMN
  median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
  maxcol() { sort -g -k"$2","$2" "$1" | tail -1 | awk -v c="$2" '{ print $c }'; }
  field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$tmp/$name.warm.txt" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

  je_wall=$(median "$tmp/$name.jeprof.times" 1)
  je_rss=$(maxcol "$tmp/$name.jeprof.times" 2)
  hp_wall=$(median "$tmp/$name.heapproxy.times" 1)
  hp_rss=$(maxcol "$tmp/$name.heapproxy.times" 2)
  pl_wall=$(median "$tmp/$name.pipeline.times" 1)
  pl_rss=$(maxcol "$tmp/$name.pipeline.times" 2)
  tree() { sed -n "s/.*$2=\([0-9]*\).*/\1/p" "$tmp/$name.$1.tree"; }
  je_tree=$(tree jeprof tree_rss_kb)
  je_anon=$(tree jeprof tree_anon_kb)
  hp_tree=$(tree heapproxy tree_rss_kb)
  hp_anon=$(tree heapproxy tree_anon_kb)
  startup_rss=$(tail -1 "$tmp/startup.rss")
  warm_total=$(field total_ms)
  warm_sym=$(field symbolize_ms)

  pcs=$(awk '/^@/ { for (i = 2; i <= NF; i++) print $i }' "$prof" | sort -u | wc -l)
  echo "### $(basename "$prof"): $(($(stat -c %s "$bin") / 1000000)) MB binary, $(grep -c '^@' "$prof") stacks, $pcs distinct PCs; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| | wall (median of $runs) | peak RSS (max) | jeprof / heapproxy |"
  echo "|---|---|---|---|"
  awk -v w="$je_wall" -v r="$je_rss" 'BEGIN { printf "| jeprof --dot (cold) | %.2f s | %.0f MB | |\n", w, r / 1024 }'
  awk -v w="$hp_wall" -v r="$hp_rss" -v jw="$je_wall" -v jr="$je_rss" \
    'BEGIN { printf "| heapproxy dot (cold) | %.2f s | %.0f MB | %.1fx time, %.2f of the memory |\n", w, r / 1024, jw / w, r / jr }'
  awk -v w="$pl_wall" -v r="$pl_rss" -v jw="$je_wall" -v jr="$je_rss" \
    'BEGIN { printf "| same pipeline without heapproxy init (symbench -dot -warm=false, cold) | %.2f s | %.0f MB | %.1fx time, %.2f of the memory |\n", w, r / 1024, jw / w, r / jr }'
  awk -v t="$warm_total" -v s="$warm_sym" -v jw="$je_wall" \
    'BEGIN { printf "| heapproxy warm (parse + symbolize + dot, 2nd call in one process) | %.0f ms (symbolize alone %.0f ms) | | %.0fx time (symbolize alone %.0fx) |\n", t, s, jw * 1000 / t, jw * 1000 / s }'
  echo
  echo "Memory of the whole process tree, sampled every ms (jeprof: Perl, nm and addr2line; heapproxy: one process):"
  echo
  echo "| | peak RSS of the tree | peak private (anonymous) memory |"
  echo "|---|---|---|"
  awk -v r="$je_tree" -v a="$je_anon" 'BEGIN { printf "| jeprof --dot | %.0f MB | %.0f MB |\n", r / 1024, a / 1024 }'
  awk -v r="$hp_tree" -v a="$hp_anon" -v jr="$je_tree" -v ja="$je_anon" \
    'BEGIN { printf "| heapproxy dot | %.0f MB (%.2f of jeprof) | %.0f MB (%.2f of jeprof) |\n", r / 1024, r / jr, a / 1024, a / ja }'
  awk -v r="$pl_rss" -v jr="$je_tree" \
    'BEGIN { printf "| the same pipeline without heapproxy init (symbench, one process) | %.0f MB (%.2f of jeprof) | |\n", r / 1024, r / jr }'
  awk -v r="$startup_rss" -v jr="$je_tree" \
    'BEGIN { printf "| heapproxy start-up alone (heapproxy dot -h: package init, no input) | %.0f MB (%.2f of jeprof) | |\n", r / 1024, r / jr }'
  echo

  canon "$tmp/jeprof.dot" >"$tmp/jeprof.canon"
  canon "$tmp/heapproxy.dot" >"$tmp/heapproxy.canon"
  DROP_SOURCE=1 canon "$tmp/jeprof.dot" >"$tmp/jeprof.canon2"
  DROP_SOURCE=1 canon "$tmp/heapproxy.dot" >"$tmp/heapproxy.canon2"
  if diff "$tmp/jeprof.canon" "$tmp/heapproxy.canon" >"$tmp/dot.diff"; then
    echo "DOT check: $(grep -c '^node ' "$tmp/jeprof.canon") nodes and $(grep -c '^edge ' "$tmp/jeprof.canon") edges identical to jeprof's"
  elif diff "$tmp/jeprof.canon2" "$tmp/heapproxy.canon2" >/dev/null; then
    echo "DOT check: $(grep -c '^node ' "$tmp/jeprof.canon") nodes identical to jeprof's; of $(grep -c '^edge ' "$tmp/jeprof.canon") edges, $(grep -c '^<' "$tmp/dot.diff") have another source among equal-weight edges into the same node (jeprof's hash-order choice), the rest identical"
  else
    echo "DOT check FAILED: heapproxy's graph differs from jeprof's:"
    head -40 "$tmp/dot.diff"
    return 1
  fi
}

status=0
for p in "$prof" "$dir/sparse.heap"; do
  bench "$p" || status=1
  echo
done
exit $status
