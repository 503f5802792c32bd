#!/usr/bin/env bash
# Heap-profile benchmark: `jeprof --dot BIN PROF` against `heapproxy dot BIN
# PROF` on the generated programs of gen.sh, one shape of program each, cold
# (a new process each run, with /usr/bin/time for wall time and peak RSS)
# and warm (symbench: the second Parse + Symbolize + WriteDOT in one
# process, with the symbolizer's cache). Prints a markdown table per shape,
# checks that both DOT outputs have the same node lines and the same edge
# lines (in any order), and ends with a summary of every shape against the
# targets (60x jeprof's wall time, 1/4 of the peak RSS of jeprof's largest
# process).
#
#   bash bench/heapprof/run.sh            # make bench-heapprof
#   SHAPES="o2 so" RUNS=5 bash bench/heapprof/run.sh
#
# Environment:
#   SHAPES     the shapes to measure (default: all, in this order):
#                o2         issue 4's example: 180 files at -O2, a 166 MB binary,
#                           41,601 stacks over 7,671 PCs
#                o2-sparse  o2's binary with every 10th stack of its profile
#                o1-60      a maintainer's: 60 files at -O1 (166 MB, ~40,000
#                           stacks over ~8,000 PCs)
#                o2-12cu    fewer, bigger compilation units: 12 files at -O2
#                so         o2's code in a shared library (libbig.so), main
#                           in the executable
#                server     a server's shape: PIE with -z now, 4 worker threads,
#                           the executed code spread over the whole program
#   BENCH_DIR  where the programs are built, one directory per shape (default
#              ${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench); each takes
#              2-6 minutes on 2 cores the first time (gen.sh)
#   RUNS       cold runs per tool and shape (default 3)
#   HP_RUNS    cold heapproxy dot runs per jeprof run (default 3)
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/heapproxy-bench}
runs=${RUNS:-3}
hp_runs=${HP_RUNS:-3}
shapes=${SHAPES:-o2 o2-sparse o1-60 o2-12cu so server}
for tool in jeprof g++ /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 1; }
done

# gen_args SHAPE: gen.sh's arguments for a shape's program.
gen_args() {
  case $1 in
  o2 | o2-sparse) echo "180 50 32 8 -O2 exe" ;;
  o1-60) echo "60 240 6 8 -O1 exe" ;;
  o2-12cu) echo "12 750 2 8 -O2 exe" ;;
  so) echo "180 50 32 8 -O2 so" ;;
  server) echo "180 50 32 8 -O2 server" ;;
  *)
    echo "run.sh: unknown shape $1 (shapes: o2 o2-sparse o1-60 o2-12cu so server)" >&2
    return 1
    ;;
  esac
}

# program SHAPE: builds the shape's program when missing or built with
# other arguments (gen.sh records them in big.args) and prints its
# directory.
program() {
  local dir=$root/${1%-sparse} args
  args=$(gen_args "$1")
  if [ ! -s "$dir/big" ] || [ ! -s "$dir/big.heap" ] || [ "$(cat "$dir/big.args" 2>/dev/null)" != "$args" ]; then
    echo "building the $1 program into $dir (2-6 minutes)" >&2
    # shellcheck disable=SC2086
    sh "$repo/bench/heapprof/gen.sh" "$dir" $args >&2
  fi
  # jeprof finds the program's mappings only under the paths the profile
  # recorded; a moved or copied program is profiled again where it is.
  if ! grep -q " $(realpath "$dir/big")\$" "$dir/big.heap"; then
    echo "profiling $dir/big again: its profile names another path" >&2
    rm -f "$dir"/big.*.heap
    MALLOC_CONF=prof:true,lg_prof_sample:0,prof_final:true,prof_prefix:"$dir/big" "$dir/big"
    local heaps=("$dir"/big.*.heap)
    mv "${heaps[0]}" "$dir/big.heap"
  fi
  echo "$dir"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# heapproxy as make build makes it: with heapproxy-jeprof beside it, which
# heapproxy dot hands itself to (cmd/heapproxy/internal/helper).
make -s -C "$repo" build BIN="$tmp/linked" >/dev/null
(cd "$repo" && go build -o "$tmp/symbench" ./bench/heapprof/symbench && go build -o "$tmp/treerss" ./bench/heapprof/treerss)
# heapproxy is measured as installed (copied, as an install step, a package or
# a deploy writes it), not as the linker left it: Go's linker writes its
# output through a memory map, and until those page-cache pages are evicted
# and read back, running the file maps about 10 MB more of it per process
# (server shape, session 8: 72 against 62-63 MB of peak RSS for the same
# bytes; the same after posix_fadvise(DONTNEED) and a first run).
cp "$tmp/linked/heapproxy" "$tmp/linked/heapproxy-jeprof" "$tmp/"

# timed NAME OUT CMD...: runs CMD with stdout to OUT and appends
# "wall_seconds peak_rss_kb" to $tmp/NAME.times. The wall is bash's clock
# around the run, to the microsecond: /usr/bin/time's %e has 10 ms steps,
# 8 % of a 0.13 s run (a 60x target on an 8 s jeprof is 0.133 s).
timed() {
  local name=$1 out=$2 t0 t1
  shift 2
  t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$tmp/time.1" "$@" >"$out" 2>"$tmp/$name.err" || {
    echo "run.sh: $* failed:" >&2
    cat "$tmp/$name.err" >&2
    exit 1
  }
  t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $(tail -1 "$tmp/time.1")" >>"$tmp/$name.times"
}

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

