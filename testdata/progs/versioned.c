/* versioned.c: symbol versions as `nm -D` prints them. Built twice with
 * versioned.map:
 *
 *   gcc -shared -fPIC -Wl,--version-script=versioned.map versioned.c
 *     VER_1, VER_2             the version definitions' own symbols: no suffix
 *     versioned_api@@VER_2     a default version (.symver with @@)
 *     versioned_api@VER_1      a hidden, older version (.symver with @)
 *     versioned_plain@@VER_1   a symbol the map puts in VER_1
 *
 *   gcc -DVERSIONED_MAIN -Wl,--version-script=versioned.map -Wl,-E versioned.c
 *     an executable that also copies glibc's stdin, stdout and stderr into
 *     its own .bss (copy relocations): defined symbols whose version comes
 *     from .gnu.version_r, printed stdin@GLIBC_2.2.5 (one @). */
#include <stdio.h>

__attribute__((noinline)) int versioned_api_v1(int x) { return x + 1; }
__attribute__((noinline)) int versioned_api_v2(int x) { return x + 2; }
__asm__(".symver versioned_api_v1, versioned_api@VER_1");
__asm__(".symver versioned_api_v2, versioned_api@@VER_2");

__attribute__((noinline)) int versioned_plain(int x) { return x * 3; }

#ifdef VERSIONED_MAIN
int main(void) {
  int c = fgetc(stdin);
  fprintf(stdout, "%d\n", versioned_api_v1(c) + versioned_api_v2(c) + versioned_plain(c));
  fflush(stderr);
  return 0;
}
#endif
