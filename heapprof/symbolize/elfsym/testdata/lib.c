/* Shared library for package symbolize's tests (C, so DWARF names are not
   linkage names). */
#include <stdlib.h>
#include <string.h>

static inline void *lib_inner(size_t n) {
  void *p = malloc(n);
  memset(p, 1, n);
  return p;
}

__attribute__((noinline)) static void *lib_static(size_t n) { return lib_inner(n + 1); }

void *lib_alloc(size_t n) { return lib_static(n); }

__attribute__((noinline)) void *lib_alloc_deep(size_t n, int depth) {
  if (depth <= 0) return lib_inner(n);
  return lib_alloc_deep(n, depth - 1);
}
