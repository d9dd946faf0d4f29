// The pipeline producer's CPU spent pacing itself (pipe/real_run.hpp): the part of its CPU
// that is not the cost of sending.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "busy_work.hpp"

namespace lab::pipe {

/// The producer's CPU spent pacing itself (waiting for a due time, sleeping between bursts),
/// which is not the cost of sending and is taken out of its CPU per item. A wait longer than
/// `long_ns` is timed with this thread's CPU clock, read on each side of the whole wait (naps
/// and spin together), plus one read's own cost, measured at construction: the two reads' parts
/// that fall outside the interval they measure. (Timed by the wall clock, a nap counted as
/// work and a preemption during a spin as spin: a review of 2026-12-06 measured 9e4 ns per item
/// at 1000 items/s and 0 at 5000.) A shorter wait is spun on the wall clock, which it reads
/// anyway: busy, its wall time is its CPU time (a CPU clock read costs ~1.3 us on this VM, more
/// than the gap at 1 M items/s: read per item, it made the producer fall behind; a review).
class pacing_timer {
public:
    static constexpr std::uint64_t long_ns = 20'000; // a read is then at most ~7 % of the wait
    pacing_timer() {
        std::vector<std::uint64_t> gaps;
        for (int i = 0; i < 64; ++i) {
            const std::uint64_t a = busy_work::cpu_ns();
            gaps.push_back(busy_work::cpu_ns() - a);
        }
        std::nth_element(gaps.begin(), gaps.begin() + 32, gaps.end());
        read_ns_ = gaps[32];
    }
    /// Starts timing a long wait (counted when `in` the window).
    void begin(bool in) noexcept { cpu0_ = in ? busy_work::cpu_ns() : 0; }
    /// Ends it: its CPU goes to the pacing total.
    void end(bool in) noexcept {
        if (in && cpu0_ != 0) total_ += busy_work::cpu_ns() - cpu0_ + read_ns_;
        cpu0_ = 0;
    }
    /// A short wait spun on the wall clock.
    void add_spin(std::uint64_t ns) noexcept { total_ += ns; }
    [[nodiscard]] std::uint64_t total() const noexcept { return total_; }

private:
    std::uint64_t read_ns_ = 0, cpu0_ = 0, total_ = 0;
};

} // namespace lab::pipe
