// The user-lock workload of bench/overhead.py (and bench/mutex_workload.h's
// other users), as a process of its own that a profiler can record by pid:
//
//   mutex_workload [--threads N] [--duration SECONDS] [--rate N] [--wait]
//
// With --wait it prints "ready" and starts when a line arrives on stdin (so
// that `lockscope record -p PID` attaches first). It prints its throughput
// as lockscope's workloads do ("... = N ops/s") and its contended
// acquisitions a second.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"
#include "mutex_workload.h"

namespace {

double number(const char* option, const char* text, double low, double high)
{
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(value >= low && value <= high)) {
        throw lockscope::UsageError(std::string(option) + " wants a number from " + std::to_string(low) + " to " +
                                    std::to_string(high) + ", not '" + text + "'");
    }
    return value;
}

}  // namespace

int main(int argc, char** argv)
{
    unsigned threads = 4;
    double seconds = 3;
    unsigned rate = 0;
    bool wait = false;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string opt = argv[i];
            if (opt == "-h" || opt == "--help") {
                std::puts("usage: mutex_workload [--threads N] [--duration SECONDS] [--rate N] [--wait]");
                return lockscope::kExitOk;
            }
            if (opt == "--wait") {
                wait = true;
                continue;
            }
            if (i + 1 >= argc) {
                throw lockscope::UsageError(opt + " wants a value");
            }
            const char* value = argv[++i];
            if (opt == "--threads") {
                threads = static_cast<unsigned>(number("--threads", value, 1, 256));
            } else if (opt == "--duration") {
                seconds = number("--duration", value, 0.1, 3600);
            } else if (opt == "--rate") {
                rate = static_cast<unsigned>(number("--rate", value, 0, 1000000));
            } else {
                throw lockscope::UsageError("unknown option '" + opt + "'");
            }
        }
    } catch (const lockscope::UsageError& e) {
        std::fprintf(stderr, "mutex_workload: %s (try --help)\n", e.what());
        return lockscope::kExitUsage;
    }
    if (wait) {
        std::printf("ready\n");
        std::fflush(stdout);
        char line[64];
        if (std::fgets(line, sizeof(line), stdin) == nullptr) {
            std::fprintf(stderr, "mutex_workload: stdin closed before the start\n");
            return lockscope::kExitFailure;
        }
    }
    const auto counts = lockscope::bench::mutex_workload(threads, seconds, rate);
    const double elapsed = static_cast<double>(counts.elapsed_ns) / 1e9;
    std::printf("mutex, %u threads: %.0f contended acquisitions/s; total = %.1f ops/s\n", threads,
                static_cast<double>(counts.contended) / elapsed, static_cast<double>(counts.ops) / elapsed);
    return lockscope::kExitOk;
}
