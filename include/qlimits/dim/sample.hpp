// SPDX-License-Identifier: MIT
// qlimits/dim/sample.hpp: what a DIM tuner is fed, a snapshot of cumulative counters.
//
// A sample carries raw *cumulative* counters, never deltas, with the widths Linux uses: a 16-bit
// event counter (one per interrupt, or per poll round), 32-bit packet, byte and completion
// counters. All of them wrap; a tuner only ever looks at differences modulo their width, so a
// counter that wraps once inside a window still gives the right delta (and one that moved by a
// full turn or more is indistinguishable from a smaller move, as in the kernel).
//
// The timestamp is a signed 64-bit count of nanoseconds from any origin the caller likes (the
// kernel's ktime). Tuners never read a clock: the sample's time is "now" for the tuner, including
// when it opens a new measuring window (where Linux would read a fresh timestamp).
#pragma once

#include <chrono>
#include <cstdint>
#include <type_traits>

namespace qlimits {
inline namespace v0 {

static_assert(sizeof(std::chrono::nanoseconds::rep) == 8 &&
                  std::is_signed_v<std::chrono::nanoseconds::rep>,
              "DIM timestamps are signed 64-bit nanoseconds");

/// One observation of a queue: cumulative counters at a point in time.
struct dim_sample {
    std::chrono::nanoseconds time{}; ///< when the counters were read (signed 64-bit ns)
    std::uint16_t events = 0;        ///< interrupts / poll rounds so far, modulo 2^16
    std::uint32_t pkts = 0;          ///< packets so far, modulo 2^32
    std::uint32_t bytes = 0;         ///< bytes so far, modulo 2^32
    std::uint32_t comps = 0;         ///< completions so far, modulo 2^32 (RDMA; 0 for net)
    friend constexpr bool operator==(const dim_sample&, const dim_sample&) noexcept = default;
};

/// Build a sample from counters of any width, truncating them as the kernel's helper does
/// (events to 16 bits; packets, bytes and completions to 32 bits). Completions default to 0:
/// net tuners ignore them, and a zeroed field is what Linux drivers pass.
[[nodiscard]] constexpr dim_sample make_dim_sample(std::chrono::nanoseconds now, std::uint64_t events,
                                                   std::uint64_t pkts, std::uint64_t bytes,
                                                   std::uint64_t comps = 0) noexcept {
    return dim_sample{now, static_cast<std::uint16_t>(events), static_cast<std::uint32_t>(pkts),
                      static_cast<std::uint32_t>(bytes), static_cast<std::uint32_t>(comps)};
}

static_assert(make_dim_sample(std::chrono::nanoseconds{5}, 0x1'0002, 0x1'0000'0003, 4).events == 2);
static_assert(make_dim_sample(std::chrono::nanoseconds{5}, 0x1'0002, 0x1'0000'0003, 4).pkts == 3);

} // namespace v0
} // namespace qlimits
