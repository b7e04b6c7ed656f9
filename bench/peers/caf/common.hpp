// Shared helpers for the CAF 0.17 peers of actorc's benchmarks
// (see bench/README.md and bench/peers/README.md).
#pragma once

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include "caf/all.hpp"

namespace peer {

using clock_type = std::chrono::steady_clock;

// Parses argv[1..] as exactly `n` positive integers; exits 2 on misuse.
inline std::vector<int64_t> args(int argc, char** argv, int n,
                                 const char* usage) {
  if (argc != n + 1) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    std::exit(2);
  }
  std::vector<int64_t> out;
  for (int i = 1; i <= n; ++i) {
    char* end = nullptr;
    long long v = std::strtoll(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || v <= 0) {
      std::fprintf(stderr, "%s: bad argument '%s' (usage: %s)\n", argv[0],
                   argv[i], usage);
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

// The scheduler gets one worker per core (CAF's default) unless CAF_WORKERS,
// or else AC_WORKERS (actorc's variable, for parity), names a count.
inline void configure(caf::actor_system_config& cfg) {
  const char* w = std::getenv("CAF_WORKERS");
  if (w == nullptr || *w == '\0')
    w = std::getenv("AC_WORKERS");
  size_t n = std::thread::hardware_concurrency();
  if (w != nullptr && *w != '\0') {
    long v = std::strtol(w, nullptr, 10);
    if (v > 0)
      n = static_cast<size_t>(v);
  }
  if (n == 0)
    n = 1;
  cfg.set("scheduler.max-threads", n);
}

[[noreturn]] inline void fail(const char* bench, const std::string& what) {
  std::fprintf(stderr, "%s: verification failed: %s\n", bench, what.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

inline long peak_rss_kb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss; // KiB on Linux
}

inline void report(const char* bench, const std::vector<int64_t>& params,
                   double secs, double msgs) {
  std::string p;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i)
      p += 'x';
    p += std::to_string(params[i]);
  }
  std::printf("%s %s %.6f %.0f %ld\n", bench, p.c_str(), secs,
              secs > 0 ? msgs / secs : 0.0, peak_rss_kb());
  std::fflush(stdout);
}

// The arguments' text run together, for a verification failure's message.
template <class... Ts>
std::string str(const Ts&... xs) {
  std::ostringstream out;
  (out << ... << xs);
  return out.str();
}

// What a run measured: the timed seconds and the messages they count; and,
// when the result is wrong, what is wrong (empty: verified).
struct outcome {
  double secs = 0;
  double msgs = 0;
  std::string wrong;
  outcome() = default;
  outcome(double s, double m, std::string w = {})
    : secs(s), msgs(m), wrong(std::move(w)) {}
};

// Every peer's main after its arguments: an actor system set up by
// configure(), `body(sys, self)` run with a scoped actor to receive the
// result on, then the verification failure (stderr, exit 1) or the one
// output line (report) with `params`, the parsed arguments.
template <class Body>
int run(const char* bench, const std::vector<int64_t>& params, Body&& body) {
  caf::actor_system_config cfg;
  configure(cfg);
  caf::actor_system sys{cfg};
  outcome o;
  {
    caf::scoped_actor self{sys};
    o = body(sys, self);
  }
  if (!o.wrong.empty())
    fail(bench, o.wrong);
  report(bench, params, o.secs, o.msgs);
  return 0;
}

} // namespace peer
