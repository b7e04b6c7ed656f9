// mesh A T H — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// A actors; each sends T tokens to random actors (xorshift32, seeded
// id * 2654435761 + 1, the same generator as actorc's); a token is sent H
// times in all, each receiver forwarding it to a random actor until its
// count runs out. Messages counted: A*T*H. Verified: A*T tokens finished
// and the receive counts sum to A*T*H.
#include "common.hpp"

#include <memory>

using namespace caf;

using launch_atom = atom_constant<atom("launch")>;
using fin_atom = atom_constant<atom("fin")>;
using report_atom = atom_constant<atom("report")>;
using count_atom = atom_constant<atom("count")>;

using peers_t = std::shared_ptr<std::vector<actor>>;

struct node_state {
  uint32_t rng = 1;
  int64_t received = 0;
  int64_t finished = 0;
};

static uint32_t xorshift(uint32_t x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

behavior node(stateful_actor<node_state>* self, uint32_t id, peers_t peers,
              actor reporter) {
  self->state.rng = id * 2654435761u + 1u;
  if (self->state.rng == 0)
    self->state.rng = 1;
  auto next = [=] {
    self->state.rng = xorshift(self->state.rng);
    return (*peers)[self->state.rng % peers->size()];
  };
  return {
    [=](launch_atom, int64_t tokens, int64_t hops) {
      for (int64_t t = 0; t < tokens; ++t)
        self->send(next(), hops - 1);
    },
    [=](int64_t left) {
      ++self->state.received;
      if (left == 0) {
        ++self->state.finished;
        self->send(reporter, fin_atom::value);
        return;
      }
      self->send(next(), left - 1);
    },
    [=](report_atom) {
      self->send(reporter, count_atom::value, self->state.received,
                 self->state.finished);
      self->quit();
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 3, "A T H");
  const int64_t n = a[0], t = a[1], h = a[2];
  return peer::run("mesh", a, [&](actor_system& sys, scoped_actor& self) {
    auto peers = std::make_shared<std::vector<actor>>();
    peers->reserve(n);
    // spawned first, filled in before any message: the vector is read-only
    // once the launch messages go out
    for (int64_t i = 0; i < n; ++i)
      peers->push_back(sys.spawn(node, static_cast<uint32_t>(i), peers,
                                 actor{self}));
    auto t0 = peer::clock_type::now();
    for (auto& p : *peers)
      anon_send(p, launch_atom::value, t, h);
    for (int64_t i = 0; i < n * t; ++i)
      self->receive([](fin_atom) {});
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(n * t * h)};
    int64_t received = 0, finished = 0;
    for (auto& p : *peers)
      anon_send(p, report_atom::value);
    for (int64_t i = 0; i < n; ++i)
      self->receive([&](count_atom, int64_t r, int64_t f) {
        received += r;
        finished += f;
      });
    peers->clear(); // the nodes hold the vector: break the cycle
    if (received != n * t * h || finished != n * t)
      o.wrong = peer::str(received, " messages received (want ", n * t * h,
                          "), ", finished, " tokens finished (want ", n * t,
                          ")");
    return o;
  });
}
