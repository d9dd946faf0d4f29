// SPDX-License-Identifier: MIT
// qlimits/clock.hpp: clocks to read `now` with. Policies never read a clock themselves; the
// caller passes a time_point, so tests are exact and a caller can read the clock once per batch.
//
// A policy's time resolution is its Clock's duration: one unit of Clock::duration is one "tick"
// (the kernel's jiffy). jiffy_clock ticks in milliseconds, like a kernel built with HZ=1000,
// and is the default for dql so hold times and stall thresholds mean what they mean in Linux.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace qlimits {
inline namespace v0 {

/// A type that can tell the time: a steady std::chrono-style clock with a 64-bit integral tick
/// count. The policies compare times as differences modulo 2^64 (as the kernel compares
/// jiffies), so a narrower count, which wraps (or sign-extends) at 2^31 or 2^32, would look like
/// a jump of billions of ticks when it wraps; such clocks are rejected here.
template <class C>
concept clock_source = requires {
    typename C::duration;
    typename C::time_point;
    { C::now() } noexcept -> std::same_as<typename C::time_point>;
} && std::is_integral_v<typename C::duration::rep> && sizeof(typename C::duration::rep) == 8;

/// std::chrono::steady_clock in nanoseconds.
struct steady_clock_source {
    using duration = std::chrono::nanoseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<steady_clock_source, duration>;
    static constexpr bool is_steady = true;
    [[nodiscard]] static time_point now() noexcept {
        return time_point{std::chrono::duration_cast<duration>(
            std::chrono::steady_clock::now().time_since_epoch())};
    }
};

/// std::chrono::steady_clock truncated to a coarse tick (Duration), like the kernel's jiffies.
template <class Duration>
struct tick_clock {
    using duration = Duration;
    using rep = typename duration::rep;
    using period = typename duration::period;
    using time_point = std::chrono::time_point<tick_clock, duration>;
    static constexpr bool is_steady = true;
    [[nodiscard]] static time_point now() noexcept {
        return time_point{std::chrono::duration_cast<duration>(
            std::chrono::steady_clock::now().time_since_epoch())};
    }
};

/// 1 ms ticks: the kernel's jiffy at HZ=1000 (the default of x86 distribution kernels).
using jiffy_clock = tick_clock<std::chrono::milliseconds>;

/// A clock that moves only when told to: for tests, simulators and trace replay.
/// Its now() is static (one shared time per Duration) so it satisfies clock_source; most
/// callers instead keep their own time_point and pass it to the policy.
template <class Duration = std::chrono::nanoseconds>
struct manual_clock {
    using duration = Duration;
    using rep = typename duration::rep;
    using period = typename duration::period;
    using time_point = std::chrono::time_point<manual_clock, duration>;
    static constexpr bool is_steady = true;
    [[nodiscard]] static time_point now() noexcept { return current(); }
    /// Move time forward by d ticks; wraps modulo 2^64 like a kernel jiffies counter.
    static void advance(duration d) noexcept { current() = advanced(current(), d); }
    static void set(time_point t) noexcept { current() = t; }
    /// t + d computed modulo 2^64, without signed overflow.
    [[nodiscard]] static constexpr time_point advanced(time_point t, duration d) noexcept {
        const auto sum = static_cast<std::uint64_t>(t.time_since_epoch().count()) +
                         static_cast<std::uint64_t>(d.count());
        return time_point{duration{static_cast<rep>(sum)}};
    }

private:
    static time_point& current() noexcept {
        static time_point t{};
        return t;
    }
};

/// The tick count of a time_point as an unsigned 64-bit value (for wrap-safe comparisons).
template <class TimePoint>
[[nodiscard]] constexpr std::uint64_t ticks_of(TimePoint t) noexcept {
    return static_cast<std::uint64_t>(t.time_since_epoch().count());
}

static_assert(clock_source<steady_clock_source>);
static_assert(clock_source<jiffy_clock>);
static_assert(clock_source<manual_clock<>>);

} // namespace v0
} // namespace qlimits
