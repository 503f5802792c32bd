#!/bin/sh
# Generates and builds a large -g C++ program for the heap-profile benchmark,
# runs it under jemalloc's heap profiler and leaves in OUT:
#   big (the binary), big.heap (the profile), big.args (the arguments);
#   with KIND so also libbig.so, which holds every generated function.
# Usage: gen.sh OUT [FILES] [FUNCS_PER_FILE] [EXECUTED_FILES] [DEPTHS] [OPT] [KIND]
#        gen.sh --args   (prints the default arguments, as OUT/big.args holds them)
# FILES x FUNCS_PER_FILE template-inlined allocation chains make the binary
# (the defaults, 180 x 50, give a 166 MB binary with 86 MB of .debug_info,
# like the 166 MB binary of issue 4); the functions of EXECUTED_FILES files
# run, each reached through DEPTHS call chains of different depth, so the
# profile has many deep stacks over few distinct PCs, as a server's does
# (defaults: 41,601 stacks over 7,671 PCs, 21 frames deep on average; issue
# 4's had 39,538 over 8,499). OPT is the optimization flag (-O2). KIND:
#   exe     one executable (PIE, Debian's default); the first EXECUTED_FILES
#           files run, from main;
#   so      the generated functions in libbig.so (-fPIC), main in big;
#   server  a server's shape: 4 worker threads (std::thread, so stacks start
#           in libc's clone3 and libstdc++), the executed files spread over
#           the whole program (every FILES/EXECUTED_FILES-th), linked -pie
#           with -z now as hardened servers are.
# Building takes ~4 minutes on 2 cores for the defaults; objects are reused.
set -eu
out=$1
files=${2:-180}
funcs=${3:-50}
executed=${4:-32}
depths=${5:-8}
opt=${6:--O2}
kind=${7:-exe}
if [ "$out" = --args ]; then
  echo "$files $funcs $executed $depths $opt $kind"
  exit 0
fi
case $kind in
exe | so | server) ;;
*)
  echo "gen.sh: KIND must be exe, so or server, not $kind" >&2
  exit 2
  ;;
