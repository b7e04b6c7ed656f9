// ring R T — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// R event-based actors in a ring; one token (an integer) is passed T times,
// each hop decrementing it; the actor that receives 0 reports.
// Messages counted: T. Verified: the reporter is actor T mod R (the token
// started at actor 0), and afterwards (not timed) the actors' receive
// counters sum to T + 1 (T hops plus the starting send).
#include "common.hpp"

using namespace caf;

using next_atom = atom_constant<atom("next")>;
using done_atom = atom_constant<atom("done")>;
using count_atom = atom_constant<atom("count")>;

struct node_state {
  actor next;
  int64_t received = 0;
};

behavior node(stateful_actor<node_state>* self, int64_t index,
              actor reporter) {
  return {
    [=](next_atom, const actor& next) { self->state.next = next; },
    [=](int64_t token) {
      ++self->state.received;
      if (token == 0)
        self->send(reporter, done_atom::value, index);
      else
        self->send(self->state.next, token - 1);
    },
    [=](count_atom) { return self->state.received; },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 2, "R T");
  const int64_t r = a[0], t = a[1];
  return peer::run("ring", a, [&](actor_system& sys, scoped_actor& self) {
    std::vector<actor> ring;
    ring.reserve(r);
    for (int64_t i = 0; i < r; ++i)
      ring.push_back(sys.spawn(node, i, actor{self}));
    // Link the ring and wait until every actor has its successor: setup is
    // not timed.
    for (int64_t i = 0; i < r; ++i)
      self->request(ring[i], infinite, next_atom::value, ring[(i + 1) % r])
        .receive([] {}, [&](error& e) {
          peer::fail("ring", "linking the ring: " + to_string(e));
        });
    int64_t reporter_index = -1, received = 0;
    auto t0 = peer::clock_type::now();
    anon_send(ring[0], t);
    self->receive([&](done_atom, int64_t idx) { reporter_index = idx; });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(t)};
    for (auto& x : ring)
      self->request(x, infinite, count_atom::value)
        .receive([&](int64_t c) { received += c; },
                 [&](error&) { received = -1; });
    for (auto& x : ring)
      anon_send_exit(x, exit_reason::user_shutdown);
    if (reporter_index != t % r)
      o.wrong = peer::str("actor ", reporter_index, " reported, expected ",
                          t % r);
    else if (received != t + 1)
      o.wrong = peer::str(received, " receives, expected ", t + 1);
    return o;
  });
}
