// Names of the shapes elfsym's demangleSimple reads (TestDemangleSimple):
// functions and methods in namespaces and classes, class templates with
// builtin and literal arguments, const methods, constructors and
// destructors, builtin parameters under pointer, reference and const;
// and a few it must leave to the full demangler.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace ns1 {
__attribute__((noinline)) int f311(int x) { return x * 3 + 1; }
__attribute__((noinline)) void none() { std::puts("none"); }
__attribute__((noinline)) long mix(char c, unsigned char uc, signed char sc, short s, unsigned short us,
                                   unsigned u, long l, unsigned long ul, long long ll, unsigned long long ull,
                                   bool b, wchar_t w, float f, double d, long double ld) {
  return c + uc + sc + s + us + u + l + ul + ll + ull + b + w + (long)f + (long)d + (long)ld;
}
__attribute__((noinline)) long ptrs(const char* s, char** argv, int& r, const int& cr, int&& rr, void* p,
                                    const void* cp, int* const* pc) {
  return s[0] + argv[0][0] + r + cr + rr + (p != nullptr) + (cp != nullptr) + (pc != nullptr);
}
__attribute__((noinline)) int varargs(int n, ...) {
  va_list ap;
  va_start(ap, n);
  int s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, int);
  va_end(ap);
  return s;
}
__int128 wide(__int128 a, unsigned __int128 b) { return a + (__int128)b; }

namespace inner {
struct Counter {
  __attribute__((noinline)) Counter(int start) : n(start) {}
  virtual ~Counter() { std::printf("%d\n", n); }
  __attribute__((noinline)) int get() const { return n; }
  __attribute__((noinline)) void add(int d) { n += d; }
  __attribute__((noinline)) void merge(const Counter& o) { n += o.n; }
  int n;
};
}  // namespace inner

template <class T, int N>
struct Box {
  T v[N > 0 ? N : 1];
  __attribute__((noinline)) void fill(int x) {
    for (auto& e : v) e = x;
  }
  __attribute__((noinline)) T sum() const {
    T s = 0;
    for (auto e : v) s += e;
    return s;
  }
};
template struct Box<long, 505>;
template struct Box<int, -3>;
template struct Box<char, 1>;

template <bool B, unsigned U, long L, unsigned long UL>
struct Flags {
  __attribute__((noinline)) static int value(int x) { return x + B + U + L + UL; }
};
template struct Flags<true, 7u, 9l, 11ul>;
template struct Flags<false, 0u, -2l, 0ul>;

// Class types as arguments, parameters and return types, and the
// substitutions (S_, S0_, ...) that name them again.
template <class T>
struct Wrap {
  T v;
  __attribute__((noinline)) T get() const { return v; }
};
template struct Wrap<Wrap<int> >;
template struct Wrap<inner::Counter*>;
__attribute__((noinline)) long merge(const inner::Counter& a, inner::Counter* b, const Box<int, -3>& c,
                                     Box<int, -3>* d) {
  return a.n + b->n + c.sum() + d->sum();
}
template <int K>
__attribute__((noinline)) inner::Counter* counter_at(inner::Counter* c) {
  return c + K;
}
template inner::Counter* counter_at<0>(inner::Counter*);

// Function templates whose return type is builtin: it is mangled first
// and printed before the name.
template <int K>
__attribute__((noinline)) void* step(int x) {
  return (void*)(long)(x + K);
}
template void* step<1>(int);
template <class T, bool B>
__attribute__((noinline)) long conv(int x) {
  return (long)(T)x + B;
}
template long conv<char, true>(int);
template <class T>
__attribute__((noinline)) unsigned long long wrap(T x) {
  return x;
}

// Left to the full demangler: a function template (its return type is
// mangled), a name in an anonymous namespace, a std:: parameter.
template <class T>
__attribute__((noinline)) T twice(T x) {
  return x + x;
}
template int twice<int>(int);
namespace {
__attribute__((noinline)) int hidden(int x) { return x - 1; }
}  // namespace
__attribute__((noinline)) int use_hidden(int x) { return hidden(x); }
}  // namespace ns1

__attribute__((noinline)) int global_fn(double d) { return (int)d; }

// A substitution that begins a nested name right after the class it
// names was printed: take(Outer, Outer::In) is _Z4take5OuterNS_2InE.
struct Outer {
  int x;
  struct In {
    int y;
  };
};
__attribute__((noinline)) int take(Outer o, Outer::In i) { return o.x + i.y; }

int main(int argc, char** argv) {
  int r = argc;
  ns1::inner::Counter* c = new ns1::inner::Counter(argc);
  c->add(2);
  c->merge(*c);
  ns1::Wrap<ns1::Wrap<int> > w{{argc}};
  ns1::Wrap<ns1::inner::Counter*> wc{c};
  ns1::Box<long, 505> b;
  b.fill(argc);
  ns1::Box<int, -3> b2;
  b2.fill(1);
  ns1::Box<char, 1> b3;
  b3.fill(2);
  long s = b.sum() + b2.sum() + b3.sum() + ns1::Flags<true, 7u, 9l, 11ul>::value(argc) +
           ns1::Flags<false, 0u, -2l, 0ul>::value(argc) + ns1::f311(argc) + ns1::varargs(2, 3, 4) +
           ns1::ptrs("x", argv, r, r, 5, argv, argv, nullptr) + ns1::twice(argc) + ns1::use_hidden(argc) +
           global_fn(2.5) + take(Outer{1}, Outer::In{2}) + w.get().get() + wc.get()->n + ns1::merge(*c, c, b2, &b2) + ns1::counter_at<0>(c)->n + (long)ns1::step<1>(argc) + ns1::conv<char, true>(argc) + (long)ns1::wrap(argc) + c->get() + (long)ns1::wide(argc, 2) +
           ns1::mix('a', 1, 2, 3, 4, 5, 6, 7, 8, 9, true, L'w', 1.5f, 2.5, 3.5L);
  ns1::none();
  delete c;
  return (int)(s & 1);
}
