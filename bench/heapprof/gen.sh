#!/bin/sh
# Generates and builds a large -g C++ program for the symbolizer benchmark,
# runs it under jemalloc's heap profiler and leaves in OUT:
#   big (the binary), big.heap (the profile).
# Usage: gen.sh OUT [FILES] [FUNCS_PER_FILE]
# The defaults (100 files x 50 functions, templates inlined into deep call
# chains) give a 92 MB binary in about 5 minutes on 2 cores.
set -eu
out=$1
files=${2:-100}
funcs=${3:-50}
mkdir -p "$out/src"
cd "$out/src"
i=0
while [ "$i" -lt "$files" ]; do
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
  } > "f$i.cc"
  i=$((i + 1))
done
{
  echo '#include <vector>'
  i=0
  while [ "$i" -lt "$files" ]; do
    echo "namespace ns$i { void run(std::vector<void *> &keep, int n); }"
    i=$((i + 1))
  done
  echo 'template <int D> __attribute__((noinline)) void deep(std::vector<void *> &keep, int n);'
  echo 'static void dispatch(std::vector<void *> &keep, int n) {'
  echo '  switch (n % '"$files"') {'
  i=0
  while [ "$i" -lt "$files" ]; do
    echo "  case $i: ns$i::run(keep, n); break;"
    i=$((i + 1))
  done
  echo '  } }'
  echo 'template <int D> __attribute__((noinline)) void deep(std::vector<void *> &keep, int n) { if constexpr (D == 0) dispatch(keep, n); else deep<D - 1>(keep, n); }'
  echo 'int main() { std::vector<void *> keep; for (int n = 0; n < 4 * '"$files"'; n++) { switch (n % 4) { case 0: deep<3>(keep, n); break; case 1: deep<6>(keep, n); break; case 2: deep<9>(keep, n); break; default: deep<12>(keep, n); } } return keep.empty(); }'
} > main.cc
objs=""
for f in f*.cc main.cc; do
  o="${f%.cc}.o"
  if [ ! -f "$o" ]; then
    g++ -g -O2 -c -o "$o" "$f"
  fi
  objs="$objs $o"
done
g++ -g -O2 -o ../big $objs -ljemalloc
cd ..
rm -f big.*.heap
MALLOC_CONF=prof:true,lg_prof_sample:0,prof_final:true,prof_prefix:"$out/big" ./big
mv "$(ls "$out"/big.*.heap | head -1)" big.heap
ls -la big big.heap
