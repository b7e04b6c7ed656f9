// pairs K N — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// K independent ping-pong pairs (as in pingpong) play N round trips each,
// all at once. Messages counted: 2*K*N. Verified: every pinger counted N.
#include "common.hpp"

using namespace caf;

using ping_atom = atom_constant<atom("ping")>;
using pong_atom = atom_constant<atom("pong")>;
using go_atom = atom_constant<atom("go")>;
using done_atom = atom_constant<atom("done")>;

behavior ponger(event_based_actor*) {
  return {[](ping_atom) { return pong_atom::value; }};
}

struct pinger_state {
  int64_t pongs = 0;
};

behavior pinger(stateful_actor<pinger_state>* self, actor pong, int64_t n,
                actor reporter) {
  return {
    [=](go_atom) { self->send(pong, ping_atom::value); },
    [=](pong_atom) {
      if (++self->state.pongs < n) {
        self->send(pong, ping_atom::value);
        return;
      }
      self->send(reporter, done_atom::value, self->state.pongs);
      self->quit();
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 2, "K N");
  const int64_t k = a[0], n = a[1];
  return peer::run("pairs", a, [&](actor_system& sys, scoped_actor& self) {
    std::vector<actor> pongers, pingers;
    pongers.reserve(k);
    pingers.reserve(k);
    for (int64_t i = 0; i < k; ++i) {
      pongers.push_back(sys.spawn(ponger));
      pingers.push_back(sys.spawn(pinger, pongers.back(), n, actor{self}));
    }
    int64_t good = 0, bad = 0;
    auto t0 = peer::clock_type::now();
    for (auto& x : pingers)
      anon_send(x, go_atom::value);
    for (int64_t i = 0; i < k; ++i)
      self->receive([&](done_atom, int64_t c) { ++(c == n ? good : bad); });
    peer::outcome o{peer::seconds_since(t0), 2.0 * static_cast<double>(k * n)};
    for (auto& x : pongers)
      anon_send_exit(x, exit_reason::user_shutdown);
    if (good != k || bad != 0)
      o.wrong = peer::str(good, " of ", k, " pingers counted ", n);
    return o;
  });
}
