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

} // namespace detail
} // namespace v0
} // namespace qlimits
