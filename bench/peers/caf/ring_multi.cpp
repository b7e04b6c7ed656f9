// ring_multi R K T — CAF 0.17 peer of actorc's benchmark (bench/README.md).
// The ring of `ring`, with K tokens started at actors j*R/K (j < K), each
// making T/K hops (decremented per hop; the actor that receives 0 reports).
// Messages counted: T. Verified: K reports, each from the actor its token
// must end at, and afterwards (not timed) receive counters sum to T + K.
#include <algorithm>

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
  auto a = peer::args(argc, argv, 3, "R K T");
  const int64_t r = a[0], k = a[1], t = a[2];
  if (t % k != 0) {
    std::fprintf(stderr, "ring_multi: K must divide T\n");
    return 2;
  }
  const int64_t hops = t / k;
  return peer::run("ring_multi", a, [&](actor_system& sys, scoped_actor& self) {
    std::vector<actor> ring;
    ring.reserve(r);
    for (int64_t i = 0; i < r; ++i)
      ring.push_back(sys.spawn(node, i, actor{self}));
    // Link the ring and wait until every actor has its successor: setup is
    // not timed.
    for (int64_t i = 0; i < r; ++i)
      self->request(ring[i], infinite, next_atom::value, ring[(i + 1) % r])
        .receive([] {}, [&](error& e) {
          peer::fail("ring_multi", "linking the ring: " + to_string(e));
        });
    std::vector<int64_t> reporters, expected;
    int64_t received = 0;
    auto t0 = peer::clock_type::now();
    for (int64_t j = 0; j < k; ++j)
      anon_send(ring[j * r / k], hops);
    for (int64_t j = 0; j < k; ++j)
      self->receive([&](done_atom, int64_t idx) { reporters.push_back(idx); });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(t)};
    for (auto& x : ring)
      self->request(x, infinite, count_atom::value)
        .receive([&](int64_t c) { received += c; },
                 [&](error&) { received = -1; });
    for (auto& x : ring)
      anon_send_exit(x, exit_reason::user_shutdown);
    for (int64_t j = 0; j < k; ++j)
      expected.push_back((j * r / k + hops) % r);
    std::sort(expected.begin(), expected.end());
    std::sort(reporters.begin(), reporters.end());
    if (reporters != expected)
      o.wrong = "the tokens did not end where they must";
    else if (received != t + k)
      o.wrong = peer::str(received, " receives, expected ", t + k);
    return o;
  });
}
