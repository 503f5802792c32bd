/* growth: dumps argv[1] after a first phase and argv[2] after a second
 * one that frees part of the first phase's data and allocates along new
 * stacks, the input of a jeprof --base comparison. */
#include "dump.h"

static void *keep[100000];
static int nkeep;

__attribute__((noinline)) void cache_fill(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = malloc(2048);
}

__attribute__((noinline)) void cache_evict(int n) {
  for (int i = 0; i < n && nkeep > 0; i++) free(keep[--nkeep]);
}

__attribute__((noinline)) void session_open(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = calloc(1, 8192);
}

__attribute__((noinline)) void phase1(void) { cache_fill(4000); }
__attribute__((noinline)) void phase2(void) {
  cache_evict(1500);
  session_open(600);
  cache_fill(300);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  phase1();
  dump_profile(argv[1]);
  phase2();
  dump_profile(argv[2]);
  return 0;
}
