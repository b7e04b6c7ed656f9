// ask C R — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// One teller actor holds C accounts; C client actors each make R requests
// of it with request(...).then, one in flight at a time per client; the
// teller's handler returns the new balance, which CAF sends back as the
// reply. The k-th deposit (amount k) must be answered with the running sum
// k(k+1)/2. Messages counted: C*R request/reply pairs. Verified: every
// reply, and every account at R(R+1)/2.
#include "common.hpp"

using namespace caf;

using deposit_atom = atom_constant<atom("deposit")>;
using launch_atom = atom_constant<atom("launch")>;
using done_atom = atom_constant<atom("done")>;

struct teller_state {
  std::vector<uint64_t> accounts;
};

behavior teller(stateful_actor<teller_state>* self, int64_t c) {
  self->state.accounts.assign(static_cast<size_t>(c), 0);
  return {
    [=](deposit_atom, int64_t id, uint64_t amount) -> uint64_t {
      return self->state.accounts[static_cast<size_t>(id)] += amount;
    },
    [=](done_atom) -> std::vector<uint64_t> { return self->state.accounts; },
  };
}

struct client_state {
  uint64_t sent = 0;
  int64_t bad = 0;
};

static void next(stateful_actor<client_state>* self, actor t, int64_t id,
                 uint64_t r, actor main) {
  auto& st = self->state;
  if (st.sent == r) {
    self->send(main, done_atom::value, st.bad);
    self->quit();
    return;
  }
  uint64_t k = ++st.sent;
  self->request(t, infinite, deposit_atom::value, id, k)
    .then([=](uint64_t balance) {
      if (balance != k * (k + 1) / 2)
        ++self->state.bad;
      next(self, t, id, r, main);
    });
}

behavior client(stateful_actor<client_state>* self, actor t, int64_t id,
                uint64_t r, actor main) {
  return {
    [=](launch_atom) { next(self, t, id, r, main); },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 2, "C R");
  const int64_t c = a[0];
  const uint64_t r = static_cast<uint64_t>(a[1]);
  const uint64_t want = r * (r + 1) / 2;
  return peer::run("ask", a, [&](actor_system& sys, scoped_actor& self) {
    auto t = sys.spawn(teller, c);
    std::vector<actor> clients;
    clients.reserve(c);
    for (int64_t i = 0; i < c; ++i)
      clients.push_back(sys.spawn(client, t, i, r, actor{self}));
    int64_t bad = 0, short_ = 0;
    auto t0 = peer::clock_type::now();
    for (auto& cl : clients)
      anon_send(cl, launch_atom::value);
    for (int64_t i = 0; i < c; ++i)
      self->receive([&](done_atom, int64_t b) { bad += b; });
    peer::outcome o{peer::seconds_since(t0), static_cast<double>(c * a[1])};
    self->request(t, infinite, done_atom::value)
      .receive(
        [&](const std::vector<uint64_t>& acc) {
          for (auto v : acc)
            short_ += v != want;
        },
        [&](error&) { short_ = c; });
    anon_send_exit(t, exit_reason::user_shutdown);
    if (bad != 0 || short_ != 0)
      o.wrong = peer::str(bad, " replies not the running sum, ", short_,
                          " accounts not at ", want);
    return o;
  });
}