# median FILE COLUMN; maxcol FILE COLUMN
median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
maxcol() { sort -g -k"$2","$2" "$1" | tail -1 | awk -v c="$2" '{ print $c }'; }

# bench SHAPE BIN PROF: the runs, the table and the DOT check for one shape;
# appends its line to $tmp/summary.
bench() {
  local name=$1 bin=$2 prof=$3
  for _ in $(seq "$runs"); do
    timed "$name.jeprof" "$tmp/jeprof.dot" jeprof --dot "$bin" "$prof"
    # heapproxy's runs are short: HP_RUNS of them per jeprof run.
    for _ in $(seq "$hp_runs"); do
      timed "$name.heapproxy" "$tmp/heapproxy.dot" "$tmp/heapproxy" dot "$bin" "$prof"
    done
    # The same pipeline in a process of its own, without heapproxy's
    # command line: parse, symbolize and render one after the other.
    timed "$name.pipeline" /dev/null "$tmp/symbench" -jeprof=false -warm=false -dot "$bin" "$prof"
  done
  # Memory of the whole process tree (jeprof runs nm and addr2line beside
  # Perl), sampled every millisecond in runs of their own.
  "$tmp/treerss" -o "$tmp/$name.jeprof.tree" jeprof --dot "$bin" "$prof" >/dev/null 2>&1
  "$tmp/treerss" -o "$tmp/$name.heapproxy.tree" "$tmp/heapproxy" dot "$bin" "$prof" >/dev/null
  # What heapproxy holds before it reads anything: the runtime and the
  # pages of its own binary that package initialization touches.
  /usr/bin/time -f '%M' -o "$tmp/startup.rss" "$tmp/heapproxy" dot -h >/dev/null 2>&1 || true
  for _ in $(seq "$runs"); do
    "$tmp/symbench" -jeprof=false -dot -warmruns 3 "$bin" "$prof" | awk '$1 == "RESULT" && $2 == "warm"' >>"$tmp/$name.warm.txt"
  done

  field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$tmp/$name.warm.txt" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  local je_wall je_rss hp_wall hp_rss pl_wall pl_rss je_tree je_anon hp_tree hp_anon startup_rss warm_total warm_sym pcs stacks check
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
  stacks=$(grep -c '^@' "$prof")
  mb() { awk -v s="$(stat -c %s "$1")" 'BEGIN { printf (s < 1e7 ? "%.1f MB" : "%.0f MB"), s / 1e6 }'; }
  local size
  size=$(mb "$bin")
  if [ -e "$(dirname "$bin")/libbig.so" ]; then
    size="$size + $(mb "$(dirname "$bin")/libbig.so") libbig.so"
  fi
  echo "### $name: $size, $stacks stacks, $pcs distinct PCs; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| | wall (median; jeprof and the pipeline of $runs runs, heapproxy dot of $((runs * hp_runs))) | peak RSS (max) | jeprof / heapproxy |"
  echo "|---|---|---|---|"
  awk -v w="$je_wall" -v r="$je_rss" 'BEGIN { printf "| jeprof --dot (cold) | %.2f s | %.0f MB | |\n", w, r / 1024 }'
  awk -v w="$hp_wall" -v r="$hp_rss" -v jw="$je_wall" -v jr="$je_rss" \
    'BEGIN { printf "| heapproxy dot (cold) | %.3f s | %.0f MB | %.1fx time, %.2f of the memory |\n", w, r / 1024, jw / w, r / jr }'
  awk -v w="$pl_wall" -v r="$pl_rss" -v jw="$je_wall" -v jr="$je_rss" \
    'BEGIN { printf "| the pipeline one stage after the other (symbench -dot -warm=false, cold) | %.3f s | %.0f MB | %.1fx time, %.2f of the memory |\n", w, r / 1024, jw / w, r / jr }'
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
  awk -v r="$startup_rss" -v jr="$je_tree" \
    'BEGIN { printf "| heapproxy start-up alone (heapproxy dot -h: no input) | %.0f MB (%.2f of jeprof) | |\n", r / 1024, r / jr }'
  echo

  canon "$tmp/jeprof.dot" >"$tmp/jeprof.canon"
  canon "$tmp/heapproxy.dot" >"$tmp/heapproxy.canon"
  DROP_SOURCE=1 canon "$tmp/jeprof.dot" >"$tmp/jeprof.canon2"
  DROP_SOURCE=1 canon "$tmp/heapproxy.dot" >"$tmp/heapproxy.canon2"
  if diff "$tmp/jeprof.canon" "$tmp/heapproxy.canon" >"$tmp/dot.diff"; then
    check=same
    echo "DOT check: $(grep -c '^node ' "$tmp/jeprof.canon") nodes and $(grep -c '^edge ' "$tmp/jeprof.canon") edges identical to jeprof's"
  elif diff "$tmp/jeprof.canon2" "$tmp/heapproxy.canon2" >/dev/null; then
    check="same (hash order)"
    echo "DOT check: $(grep -c '^node ' "$tmp/jeprof.canon") nodes identical to jeprof's; of $(grep -c '^edge ' "$tmp/jeprof.canon") edges, $(grep -c '^<' "$tmp/dot.diff") have another source among equal-weight edges into the same node (jeprof's hash-order choice), the rest identical"
  else
    check=DIFFERENT
    echo "DOT check FAILED: heapproxy's graph differs from jeprof's:"
    head -40 "$tmp/dot.diff"
  fi
  awk -v n="$name" -v s="$size" -v st="$stacks" -v pcs="$pcs" -v jw="$je_wall" -v hw="$hp_wall" -v jr="$je_rss" -v hr="$hp_rss" -v c="$check" \
    'BEGIN { t = jw / hw; m = hr / jr
      printf "| %s | %s, %d stacks, %d PCs | %.2f s | %.3f s | **%.0fx**%s | %.0f MB | %.0f MB | **%.2f**%s | %s |\n",
        n, s, st, pcs, jw, hw, t, (t >= 60 ? "" : " (below 60x)"), jr / 1024, hr / 1024, m, (m <= 0.25 ? "" : " (above 1/4)"), c }' >>"$tmp/summary"
  [ "$check" != DIFFERENT ]
}

