// pingpong N — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// Two event-based actors; the pinger sends `ping`, the ponger answers `pong`
// (by returning it from its handler, CAF's reply idiom), N round trips.
// Messages counted: 2N. Verified: the pinger counted N pongs.
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
  auto a = peer::args(argc, argv, 1, "N");
  const int64_t n = a[0];
  return peer::run("pingpong", a, [&](actor_system& sys, scoped_actor& self) {
    auto pong = sys.spawn(ponger);
    auto ping = sys.spawn(pinger, pong, n, actor{self});
    int64_t counted = -1;
    auto t0 = peer::clock_type::now();
    anon_send(ping, go_atom::value);
    self->receive([&](done_atom, int64_t c) { counted = c; });
    peer::outcome o{peer::seconds_since(t0), 2.0 * static_cast<double>(n)};
    anon_send_exit(pong, exit_reason::user_shutdown);
    if (counted != n)
      o.wrong = peer::str("pinger counted ", counted, " pongs, expected ", n);
    return o;
  });
}
