// broker P N — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// A broker actor pairs up P worker actors that keep coming back to it: a
// worker asks for a partner (want, id); the broker keeps the first and,
// when a second comes, tells each the other's id; each greets its partner,
// and on the partner's greeting goes back to the broker. After P*N/2
// meetings the broker sends everyone who comes back home. Counted: P*N/2
// meetings. Verified: that many meetings, 2 pairings and 2 greetings each,
// and all P workers sent home.
#include "common.hpp"

#include <memory>

using namespace caf;

using want_atom = atom_constant<atom("want")>;
using paired_atom = atom_constant<atom("paired")>;
using hello_atom = atom_constant<atom("hello")>;
using done_atom = atom_constant<atom("done")>;
using held_atom = atom_constant<atom("held")>;
using count_atom = atom_constant<atom("count")>;
using launch_atom = atom_constant<atom("launch")>;

using workers_t = std::shared_ptr<std::vector<actor>>;

struct broker_state {
  int64_t meetings = 0;
  int64_t waiting = -1;
  int64_t stopped = 0;
};

behavior broker(stateful_actor<broker_state>* self, workers_t w,
                int64_t target, actor main) {
  return {
    [=](want_atom, int64_t id) {
      auto& st = self->state;
      // once the meetings are held, whoever comes back is sent home:
      // nobody is left waiting for a partner who will not come
      if (st.meetings == target) {
        self->send((*w)[id], done_atom::value);
        if (++st.stopped == static_cast<int64_t>(w->size())) {
          self->send(main, held_atom::value, st.meetings);
          self->quit();
        }
        return;
      }
      if (st.waiting < 0) {
        st.waiting = id;
        return;
      }
      ++st.meetings;
      self->send((*w)[st.waiting], paired_atom::value, id);
      self->send((*w)[id], paired_atom::value, st.waiting);
      st.waiting = -1;
    },
  };
}

struct worker_state {
  int64_t met = 0;
  int64_t hellos = 0;
};

// The partner's greeting may come before the broker's pairing (two
// senders): both are counted, whichever comes first.
behavior worker(stateful_actor<worker_state>* self, int64_t id, workers_t w,
                actor b, actor main) {
  return {
    [=](launch_atom) { self->send(b, want_atom::value, id); },
    [=](paired_atom, int64_t partner) {
      ++self->state.met;
      self->send((*w)[partner], hello_atom::value, id);
    },
    [=](hello_atom, int64_t) {
      ++self->state.hellos;
      self->send(b, want_atom::value, id);
    },
    [=](done_atom) {
      self->send(main, count_atom::value, self->state.met,
                 self->state.hellos);
      self->quit();
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 2, "P N");
  const int64_t p = a[0], n = a[1];
  if (p < 2)
    peer::fail("broker", "P must be 2 or more");
  const int64_t target = p * n / 2;
  return peer::run("broker", a, [&](actor_system& sys, scoped_actor& self) {
    auto w = std::make_shared<std::vector<actor>>();
    auto b = sys.spawn(broker, w, target, actor{self});
    // spawned first, filled in before any message: the vector is read-only
    // once the launch messages go out
    w->reserve(p);
    for (int64_t i = 0; i < p; ++i)
      w->push_back(sys.spawn(worker, i, w, b, actor{self}));
    int64_t meetings = 0, met = 0, hellos = 0;
    auto t0 = peer::clock_type::now();
    for (auto& x : *w)
      anon_send(x, launch_atom::value);
    self->receive([&](held_atom, int64_t m) { meetings = m; });
    for (int64_t i = 0; i < p; ++i)
      self->receive([&](count_atom, int64_t m, int64_t h) {
        met += m;
        hellos += h;
      });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(target)};
    w->clear(); // the actors hold the vector: break the cycle
    if (meetings != target || met != 2 * target || hellos != 2 * target)
      o.wrong = peer::str(meetings, " meetings (want ", target, "), ", met,
                          " paired and ", hellos, " greeted (want ",
                          2 * target, " each)");
    return o;
  });
}