status=0
for shape in $shapes; do
  gen_args "$shape" >/dev/null || exit 2
done
for shape in $shapes; do
  dir=$(program "$shape")
  prof=$dir/big.heap
  if [ "$shape" = o2-sparse ]; then
    # A sparser profile of the same program: every 10th stack (fewer PCs in
    # the same binary).
    if [ ! -s "$dir/sparse.heap" ] || [ "$prof" -nt "$dir/sparse.heap" ]; then
      awk '/^MAPPED_LIBRARIES:/ { maps = 1 } maps || !seen { if (/^@/) seen = 1; else { print; next } }
           /^@/ { keep = (n++ % 10 == 0) } keep && !maps { print }' "$prof" >"$dir/sparse.heap"
    fi
    prof=$dir/sparse.heap
  fi
  bench "$shape" "$(realpath "$dir/big")" "$prof" || status=1
  echo
done
echo "### Summary: cold, a new process each run (medians of $runs jeprof and $((runs * hp_runs)) heapproxy runs); jeprof's memory is its largest process (addr2line)"
echo
echo "| shape | program and profile | jeprof --dot | heapproxy dot | jeprof / heapproxy (target >= 60x) | jeprof peak RSS | heapproxy peak RSS | heapproxy / jeprof (target <= 0.25) | DOT check |"
echo "|---|---|---|---|---|---|---|---|---|"
cat "$tmp/summary"
exit $status
