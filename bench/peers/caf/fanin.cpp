// fanin P M — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// P producers each send M messages (their id and a sequence number) to one
// consumer. Messages counted: P*M. Verified: the consumer counted P*M and
// saw each producer's sequence numbers in order.
#include "common.hpp"

using namespace caf;

using go_atom = atom_constant<atom("go")>;
using done_atom = atom_constant<atom("done")>;

struct consumer_state {
  std::vector<int64_t> next_seq;
  int64_t count = 0;
  int64_t out_of_order = 0;
};

behavior consumer(stateful_actor<consumer_state>* self, int64_t p, int64_t m,
                  actor reporter) {
  self->state.next_seq.assign(static_cast<size_t>(p), 0);
  return {
    [=](int64_t producer, int64_t seq) {
      auto& st = self->state;
      if (producer < 0 || producer >= p || st.next_seq[producer] != seq)
        ++st.out_of_order;
      else
        ++st.next_seq[producer];
      if (++st.count == p * m) {
        self->send(reporter, done_atom::value, st.count, st.out_of_order);
        self->quit();
      }
    },
  };
}

behavior producer(event_based_actor* self, actor sink, int64_t id,
                  int64_t m) {
  return {
    [=](go_atom) {
      for (int64_t i = 0; i < m; ++i)
        self->send(sink, id, i);
      self->quit();
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 2, "P M");
  const int64_t p = a[0], m = a[1];
  return peer::run("fanin", a, [&](actor_system& sys, scoped_actor& self) {
    auto sink = sys.spawn(consumer, p, m, actor{self});
    std::vector<actor> producers;
    producers.reserve(p);
    for (int64_t i = 0; i < p; ++i)
      producers.push_back(sys.spawn(producer, sink, i, m));
    int64_t count = -1, bad = -1;
    auto t0 = peer::clock_type::now();
    for (auto& x : producers)
      anon_send(x, go_atom::value);
    self->receive([&](done_atom, int64_t c, int64_t b) {
      count = c;
      bad = b;
    });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(p * m)};
    if (count != p * m || bad != 0)
      o.wrong = peer::str("consumer counted ", count, " of ", p * m, ", ", bad,
                          " out of order");
    return o;
  });
}
