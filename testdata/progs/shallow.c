/* shallow: a few direct malloc/calloc/realloc callers one or two frames
 * below main. */
#include <string.h>
#include "dump.h"

static void *keep[4096];
static int nkeep;

__attribute__((noinline)) void alloc_small(void) {
  for (int i = 0; i < 1000; i++) keep[nkeep++] = malloc(64 + i % 32);
}

__attribute__((noinline)) void alloc_big(void) {
  for (int i = 0; i < 40; i++) keep[nkeep++] = calloc(1, 256 * 1024);
}

__attribute__((noinline)) void alloc_grow(void) {
  void *p = malloc(16);
  for (int n = 32; n <= 4 << 20; n *= 2) p = realloc(p, n);
  keep[nkeep++] = p;
}

__attribute__((noinline)) void both(void) {
  alloc_small();
  alloc_grow();
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  alloc_big();
  both();
  dump_profile(argv[1]);
  return 0;
}
