/* libshapes: a shared library the shlib program allocates through, so
 * profiles hold frames in a randomly based .so besides the PIE binary. */
#include <stdlib.h>

__attribute__((noinline)) static void *shape_buffer(int n) { return malloc(n); }

__attribute__((noinline)) void *shapes_make_circle(int r) { return shape_buffer(r * 100); }

__attribute__((noinline)) void *shapes_make_square(int s) {
  void *p = shape_buffer(s * 300);
  return p;
}
