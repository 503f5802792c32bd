/* deep: direct and mutual recursion, allocating at several depths, so
 * stacks are long, repeat function names and produce self-edges. */
#include "dump.h"

static void *keep[1 << 16];
static int nkeep;

__attribute__((noinline)) void leaf_alloc(int depth) {
  for (int i = 0; i < 20; i++) keep[nkeep++] = malloc(512 + depth * 64);
}

__attribute__((noinline)) void recurse(int depth) {
  if (depth % 10 == 0) leaf_alloc(depth);
  if (depth < 60) recurse(depth + 1);
}

void ping(int n);
__attribute__((noinline)) void pong(int n) {
  keep[nkeep++] = malloc(4096);
  if (n > 0) ping(n - 1);
}
__attribute__((noinline)) void ping(int n) {
  keep[nkeep++] = malloc(1024 * (n + 1));
  if (n > 0) pong(n - 1);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  for (int r = 0; r < 20; r++) recurse(0);
  for (int r = 0; r < 50; r++) ping(30);
  dump_profile(argv[1]);
  return 0;
}
