// spawn N — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// A spawner actor spawns N actors and sends each one message (its number,
// 1..N); each answers the spawner with it and quits. Counted: N actors.
// Verified: N answers whose sum is N(N+1)/2.
#include "common.hpp"

using namespace caf;

using launch_atom = atom_constant<atom("launch")>;
using work_atom = atom_constant<atom("work")>;
using done_atom = atom_constant<atom("done")>;
using result_atom = atom_constant<atom("result")>;

behavior child(event_based_actor* self) {
  return {
    [=](work_atom, const actor& to, int64_t x) {
      self->send(to, done_atom::value, x);
      self->quit();
    },
  };
}

struct spawner_state {
  int64_t done = 0;
  int64_t sum = 0;
};

behavior spawner(stateful_actor<spawner_state>* self, int64_t n, actor main) {
  return {
    [=](launch_atom) {
      for (int64_t i = 1; i <= n; ++i)
        self->send(self->spawn(child), work_atom::value, actor{self}, i);
    },
    [=](done_atom, int64_t x) {
      auto& st = self->state;
      ++st.done;
      st.sum += x;
      if (st.done == n) {
        self->send(main, result_atom::value, st.done, st.sum);
        self->quit();
      }
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 1, "N");
  const int64_t n = a[0];
  return peer::run("spawn", a, [&](actor_system& sys, scoped_actor& self) {
    int64_t done = 0, sum = 0;
    auto t0 = peer::clock_type::now();
    auto s = sys.spawn(spawner, n, actor{self});
    anon_send(s, launch_atom::value);
    self->receive([&](result_atom, int64_t d, int64_t x) {
      done = d;
      sum = x;
    });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(n)};
    if (done != n || sum != n * (n + 1) / 2)
      o.wrong = peer::str(done, " children answered (want ", n, "), sum ", sum,
                          " (want ", n * (n + 1) / 2, ")");
    return o;
  });
}
