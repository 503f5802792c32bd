// A test program for package symbolize: namespaces, templates, overloads,
// inlining and a shared library, allocating along known stacks.
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" void *lib_alloc(size_t n);
extern "C" void *lib_alloc_deep(size_t n, int depth);

namespace outer {
namespace inner {

template <typename T>
struct Pool {
  std::vector<T *> items;
  __attribute__((noinline)) void grow(size_t n) {
    for (size_t i = 0; i < n; i++) items.push_back(new T[64]);
  }
  inline void add(size_t n) { grow(n); }
};

static inline void *helper(size_t n) { return malloc(n); }

__attribute__((noinline)) void *make(int n) { return helper(n * 16); }
__attribute__((noinline)) void *make(double d) { return helper(size_t(d) * 32); }

}  // namespace inner

__attribute__((noinline)) int recurse(int depth, std::vector<void *> &keep) {
  if (depth == 0) {
    keep.push_back(inner::make(1000));
    keep.push_back(inner::make(2000.0));
    return 1;
  }
  return recurse(depth - 1, keep) + 1;
}

}  // namespace outer

static std::map<std::string, std::string> table;

__attribute__((noinline)) static void fill_map() {
  for (int i = 0; i < 2000; i++) table[std::to_string(i) + std::string(40, 'x')] = std::string(100, 'y');
}

int main() {
  std::vector<void *> keep;
  outer::inner::Pool<long> pl;
  pl.add(300);
  outer::inner::Pool<char> pc;
  pc.add(200);
  for (int d = 1; d < 12; d++) outer::recurse(d, keep);
  auto lambda = [&](int n) { keep.push_back(calloc(n, 8)); };
  for (int i = 0; i < 200; i++) lambda(512 + i);
  fill_map();
  for (int i = 0; i < 100; i++) keep.push_back(lib_alloc(4096));
  for (int i = 0; i < 50; i++) keep.push_back(lib_alloc_deep(8192, 5));
  return keep.size() > 1 ? 0 : 1;
}
