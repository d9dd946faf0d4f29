// SPDX-License-Identifier: MIT
// qlimits/dim/stats.hpp: the rates DIM compares, how a window is turned into them, and the
// rules that compare two windows. Written from a description of Linux lib/dim behaviour on 64-bit
// kernels (docs/design.md §5), not from its code.
//
// A window runs from a start sample S to an end sample E:
//  - its length is (E.time - S.time) in signed ns, divided by 1000 truncating toward zero, then
//    kept modulo 2^32 as an unsigned microsecond count (a negative length becomes huge);
//  - a length of 0 us gives no stats at all (the caller keeps the window open);
//  - packet, byte and completion deltas are taken modulo 2^32;
//  - each rate is ceil(delta * 1000 / us), computed in 64 bits and stored into a signed 32-bit
//    int (modulo 2^32, so a rate above 2^31 - 1 turns negative);
//  - the events rate is computed from the constant 64 (events per window), not from the events
//    that really happened: epms = ceil(64000 / us), a measure of the window's brevity;
//  - cpe_ratio = (cpms * 100, wrapping in 32 bits, sign-extended to 64 bits, as unsigned) / epms,
//    stored back into 32 bits; 0 if epms is 0 (which cannot happen on a 64-bit kernel).
// Significance: ref != 0 and floor(100 * |val - ref| / ref) > 10, with the C details kept (the
// difference wraps in 32 bits; |INT_MIN| stays negative; both sides are widened to unsigned
// 64-bit, so a negative ref is a huge divisor and never significant). In effect: a change of at
// least 11% of the previous value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "qlimits/dim/sample.hpp"

namespace qlimits {
inline namespace v0 {

/// Events that make a measuring window (Linux DIM_NEVENTS).
inline constexpr std::uint16_t dim_window_events = 64;

/// Rates of one window, each a signed 32-bit value as in Linux (struct dim_stats).
struct dim_stats {
    std::int32_t ppms = 0;      ///< packets per ms, rounded up
    std::int32_t bpms = 0;      ///< bytes per ms, rounded up
    std::int32_t epms = 0;      ///< ceil(64000 / window us): events per ms as if 64 happened
    std::int32_t cpms = 0;      ///< completions per ms, rounded up
    std::int32_t cpe_ratio = 0; ///< completions per event, in percent
    friend constexpr bool operator==(const dim_stats&, const dim_stats&) noexcept = default;
};

/// How the current window compares with the previous one.
enum class dim_verdict : std::uint8_t { worse = 0, same = 1, better = 2 };

namespace detail {

/// Keep the low 32 bits as a signed value (C's int conversion on every compiler we support;
/// defined behaviour since C++20).
[[nodiscard]] constexpr std::int32_t low_i32(std::uint64_t v) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
}

/// Events between two 16-bit counter readings, modulo 2^16 (net DIM's gap).
[[nodiscard]] constexpr std::uint16_t dim_event_gap(std::uint16_t end, std::uint16_t start) noexcept {
    return static_cast<std::uint16_t>(end - start);
}

/// Window length in microseconds: signed ns difference (wrapping in 64 bits), truncated toward
/// zero to us, kept modulo 2^32.
[[nodiscard]] constexpr std::uint32_t dim_window_us(std::chrono::nanoseconds start,
                                                    std::chrono::nanoseconds end) noexcept {
    const auto ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(end.count()) -
                                              static_cast<std::uint64_t>(start.count()));
    return static_cast<std::uint32_t>(ns / 1000);
}

/// ceil(count * 1000 / us) in 64 bits, stored into a signed 32-bit int. us > 0.
[[nodiscard]] constexpr std::int32_t dim_rate_per_ms(std::uint32_t count, std::uint32_t us) noexcept {
    const std::uint64_t num = std::uint64_t{count} * 1000U + us - 1U;
    return low_i32(num / us);
}

} // namespace detail

