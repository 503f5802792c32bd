/* symlinked: a program run through a symbolic link, as Debian installs
 * /usr/bin/redis-server -> redis-check-rdb. The kernel names the target in
 * /proc/self/maps, so the profile's mappings do not name the path the
 * program was started (and is symbolized) by. */
#include "dump.h"

/* Global, so that -O2 cannot drop the allocations as dead stores. */
void *keep[2048];
int nkeep;

__attribute__((noinline)) void symlinked_alloc(int n) {
  for (int i = 0; i < n; i++) keep[nkeep++] = malloc(4096 + i);
}

__attribute__((noinline)) void symlinked_caller(void) { symlinked_alloc(1000); }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  symlinked_caller();
  symlinked_alloc(500);
  dump_profile(argv[1]);
  return 0;
}
