/* shlib: main binary calling into libshapes.so (built by the test). */
#include "dump.h"

void *shapes_make_circle(int r);
void *shapes_make_square(int s);

static void *keep[100000];
static int nkeep;

__attribute__((noinline)) void draw(int n) {
  for (int i = 0; i < n; i++) {
    keep[nkeep++] = shapes_make_circle(i % 100);
    keep[nkeep++] = shapes_make_square(i % 70);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  draw(3000);
  keep[nkeep++] = malloc(3 << 20);
  dump_profile(argv[1]);
  return 0;
}
