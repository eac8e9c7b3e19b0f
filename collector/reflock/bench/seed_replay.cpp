// reflock_seed_replay THREADS [RELEASE_WINDOW_NS] [CRITICAL_NS] [OUTSIDE_NS]
// The seed experiment (Hansen, 4.7: rwsem 27.7% slower than mutex on
// unlink1): write-only, Mutex vs RwSem@4.7 vs RwSem@4.7-hacked, 5 interleaved
// repeats of 1 s, ratios against the Mutex of the same repeat with their
// range. Note: RELEASE_WINDOW_NS lengthens every rwsem up_write (the mutex
// has no such window), so at a non-zero window compare 4.7 with 4.7-hacked.
// Stand-in until `lockscope bench` prints this table.
#include "reflock/bench/bench.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

using namespace reflock::bench;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s THREADS [RELEASE_WINDOW_NS] [CRITICAL_NS] [OUTSIDE_NS]\n", argv[0]);
    return 2;
  }
  constexpr unsigned kRepeats = 5;
  std::vector<Params> variants;
  try {
    for (const char* name : {"mutex", "rwsem@4.7", "rwsem@4.7-hacked"}) {
      Params p;
      p.lock = parse_lock(name);
      p.threads = static_cast<unsigned>(std::stoul(argv[1]));
      p.lock.rwsem.release_window_ns = argc > 2 ? std::stoull(argv[2]) : 0;
      p.critical_ns = argc > 3 ? std::stoull(argv[3]) : 1000;
      p.outside_ns = argc > 4 ? std::stoull(argv[4]) : 500;
      p.duration = p.interval = std::chrono::milliseconds(1000);
      validate(p);
      variants.push_back(p);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const auto results = run_interleaved(variants, kRepeats);
  const Params& p = variants[0];
  std::printf("threads=%u release_window=%lluns critical=%lluns outside=%lluns repeats=%u\n", p.threads,
              static_cast<unsigned long long>(p.lock.rwsem.release_window_ns),
              static_cast<unsigned long long>(p.critical_ns), static_cast<unsigned long long>(p.outside_ns), kRepeats);
  std::printf("%-17s %10s %18s %14s %12s %13s\n", "lock", "ops/s", "vs mutex [min-max]", "spin-fail rate",
              "sleeps/kop", "idle");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::vector<double> ops, ratio, fail, sleeps, idle;
    for (unsigned r = 0; r < kRepeats; ++r) {
      const Sample& t = results[v][r].total;
      ops.push_back(t.ops_per_s());
      ratio.push_back(t.ops_per_s() / results[0][r].total.ops_per_s());
      fail.push_back(t.spin_failure_rate());
      sleeps.push_back(t.ops ? 1000.0 * double(t.counters.sleeps) / double(t.ops) : 0);
      idle.push_back(t.idle_fraction);
    }
    const Stat o = stat_of(ops), q = stat_of(ratio), f = stat_of(fail), s = stat_of(sleeps), i = stat_of(idle);
    std::printf("%-17s %10.0f %6.2f [%.2f-%.2f] %7.3f±%.3f %7.2f±%.2f %6.3f±%.3f\n", to_string(variants[v].lock).c_str(),
                o.mean, q.mean, q.min, q.max, f.mean, f.stddev, s.mean, s.stddev, i.mean, i.stddev);
  }
  return 0;
}
