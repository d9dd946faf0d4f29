// SPDX-License-Identifier: MIT
// qlimits/detail/observed_inflight.hpp: a policy's in-flight count as an adapter reports it to a
// thread that is neither the producer nor the completion side.
//
// A policy's inflight() reads its completed count, then its posted count (never below zero). From
// a third thread the two reads are not one instant: what completes and is posted between them
// adds to the difference, without bound, and a reader paused while 2^32 units pass sees the
// 32-bit difference wrap. A review (2026-12-06) read 4,026,531,825 (15 items of max_object units)
// from a channel whose cap lets 8 such items be in flight. The adapter's own 64-bit count
// of completed units tells whether the completion side moved during the read: the reading is
// taken again while it did, or while it is above the adapter's cap (which the adapter's books
// keep every true count within); after a few tries (a completion side that never pauses) it
// is clamped to the cap. So a third thread's reading is never above the cap and never wrapped;
// it may still be off by what moved during the read.
#pragma once

#include <atomic>
#include <cstdint>

namespace qlimits {
inline namespace v0 {
namespace detail {

template <class Policy>
[[nodiscard]] std::uint32_t observed_inflight(const Policy& policy,
                                              const std::atomic<std::uint64_t>& completed,
                                              std::uint32_t cap) noexcept {
    constexpr int tries = 4;
    std::uint32_t v = 0;
    for (int k = 0; k < tries; ++k) {
        const std::uint64_t before = completed.load(std::memory_order_acquire);
        v = policy.inflight();
        // The policy's reads above stay before the second reading of the count.
        std::atomic_thread_fence(std::memory_order_acquire);
        if (completed.load(std::memory_order_relaxed) == before && v <= cap) return v;
    }
    return v <= cap ? v : cap;
}

/// Puts such a reading in a policy's stats, where they have an `inflight` member.
template <class Stats>
void set_inflight(Stats& s, std::uint32_t v) noexcept {
    if constexpr (requires { s.inflight = v; }) s.inflight = v;
}

} // namespace detail
} // namespace v0
} // namespace qlimits
