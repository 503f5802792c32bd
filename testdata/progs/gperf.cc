// gperf: gperftools heap profiles (tcmalloc's heap profiler, the "heap
// profile:" text format). Built with -O2 -g and linked with -ltcmalloc:
// std::vector and std::string code is inlined into its callers, so leaf
// PCs lie in inlined frames (jeprof looks the leaf up as is, only callers
// minus one). argv[1] is the HeapProfilerStart prefix; the program writes
// <prefix>.0001.heap before anything is freed (in-use equals allocated
// everywhere) and <prefix>.0002.heap after vectors grew and parts of the
// heap were freed.
#include <gperftools/heap-profiler.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

static std::vector<std::vector<long> *> g_big;
static std::vector<long> *g_fixed[32];
static std::string *g_names[2000];
static char *g_keep[64];

__attribute__((noinline)) static void fixed_columns(int rows) {
  for (int i = 0; i < 32; i++) g_fixed[i] = new std::vector<long>(rows + i);
}

__attribute__((noinline)) static void add_names(int n) {
  for (int i = 0; i < n; i++) g_names[i] = new std::string(300 + i % 40, 'n');
}

__attribute__((noinline)) static char *scratch(size_t n) {
  char *p = (char *)malloc(n);
  memset(p, 1, n);
  return p;
}

__attribute__((noinline)) static void grow_big(int n, int rows) {
  for (int i = 0; i < n; i++) {
    auto *v = new std::vector<long>();
    for (int j = 0; j < rows; j++) v->emplace_back(j);
    g_big.emplace_back(v);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  HeapProfilerStart(argv[1]);
  fixed_columns(4000);
  add_names(2000);
  for (int i = 0; i < 64; i++) g_keep[i] = scratch(4096 * (1 + i % 8));
  HeapProfilerDump("no frees");
  grow_big(40, 3000);
  for (int i = 0; i < 64; i += 2) free(g_keep[i]);
  for (int i = 0; i < 2000; i += 3) delete g_names[i];
  delete g_fixed[0];
  HeapProfilerDump("after frees");
  HeapProfilerStop();
  return 0;
}
