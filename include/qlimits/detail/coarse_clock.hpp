// SPDX-License-Identifier: MIT
// qlimits/detail/coarse_clock.hpp: the clock an adapter reads for a policy's `now`.
//
// A policy whose ticks are milliseconds or longer (jiffy_clock, dql's default) does not need a
// nanosecond clock read per completion: std::chrono::steady_clock costs ~25 ns on the
// development VM, CLOCK_MONOTONIC_COARSE ~5 ns (measured, docs/benchmarks.md). The coarse clock
// is the same clock (CLOCK_MONOTONIC, steady_clock's epoch on Linux) updated once per kernel
// tick, so it lags the fine one by at most one kernel tick (4 ms at HZ=250, 1 ms at HZ=1000;
// clock_getres(CLOCK_MONOTONIC_COARSE) says which) and never goes backwards. For such policies
// the adapter reads it for every `now`, the constructor's too, so the policy sees one monotonic
// time base. Finer clocks are read as they are.
#pragma once

#include <chrono>
#include <cstdint>
#include <ratio>

#include "qlimits/clock.hpp"

#if defined(__linux__)
#include <ctime>
#endif

namespace qlimits {
inline namespace v0 {
namespace detail {

template <class Clock>
struct adapter_clock {
    static constexpr bool coarse = false;
    [[nodiscard]] static typename Clock::time_point now() noexcept { return Clock::now(); }
};

#if defined(__linux__)
// tick_clock<D> with D of at least a millisecond: steady_clock truncated, read coarsely.
template <class Duration>
    requires(std::ratio_greater_equal_v<typename Duration::period, std::milli>)
struct adapter_clock<tick_clock<Duration>> {
    static constexpr bool coarse = true;
    [[nodiscard]] static typename tick_clock<Duration>::time_point now() noexcept {
        timespec ts{};
        (void)::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        const std::chrono::nanoseconds ns =
            std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
        return typename tick_clock<Duration>::time_point{
            std::chrono::duration_cast<Duration>(ns)};
    }
};
#endif

// A coarse clock's reading reused over several completions that come close together, for a
// policy that can use a time no later than now where a late decision is safe (dql: the end of
// a hold window; accepts_seen_time) and reads the clock itself where it keeps the time
// (current()). A reading costs 4-6 ns on the development VM, about a fifth of what a per-item
// dql completion costs there besides, and on the consumer, the side that sets the pace when
// the ring is full (docs/benchmarks.md "One clock reading for several completions"). The rules,
// each a design choice:
//  - a reading serves `stride` completions, 1 to max_stride (16);
//  - at each change of the clock's value the stride becomes an eighth of the completions that
//    the last value held, as a power of two: a reused reading then lags by about an eighth of
//    the clock's step (one kernel tick) in a steady stream;
//  - a reading that moved by twice the smallest step seen or more (a step passed unseen:
//    completions came more slowly than before) sets the stride to 1, so after a slow-down at
//    most max_stride - 1 completions, up to the next reading, reuse an old one: after a pause
//    of the consumer's own (the ring not empty), a reading as old as the pause;
//  - forget(): the next completion reads the clock (an adapter calls it where the consumer
//    may wait: an empty poll).
// Readings never go backwards for a steady source. Completion side only (not shared).
template <class Source>
class reused_reading {
public:
    using time_point = decltype(Source::now());
    static constexpr std::uint32_t max_stride = 16;
    static constexpr std::uint32_t completions_per_reading = 8; // per step of the clock

    /// The time for one more completion: the last reading, or a new one.
    [[nodiscard]] time_point now() noexcept {
        ++count_;
        if (left_ != 0) {
            --left_;
            fresh_ = false;
            return last_;
        }
        return read();
    }
    /// The time now, for the completion the last now() was for (where the policy keeps the
    /// time): that reading if now() just took it, else a new one, which the next completions
    /// then reuse.
    [[nodiscard]] time_point current() noexcept { return fresh_ ? last_ : read(); }
    void forget() noexcept { left_ = 0; }
    [[nodiscard]] std::uint32_t stride() const noexcept { return stride_; }

private:
    time_point read() noexcept {
        fresh_ = true;
        const time_point t = Source::now();
        if (t != last_) {
            const auto moved = t - last_;
            bool skipped = true; // or went backwards: a source that is not steady
            if (moved > moved.zero()) {
                // Two steps or more: one passed unseen. (Not "more than one step": a tick of
                // 4 ms read in milliseconds moves by 3, 4 or 5 as the truncation falls.)
                skipped = seen_step_ && moved >= 2 * step_;
                if (!seen_step_ || moved < step_)
                    step_ = moved;
                seen_step_ = true;
            }
            stride_ = skipped ? 1 : stride_for(count_);
            count_ = 0;
            last_ = t;
        }
        left_ = stride_ - 1;
        return t;
    }
    static std::uint32_t stride_for(std::uint64_t completions_in_step) noexcept {
        std::uint32_t s = 1;
        while (s < max_stride &&
               std::uint64_t{s} * 2 * completions_per_reading <= completions_in_step)
            s *= 2;
        return s;
    }

    time_point last_{};
    typename time_point::duration step_{};
    bool seen_step_ = false;
    std::uint64_t count_ = 0;  // completions since the value last changed
    std::uint32_t stride_ = 1;
    std::uint32_t left_ = 0;   // completions that may still reuse last_
    bool fresh_ = false;       // the last now() (or current()) read the clock
};

} // namespace detail
} // namespace v0
} // namespace qlimits
