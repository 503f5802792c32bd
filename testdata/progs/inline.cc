// inline: built with -O2 -g so small helpers, std::vector growth and
// std::string construction are inlined into their callers; jeprof shows
// each inlined frame as its own "(inline)" node with dashed edges.
#include <map>
#include <string>
#include <vector>
#include "dump.h"

namespace store {

static inline std::vector<int> *make_column(int n) {
  auto *v = new std::vector<int>();
  for (int i = 0; i < n; i++) v->push_back(i);
  return v;
}

struct Table {
  std::vector<std::vector<int> *> columns;
  std::map<int, std::string> names;

  __attribute__((noinline)) void add_columns(int n, int rows) {
    for (int i = 0; i < n; i++) columns.push_back(make_column(rows));
  }
  __attribute__((noinline)) void add_names(int n) {
    for (int i = 0; i < n; i++) names[i] = std::string(200 + i % 50, 'x');
  }
};

}  // namespace store

static store::Table *tables[8];

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  for (int t = 0; t < 8; t++) {
    tables[t] = new store::Table();
    tables[t]->add_columns(50, 2000 + t * 100);
    tables[t]->add_names(500);
  }
  dump_profile(argv[1]);
  return 0;
}