esac
pic=
[ "$kind" = so ] && pic=-fPIC
mkdir -p "$out/src"
cd "$out/src"
# The generated files depend on FUNCS_PER_FILE, their objects on OPT and
# -fPIC: those of other values are not reused.
if [ "$(cat build.args 2>/dev/null)" != "$funcs $opt $pic" ]; then
  rm -f ./*.cc ./*.o
  echo "$funcs $opt $pic" >build.args
fi
i=0
while [ "$i" -lt "$files" ]; do
  f="f$i.cc"
  if [ ! -f "$f" ]; then
    {
      echo '#include <vector>'
      echo '#include <map>'
      echo '#include <string>'
      echo '#include <cstdlib>'
      echo "namespace ns$i {"
      echo 'template <typename T, int N> struct Box { std::vector<T> v; std::map<int, std::string> m;'
      echo '  __attribute__((noinline)) void fill(int n) { for (int k = 0; k < n; k++) { v.push_back(T(k)); m[k * N] = std::string(16 + N % 7, char(65 + N % 26)); } } };'
      j=0
      while [ "$j" -lt "$funcs" ]; do
        echo "template <int D> inline void *step${j}(int n) { if constexpr (D == 0) { Box<long, $j> *b = new Box<long, $j>; b->fill(n % 7 + 1); return b; } else { return step${j}<D - 1>(n + D); } }"
        echo "__attribute__((noinline)) void *f${j}(int n) { switch (n % 4) { case 0: return step${j}<1>(n); case 1: return step${j}<2>(n); case 2: return step${j}<3>(n); default: return malloc(64 + n); } }"
        j=$((j + 1))
      done
      echo "__attribute__((noinline)) void run(std::vector<void *> &keep, int n) {"
      j=0
      while [ "$j" -lt "$funcs" ]; do
        echo "  keep.push_back(f${j}(n + $j));"
        j=$((j + 1))
      done
      echo "}"
      echo "}"
    } > "$f"
  fi
  i=$((i + 1))
done
# The files that run: the first EXECUTED_FILES, or for server every
# stride-th, so the profile's PCs lie in units all over the program.
stride=1
if [ "$kind" = server ] && [ "$executed" -gt 0 ]; then
  stride=$((files / executed))
  [ "$stride" -ge 1 ] || stride=1
fi
{
  echo '#include <vector>'
  [ "$kind" = server ] && echo '#include <thread>'
  i=0
  while [ "$i" -lt "$files" ]; do
    echo "namespace ns$i { void run(std::vector<void *> &keep, int n); }"
    i=$((i + 1))
  done
  echo '__attribute__((noinline)) void dispatch(std::vector<void *> &keep, int n) {'
  echo '  switch (n) {'
  i=0
  while [ "$i" -lt "$files" ]; do
    echo "  case $i: ns$i::run(keep, n); break;"
    i=$((i + 1))
  done
  echo '  } }'
  # The empty asm after each call keeps it from becoming a tail call, so every
  # level of the chain is a frame of its own in the profile's stacks.
  echo 'template <int D> __attribute__((noinline)) void deep(std::vector<void *> &keep, int n) { if constexpr (D == 0) dispatch(keep, n); else deep<D - 1>(keep, n); asm volatile("" ::: "memory"); }'
  echo '__attribute__((noinline)) void at_depth(int d, std::vector<void *> &keep, int n) {'
  echo '  switch (d) {'
  d=0
  while [ "$d" -lt "$depths" ]; do
    echo "  case $d: deep<$((d * 2))>(keep, n); break;"
    d=$((d + 1))
  done
  echo '  } asm volatile("" ::: "memory"); }'
  if [ "$kind" = server ]; then
    # Each worker serves every 4th executed file, at every depth; what it
    # allocated stays live (leaked on purpose) until the final dump.
    echo "__attribute__((noinline)) void worker(int t) { std::vector<void *> *keep = new std::vector<void *>; for (int d = 0; d < $depths; d++) for (int n = t; n < $executed; n += 4) at_depth(d, *keep, n * $stride); asm volatile(\"\" ::: \"memory\"); }"
    echo 'int main() { std::vector<std::thread> ts; for (int t = 0; t < 4; t++) ts.emplace_back(worker, t); for (auto &t : ts) t.join(); return 0; }'
  else
    echo "int main() { std::vector<void *> keep; for (int d = 0; d < $depths; d++) for (int n = 0; n < $executed; n++) at_depth(d, keep, n); return keep.empty(); }"
  fi
} > main.cc
# The compiler line is single-quoted: it is the inner shell's, given its arguments.
# shellcheck disable=SC2016
for f in f*.cc main.cc; do
  o="${f%.cc}.o"
  # shellcheck disable=SC3013 # dash, which runs this, has -nt
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ]; then
    echo "$f"
  fi
done | xargs -r -P "$(nproc)" -I{} sh -c 'g++ -g "$1" $2 -c -o "$(basename "$3" .cc).o" "$3"' sh "$opt" "$pic" {}
# The objects' names, one word each (f0.o f1.o ...), split where used.
objs=$(i=0; while [ "$i" -lt "$files" ]; do echo "f$i.o"; i=$((i + 1)); done)
case $kind in
exe)
  # shellcheck disable=SC2086 # $objs: one word per object
  g++ -g "$opt" -o ../big main.o $objs -ljemalloc
  ;;
so)
  # main.o is the only object of big; libbig.so is found next to it.
  # shellcheck disable=SC2086 # $objs: one word per object
  g++ -g "$opt" -shared -o ../libbig.so $objs
  # shellcheck disable=SC2016 # $ORIGIN is the dynamic linker's, not the shell's
  g++ -g "$opt" -o ../big main.o -L.. -lbig -Wl,-rpath,'$ORIGIN' -ljemalloc
  ;;
server)
  # shellcheck disable=SC2086 # $objs: one word per object
  g++ -g "$opt" -pie -Wl,-z,now -o ../big main.o $objs -ljemalloc -pthread
  ;;
esac
cd ..
rm -f big.*.heap
MALLOC_CONF=prof:true,lg_prof_sample:0,prof_final:true,prof_prefix:"$out/big" ./big
set -- "$out"/big.*.heap
mv "$1" big.heap
echo "$files $funcs $executed $depths $opt $kind" > big.args
ls -la big big.heap
