/* dump.h: write a jemalloc heap profile to the path given on the command
 * line. Shared by the test programs so each one only describes its
 * allocation shape. */
#ifndef HEAPPROXY_DUMP_H
#define HEAPPROXY_DUMP_H
#include <stdio.h>
#include <stdlib.h>
#include <jemalloc/jemalloc.h>

static inline void dump_profile(const char *path) {
  if (mallctl("prof.dump", NULL, NULL, (void *)&path, sizeof(path)) != 0) {
    fprintf(stderr, "prof.dump %s failed (run with MALLOC_CONF=prof:true)\n", path);
    exit(1);
  }
}
#endif
