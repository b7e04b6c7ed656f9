// inject A M — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// The main thread (no actor: anon_send) sends M messages to each of A
// workers, round-robin, X = 0 .. M-1; each worker checks X is its next
// number and adds X*X. Messages counted: A*M. Verified: every worker
// handled M, in order, and its sum is 0^2 + ... + (M-1)^2.
#include "common.hpp"

using namespace caf;

using done_atom = atom_constant<atom("done")>;

struct worker_state {
  int64_t next = 0;
  int64_t bad = 0;
  uint64_t acc = 0;
};

behavior worker(stateful_actor<worker_state>* self, int64_t id, int64_t m,
                actor reporter) {
  return {
    [=](int64_t x) {
      auto& st = self->state;
      if (x != st.next)
        ++st.bad;
      ++st.next;
      st.acc += static_cast<uint64_t>(x) * static_cast<uint64_t>(x);
      if (st.next == m) {
        self->send(reporter, done_atom::value, id, st.next, st.bad, st.acc);
        self->quit();
      }
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 2, "A M");
  const int64_t n = a[0], m = a[1];
  uint64_t want = 0;
  for (int64_t x = 0; x < m; ++x)
    want += static_cast<uint64_t>(x) * static_cast<uint64_t>(x);
  return peer::run("inject", a, [&](actor_system& sys, scoped_actor& self) {
    std::vector<actor> workers;
    workers.reserve(n);
    for (int64_t i = 0; i < n; ++i)
      workers.push_back(sys.spawn(worker, i, m, actor{self}));
    std::string wrong;
    auto t0 = peer::clock_type::now();
    for (int64_t x = 0; x < m; ++x)
      for (auto& w : workers)
        anon_send(w, x);
    for (int64_t i = 0; i < n; ++i)
      self->receive([&](done_atom, int64_t id, int64_t next, int64_t bad,
                        uint64_t acc) {
        if (next != m || bad != 0 || acc != want)
          wrong = peer::str("worker ", id, " handled ", next, ", ", bad,
                            " out of order, sum ", acc);
      });
    return peer::outcome{peer::seconds_since(t0), static_cast<double>(n * m),
                         wrong};
  });
}
