// packs.cc: names with empty template argument packs, as libstdc++'s
// std::thread and std::tuple produce them. c++filt prints an empty pack in
// the middle of a list as nothing between two commas
// ("std::thread::thread<void (&)(), , void>(void (&)())") and drops empty
// packs at the end with their commas ("std::_Tuple_impl<1ul, int>").
// It also has an inheriting constructor (std::__uniq_ptr_data's, named
// after its base, __uniq_ptr_impl).
#include <memory>
#include <thread>
#include <tuple>

static void no_args() {}
static void one_arg(int) {}
static void two_args(int, const char *) {}

int main() {
  std::thread a(no_args);
  std::thread b(one_arg, 1);
  std::thread c(two_args, 2, "x");
  a.join();
  b.join();
  c.join();
  auto t = std::make_tuple();
  auto u = std::make_unique<std::tuple<int, long>>(1, 2L);
  (void)t;
  return std::get<0>(*u) - 1;
}
