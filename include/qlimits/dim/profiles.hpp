// SPDX-License-Identifier: MIT
// qlimits/dim/profiles.hpp: DIM moderation profiles, the tables a tuner's index points into.
//
// A profile is a short table of moderation settings ordered from least moderation (index 0:
// short timer, interrupt soon) to most. The tuner only ever moves an index; the table turns that
// index into numbers for the device (or the busy-poll budget, or the timer) through the user's
// moderation hook. A table may therefore be swapped between samples (as Linux 6.11+ allows with
// `ethtool -C ethX rx-profile ...`) without touching the tuner's state: only the numbers returned
// for each index change.
//
// Built-in tables are the Linux values, kept as documented parameters with a citation:
//  - the four net tables: lib/dim/net_dim.c (RX/TX x EQE/CQE period mode, 5 entries each,
//    default index 1 in both modes: the device's start; a tuner starts at 0);
//  - the RDMA table: drivers/infiniband/core/cq.c (9 entries, the tuner starts at index 0).
// Net tables hold (usec, pkts); the RDMA table holds (usec, comps).
//
// User tables: a net tuner needs exactly 5 entries (Linux has no bound check on the index, so a
// table of any other length is rejected). Build one from a braced list or a span; valid() says
// whether it has exactly the tuner's count, and is usable in a static_assert:
//     constexpr qlimits::net_dim_profile mine{{2, 64}, {8, 64}, {16, 64}, {32, 64}, {64, 64}};
//     static_assert(mine.valid());
// At run time error() / error_message() say what is wrong; tuners refuse an invalid table through
// the contract handler (qlimits/config.hpp) and keep the one they had.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace qlimits {
inline namespace v0 {

/// One moderation setting: how long the device may hold an interrupt back (usec) and after how
/// many packets (pkts, net) or completions (comps, RDMA) it must fire anyway. 0 = field unused.
struct moderation {
    std::uint16_t usec = 0;
    std::uint16_t pkts = 0;
    std::uint16_t comps = 0;
    friend constexpr bool operator==(const moderation&, const moderation&) noexcept = default;
};

/// Entries in every net DIM table (Linux NET_DIM_PARAMS_NUM_PROFILES).
inline constexpr std::size_t net_dim_profile_count = 5;
/// Entries in the RDMA DIM table (Linux RDMA_DIM_PARAMS_NUM_PROFILES).
inline constexpr std::size_t rdma_dim_profile_count = 9;
/// The index a device's moderation starts at in Linux (net_dim_get_def_*_moderation).
inline constexpr std::uint8_t net_dim_default_profile_ix = 1;

/// When the device's moderation timer starts: at the event (EQE, Linux mode 0) or restarting at
/// every completion (CQE, Linux mode 1).
enum class dim_cq_period_mode : std::uint8_t { start_from_eqe = 0, start_from_cqe = 1 };
/// Which side of a queue a net table moderates.
enum class dim_direction : std::uint8_t { rx, tx };

/// What is wrong with a profile table.
enum class dim_profile_error : std::uint8_t { none, too_few_entries, too_many_entries };

/// A clear, static description of a profile error (for logs and command-line tools).
[[nodiscard]] constexpr const char* to_string(dim_profile_error e) noexcept {
    switch (e) {
    case dim_profile_error::none:
        return "ok";
    case dim_profile_error::too_few_entries:
        return "DIM profile table has too few entries (net DIM needs exactly 5, RDMA DIM 9)";
    case dim_profile_error::too_many_entries:
        return "DIM profile table has too many entries (net DIM needs exactly 5, RDMA DIM 9)";
    }
    return "unknown DIM profile error";
}

/// A profile table for a tuner with N indices. It remembers how many entries it was given, so a
/// table of the wrong length can be built (from user input) and then reported, never indexed.
template <std::size_t N>
class dim_profile {
public:
    static_assert(N > 0 && N <= 255, "a DIM index is a u8");
    /// Entries a valid table has.
    static constexpr std::size_t entry_count = N;

    /// An empty (invalid) table.
    constexpr dim_profile() noexcept = default;
    /// From a braced list: `net_dim_profile{{1, 256}, {8, 256}, ...}`.
    constexpr dim_profile(std::initializer_list<moderation> entries) noexcept
        : dim_profile(std::span<const moderation>(entries.begin(), entries.size())) {}
    /// From an array of exactly N entries (always valid).
    constexpr explicit dim_profile(const std::array<moderation, N>& entries) noexcept
        : entries_(entries), given_(N) {}
    /// From a run-time sequence (e.g. parsed configuration); check valid() afterwards.
    constexpr explicit dim_profile(std::span<const moderation> entries) noexcept
        : given_(entries.size()) {
        for (std::size_t i = 0; i < N && i < entries.size(); ++i) entries_[i] = entries[i];
    }

    /// Exactly N entries were given.
    [[nodiscard]] constexpr bool valid() const noexcept { return given_ == N; }
    [[nodiscard]] constexpr dim_profile_error error() const noexcept {
        return given_ == N  ? dim_profile_error::none
               : given_ < N ? dim_profile_error::too_few_entries
                            : dim_profile_error::too_many_entries;
    }
    [[nodiscard]] constexpr const char* error_message() const noexcept { return to_string(error()); }
    /// How many entries the table was built from (N when valid).
    [[nodiscard]] constexpr std::size_t given() const noexcept { return given_; }

    /// The setting at index ix. Precondition: ix < N (tuners never produce anything else).
    [[nodiscard]] constexpr const moderation& operator[](std::size_t ix) const noexcept {
        return entries_[ix];
    }
    [[nodiscard]] constexpr const std::array<moderation, N>& entries() const noexcept {
        return entries_;
    }
    [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }

    friend constexpr bool operator==(const dim_profile&, const dim_profile&) noexcept = default;

private:
    std::array<moderation, N> entries_{};
    std::size_t given_ = 0;
};

/// A net DIM table: exactly 5 entries.
using net_dim_profile = dim_profile<net_dim_profile_count>;
/// An RDMA DIM table: exactly 9 entries.
using rdma_dim_profile = dim_profile<rdma_dim_profile_count>;

// Linux lib/dim/net_dim.c: RX, EQE-based period mode (usec, pkts).
inline constexpr net_dim_profile net_dim_rx_eqe_profile{
    {1, 256, 0}, {8, 256, 0}, {64, 256, 0}, {128, 256, 0}, {256, 256, 0}};
// Linux lib/dim/net_dim.c: RX, CQE-based period mode (usec, pkts).
inline constexpr net_dim_profile net_dim_rx_cqe_profile{
    {2, 256, 0}, {8, 128, 0}, {16, 64, 0}, {32, 64, 0}, {64, 64, 0}};
// Linux lib/dim/net_dim.c: TX, EQE-based period mode (usec, pkts).
inline constexpr net_dim_profile net_dim_tx_eqe_profile{
    {1, 128, 0}, {8, 128, 0}, {32, 128, 0}, {64, 128, 0}, {128, 128, 0}};
// Linux lib/dim/net_dim.c: TX, CQE-based period mode (usec, pkts).
inline constexpr net_dim_profile net_dim_tx_cqe_profile{
    {5, 128, 0}, {8, 64, 0}, {16, 32, 0}, {32, 32, 0}, {64, 32, 0}};
// Linux drivers/infiniband/core/cq.c: the RDMA CQ table (usec, comps).
inline constexpr rdma_dim_profile rdma_dim_default_profile{
    {1, 0, 1},  {1, 0, 4},   {2, 0, 4},   {2, 0, 8},  {4, 0, 8},
    {16, 0, 8}, {16, 0, 16}, {32, 0, 16}, {32, 0, 32}};

/// The built-in net table for a direction and period mode.
[[nodiscard]] constexpr const net_dim_profile& net_dim_builtin_profile(dim_direction dir,
                                                                       dim_cq_period_mode mode) noexcept {
    if (dir == dim_direction::rx)
        return mode == dim_cq_period_mode::start_from_eqe ? net_dim_rx_eqe_profile
                                                          : net_dim_rx_cqe_profile;
    return mode == dim_cq_period_mode::start_from_eqe ? net_dim_tx_eqe_profile
                                                      : net_dim_tx_cqe_profile;
}

/// The moderation a device starts with in Linux: entry 1 of the built-in table.
[[nodiscard]] constexpr moderation net_dim_default_moderation(dim_direction dir,
                                                              dim_cq_period_mode mode) noexcept {
    return net_dim_builtin_profile(dir, mode)[net_dim_default_profile_ix];
}

static_assert(net_dim_rx_eqe_profile.valid() && net_dim_rx_cqe_profile.valid() &&
              net_dim_tx_eqe_profile.valid() && net_dim_tx_cqe_profile.valid() &&
              rdma_dim_default_profile.valid());
static_assert(!net_dim_profile{{1, 1, 0}}.valid());

} // namespace v0
} // namespace qlimits
