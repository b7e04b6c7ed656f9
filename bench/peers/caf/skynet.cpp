// skynet D — CAF 0.17 peer of actorc's benchmark (see bench/README.md).
// The root actor spawns 10 children, each spawns 10, down to depth D
// (10^D leaves); leaf i replies its number i, parents sum their children's
// replies and reply to their parent; every actor stops after replying.
// Messages counted: one spawn and one reply per actor (2 * (10^(D+1)-1)/9).
// Verified: the root's sum is the sum of 0 .. 10^D - 1.
#include "common.hpp"

using namespace caf;

behavior skynet(event_based_actor* self, actor parent, int64_t num,
                int64_t level, int64_t depth) {
  if (level == depth) {
    self->send(parent, num);
    self->quit();
    return {};
  }
  for (int64_t i = 0; i < 10; ++i)
    self->spawn(skynet, actor_cast<actor>(self), num * 10 + i, level + 1,
                depth);
  return {
    [=, sum = int64_t{0}, replies = 0](int64_t x) mutable {
      sum += x;
      if (++replies == 10) {
        self->send(parent, sum);
        self->quit();
      }
    },
  };
}

int main(int argc, char** argv) {
  auto a = peer::args(argc, argv, 1, "D");
  const int64_t d = a[0];
  if (d > 9) {
    std::fprintf(stderr, "skynet: D must be at most 9\n");
    return 2;
  }
  int64_t leaves = 1, actors = 0;
  for (int64_t i = 0; i <= d; ++i) {
    actors += leaves;
    if (i < d)
      leaves *= 10;
  }
  const int64_t expected = leaves * (leaves - 1) / 2;
  return peer::run("skynet", a, [&](actor_system& sys, scoped_actor& self) {
    int64_t sum = -1;
    auto t0 = peer::clock_type::now();
    sys.spawn(skynet, actor{self}, int64_t{0}, int64_t{0}, d);
    self->receive([&](int64_t x) { sum = x; });
    peer::outcome o{peer::seconds_since(t0), 2.0 * static_cast<double>(actors)};
    if (sum != expected)
      o.wrong = peer::str("root's sum ", sum, ", expected ", expected);
    return o;
  });
}
