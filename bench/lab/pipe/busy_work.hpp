// A calibrated busy loop: the pipeline's "per-item work" (parsing, filtering, an iptables walk)
// as real CPU time rather than a sleep, so the consumer's cost behaves like a CPU cost does
// (preemptible, cache-sensitive, counted as involuntary switches when the scheduler steps in).
#pragma once

#include <time.h>

#include <cstdint>

namespace lab::pipe {

class busy_work {
public:
    /// Measure how many loop iterations take a nanosecond of this thread's CPU, now. CPU time,
    /// not wall time: a preemption during the measurement would otherwise make every later
    /// run() too short (on a shared 2-core machine wall-clock calibration came out 2.5x short).
    busy_work() {
        std::uint64_t iters = 1 << 16;
        for (;;) {
            const std::uint64_t t0 = cpu_ns();
            spin(iters);
            const std::uint64_t ns = cpu_ns() - t0;
            if (ns > 20'000'000 || iters > (std::uint64_t{1} << 34)) {
                per_ns_ = static_cast<double>(iters) / static_cast<double>(ns > 0 ? ns : 1);
                return;
            }
            iters *= 2;
        }
    }
    /// Burn about `ns` nanoseconds of CPU.
    void run(double ns) const noexcept {
        if (ns > 0) spin(static_cast<std::uint64_t>(ns * per_ns_));
    }
    [[nodiscard]] double iterations_per_ns() const noexcept { return per_ns_; }

    /// This thread's CPU time in nanoseconds.
    static std::uint64_t cpu_ns() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000 +
               static_cast<std::uint64_t>(ts.tv_nsec);
    }
private:
    static void spin(std::uint64_t n) noexcept {
        // A dependent chain the compiler cannot fold away; the asm keeps the result "used".
        // The chain goes on from the last call's end: started afresh each call, back-to-back
        // calls were independent and the CPU overlapped them, so run(50) burned 0.46-0.72 of
        // its time and run(500) 0.92-0.99 (a review and a harness, 2026-12-06); carried over,
        // 0.98-1.04 at 50, 500, 2000 and 5000 ns.
        thread_local std::uint64_t x = 0x9E3779B97F4A7C15ULL;
        std::uint64_t y = x;
        for (std::uint64_t i = 0; i < n; ++i)
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : : "r"(y));
        x = y;
    }
    double per_ns_ = 1.0;
};

} // namespace lab::pipe
