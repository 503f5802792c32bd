/* leak: allocates along a few known call stacks, some of them sharing
 * callers, keeps everything, then writes a jemalloc heap_v2 profile to
 * argv[1] with mallctl("prof.dump"). argv[2], if given, is how many times
 * query() runs (the leak grows with it). Run with
 * MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:N. */
#include <stdio.h>
#include <stdlib.h>
#include <jemalloc/jemalloc.h>

static void *keep[1 << 16];
static int nkeep;

__attribute__((noinline)) void segment_load(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = malloc(4096 + i % 512);
}

__attribute__((noinline)) void tablet_schema_new(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = calloc(1, 300);
}

__attribute__((noinline)) void agg_hash_grow(void) {
  void *p = malloc(64);
  for (size_t n = 128; n <= (size_t)8 << 20; n *= 2) p = realloc(p, n);
  keep[nkeep++] = p;
}

__attribute__((noinline)) void open_tablet(void) {
  tablet_schema_new(2000);
  segment_load(500);
}

__attribute__((noinline)) void query(void) {
  agg_hash_grow();
  segment_load(300);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int rounds = argc > 2 ? atoi(argv[2]) : 1;
  open_tablet();
  for (int i = 0; i < rounds; i++) query();
  tablet_schema_new(500);
  const char *path = argv[1];
  if (mallctl("prof.dump", NULL, NULL, &path, sizeof path) != 0) {
    fprintf(stderr, "prof.dump failed\n");
    return 1;
  }
  return 0;
}
