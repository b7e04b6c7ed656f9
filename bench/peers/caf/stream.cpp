// stream N — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// One producer sends N messages (a sequence number) to one consumer, all
// in one handler. Messages counted: N. Verified: the consumer counted N,
// all in order.
#include "common.hpp"

using namespace caf;

using go_atom = atom_constant<atom("go")>;
using done_atom = atom_constant<atom("done")>;

struct consumer_state {
  int64_t count = 0;
  int64_t out_of_order = 0;
};

behavior consumer(stateful_actor<consumer_state>* self, int64_t n,
                  actor reporter) {
  return {
    [=](int64_t seq) {
      auto& st = self->state;
      if (seq != st.count)
        ++st.out_of_order;
      if (++st.count == n) {
        self->send(reporter, done_atom::value, st.count, st.out_of_order);
        self->quit();
      }
    },
  };
}

behavior producer(event_based_actor* self, actor sink, int64_t n) {
  return {
    [=](go_atom) {
      for (int64_t i = 0; i < n; ++i)
        self->send(sink, i);
      self->quit();
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 1, "N");
  const int64_t n = a[0];
  return peer::run("stream", a, [&](actor_system& sys, scoped_actor& self) {
    auto sink = sys.spawn(consumer, n, actor{self});
    auto source = sys.spawn(producer, sink, n);
    int64_t count = -1, bad = -1;
    auto t0 = peer::clock_type::now();
    anon_send(source, go_atom::value);
    self->receive([&](done_atom, int64_t c, int64_t b) {
      count = c;
      bad = b;
    });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(n)};
    if (count != n || bad != 0)
      o.wrong = peer::str("consumer counted ", count, " of ", n, ", ", bad,
                          " out of order");
    return o;
  });
}
