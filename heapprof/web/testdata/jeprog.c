/* jeprog: allocates through jemalloc along known call stacks and keeps
 * everything, then writes a heap_v2 profile to argv[1] (mallctl
 * "prof.dump"). Run with MALLOC_CONF=prof:true,prof_active:true. The web
 * view's test renders the dump through heapprof into pprof's UI. */
#include <stdio.h>
#include <stdlib.h>
#include <jemalloc/jemalloc.h>

void *keep[1 << 16]; /* global: the stores must not be optimised away */
int nkeep;

__attribute__((noinline)) void rowset_buffer_alloc(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = malloc(64 << 10);
}

__attribute__((noinline)) void column_reader_init(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = calloc(1, 8192);
}

__attribute__((noinline)) void scan_segment(void) {
  column_reader_init(400);
  rowset_buffer_alloc(60);
}

__attribute__((noinline)) void hash_join_build(void) {
  keep[nkeep++] = malloc(6 << 20);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  scan_segment();
  hash_join_build();
  const char *path = argv[1];
  if (mallctl("prof.dump", NULL, NULL, &path, sizeof path) != 0) {
    fprintf(stderr, "prof.dump failed\n");
    return 1;
  }
  return 0;
}