/// The window's rates, or nothing when the window is 0 us long.
[[nodiscard]] constexpr std::optional<dim_stats> compute_dim_stats(const dim_sample& start,
                                                                   const dim_sample& end) noexcept {
    const std::uint32_t us = detail::dim_window_us(start.time, end.time);
    if (us == 0) return std::nullopt;
    dim_stats s;
    s.ppms = detail::dim_rate_per_ms(end.pkts - start.pkts, us);
    s.bpms = detail::dim_rate_per_ms(end.bytes - start.bytes, us);
    s.cpms = detail::dim_rate_per_ms(end.comps - start.comps, us);
    s.epms = detail::dim_rate_per_ms(dim_window_events, us);
    if (s.epms != 0) {
        const std::int32_t cp100 = detail::low_i32(static_cast<std::uint32_t>(s.cpms) * 100U);
        const auto wide = static_cast<std::uint64_t>(static_cast<std::int64_t>(cp100));
        s.cpe_ratio = detail::low_i32(wide / static_cast<std::uint32_t>(s.epms));
    }
    return s;
}

/// floor(100 * |val - ref| / ref) > 10 with ref != 0, as a 64-bit kernel computes it.
[[nodiscard]] constexpr bool dim_significant(std::int32_t val, std::int32_t ref) noexcept {
    if (ref == 0) return false;
    const std::uint32_t diff = static_cast<std::uint32_t>(val) - static_cast<std::uint32_t>(ref);
    const std::int32_t d = static_cast<std::int32_t>(diff);
    const std::int32_t mag = d < 0 ? static_cast<std::int32_t>(0U - diff) : d; // |INT_MIN| < 0
    const std::uint64_t num = static_cast<std::uint64_t>(static_cast<std::int64_t>(mag)) * 100U;
    const auto den = static_cast<std::uint64_t>(static_cast<std::int64_t>(ref));
    return num / den > 10U;
}

/// Net comparison: bytes first, then packets, then the events rate (fewer is better).
[[nodiscard]] constexpr dim_verdict net_dim_compare(const dim_stats& curr,
                                                    const dim_stats& prev) noexcept {
    if (prev.bpms == 0) return curr.bpms != 0 ? dim_verdict::better : dim_verdict::same;
    if (dim_significant(curr.bpms, prev.bpms))
        return curr.bpms > prev.bpms ? dim_verdict::better : dim_verdict::worse;
    if (prev.ppms == 0) return curr.ppms != 0 ? dim_verdict::better : dim_verdict::same;
    if (dim_significant(curr.ppms, prev.ppms))
        return curr.ppms > prev.ppms ? dim_verdict::better : dim_verdict::worse;
    if (prev.epms == 0) return dim_verdict::same;
    if (dim_significant(curr.epms, prev.epms))
        return curr.epms < prev.epms ? dim_verdict::better : dim_verdict::worse;
    return dim_verdict::same;
}

/// RDMA comparison: completions rate, then completions per event.
[[nodiscard]] constexpr dim_verdict rdma_dim_compare(const dim_stats& curr,
                                                     const dim_stats& prev) noexcept {
    if (prev.cpms == 0) return dim_verdict::same;
    if (dim_significant(curr.cpms, prev.cpms))
        return curr.cpms > prev.cpms ? dim_verdict::better : dim_verdict::worse;
    if (dim_significant(curr.cpe_ratio, prev.cpe_ratio))
        return curr.cpe_ratio > prev.cpe_ratio ? dim_verdict::better : dim_verdict::worse;
    return dim_verdict::same;
}

// The threshold is "at least 11%", relative to the previous value.
static_assert(!dim_significant(110, 100) && dim_significant(111, 100) &&
              !dim_significant(1109, 1000) && dim_significant(89, 100) &&
              !dim_significant(90, 100));
static_assert(!dim_significant(5, 0) && !dim_significant(5, -3)); // zero / negative reference
static_assert(detail::dim_event_gap(3, 65535) == 4);
static_assert(detail::dim_window_us(std::chrono::nanoseconds{0}, std::chrono::nanoseconds{999}) ==
              0);
static_assert(detail::dim_window_us(std::chrono::nanoseconds{0}, std::chrono::nanoseconds{-1000}) ==
              0xFFFF'FFFFU);
static_assert(detail::dim_rate_per_ms(64, 1000) == 64 && detail::dim_rate_per_ms(64, 999) == 65);

} // namespace v0
} // namespace qlimits
