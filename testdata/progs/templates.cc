// templates: namespaces, class templates, overloaded and templated
// functions that share a short name (jeprof renders those "name@addr"),
// a lambda and operator new[].
#include <cstring>
#include <memory>
#include <vector>
#include "dump.h"

namespace engine {
namespace mem {

template <typename T>
class Pool {
 public:
  __attribute__((noinline)) void grow(size_t n) {
    for (size_t i = 0; i < n; i++) blocks_.push_back(std::unique_ptr<T[]>(new T[256]));
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
};

}  // namespace mem

__attribute__((noinline)) void *work(int n) { return malloc(n * 1024); }
__attribute__((noinline)) void *work(double n) { return malloc((size_t)n * 2048); }

template <typename T>
__attribute__((noinline)) T *fill(size_t n) {
  T *p = new T[n];
  memset(p, 1, n * sizeof(T));
  return p;
}

}  // namespace engine

static void *keep[10000];
static int nkeep;

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  static engine::mem::Pool<int> ints;
  static engine::mem::Pool<double> doubles;
  ints.grow(300);
  doubles.grow(200);
  for (int i = 0; i < 200; i++) keep[nkeep++] = engine::work(i % 40);
  for (int i = 0; i < 200; i++) keep[nkeep++] = engine::work(1.5 * (i % 40));
  for (int i = 0; i < 100; i++) keep[nkeep++] = engine::fill<int>(3000);
  for (int i = 0; i < 100; i++) keep[nkeep++] = engine::fill<long>(2000);
  auto lambda = [](int n) { return new char[n]; };
  for (int i = 0; i < 300; i++) keep[nkeep++] = lambda(5000);
  dump_profile(argv[1]);
  return 0;
}
