// SPDX-License-Identifier: MIT
// qlimits/limits/aimd_limit.hpp: a loss-based additive-increase / multiplicative-decrease limit,
// the peer users know as Netflix concurrency-limits' AIMDLimit.
//
// Behaviour, described from Netflix/concurrency-limits (concurrency-limits-core, AIMDLimit.java at
// commit 784c960d, the version with min/max bounds; Apache-2.0) and re-written here:
//  - a sample that is a drop, or whose RTT is above `timeout`, multiplies the limit by
//    `backoff_ratio` (rounded down);
//  - otherwise, when the limit is being used (inflight at least half the limit), the limit grows
//    by one;
//  - otherwise (the caller is not using its limit) nothing changes;
//  - the result is clamped to [min_limit, max_limit].
// The limit counts items (Netflix's requests); the policy facade multiplies it by units_per_item.
//
// aimd_rule is the sample-driven core (one on_sample() per RTT sample, as Netflix's
// Limit.onSample); aimd_limit<Clock> is the limit_policy that learns its samples on a ring (see
// qlimits/limits/peer_policy.hpp).
#pragma once

#include <chrono>
#include <cstdint>

#include "qlimits/limits/peer_policy.hpp"

namespace qlimits {
inline namespace v0 {

/// Configuration of an aimd_rule / aimd_limit. Defaults are Netflix AIMDLimit.Builder's.
struct aimd_config {
    std::uint32_t initial_limit = 20; ///< Builder initialLimit = 20 (clamped into [min, max])
    std::uint32_t min_limit = 20;     ///< Builder minLimit = 20
    std::uint32_t max_limit = 200;    ///< Builder maxLimit = 200
    /// Multiplier on a drop or a timeout; Netflix requires [0.5, 1.0) and defaults to 0.9.
    double backoff_ratio = 0.9;
    /// An RTT (on a ring: a sojourn) above this counts as a drop. Netflix DEFAULT_TIMEOUT = 5 s,
    /// far above any ring's sojourn: set it to your sojourn budget (see docs/peers.md).
    std::chrono::nanoseconds timeout = std::chrono::seconds{5};
    /// Units one item counts for (1 for packet-counted rings; a typical item size for bytes).
    std::uint32_t units_per_item = 1;

    /// 1 <= min_limit <= max_limit, backoff_ratio in [0.5, 1), timeout > 0, and
    /// max_limit * units_per_item within peer_max_limit.
    [[nodiscard]] constexpr bool valid() const noexcept {
        return detail::peer_bounds_valid(min_limit, max_limit, units_per_item) &&
               backoff_ratio >= 0.5 && backoff_ratio < 1.0 && timeout.count() > 0;
    }
};

/// The AIMD rule alone: feed it samples, read the limit (in items).
class aimd_rule {
public:
    using config_type = aimd_config;
    /// The operations named in contract messages (config.hpp: `where` is the operation).
    static constexpr const char* where_completed = "aimd_limit::on_completed";
    static constexpr const char* where_constructed = "aimd_limit::aimd_limit";

    /// cfg must be valid (the facade checks); initial_limit is clamped into [min, max].
    explicit constexpr aimd_rule(const aimd_config& cfg) noexcept
        : cfg_(cfg), limit_(detail::initial_limit_of(cfg)) {}

    /// One RTT sample: rtt, the items in flight when it was taken, and whether it was a drop.
    /// Returns the new limit. A negative rtt (a clock that stepped back) is ignored unless it is
    /// a drop: read as a good sample it raised the limit (a review, 2026-12-06); Vegas ignores
    /// such samples too. 0 is a good sample (both stamps in one tick of a coarse clock).
    constexpr std::uint32_t on_sample(std::chrono::nanoseconds rtt, std::uint32_t inflight,
                                      bool dropped) noexcept {
        if (rtt.count() < 0 && !dropped) [[unlikely]]
            return limit_;
        std::uint64_t next = limit_;
        if (dropped || rtt > cfg_.timeout) {
            next = static_cast<std::uint64_t>(static_cast<double>(limit_) * cfg_.backoff_ratio);
        } else if (2 * static_cast<std::uint64_t>(inflight) >= limit_) {
            next = std::uint64_t{limit_} + 1;
        }
        limit_ = detail::clamp_limit(next, cfg_.min_limit, cfg_.max_limit);
        return limit_;
    }
    /// Back to the initial limit.
    constexpr void reset() noexcept { limit_ = detail::initial_limit_of(cfg_); }
    [[nodiscard]] constexpr std::uint32_t limit() const noexcept { return limit_; }
    [[nodiscard]] constexpr const aimd_config& config() const noexcept { return cfg_; }

private:
    aimd_config cfg_;
    std::uint32_t limit_;
};

/// AIMD as a limit policy (O(1), allocation-free; see peer_policy for threading and time).
template <clock_source Clock = steady_clock_source>
using aimd_limit = peer_policy<aimd_rule, Clock>;

static_assert(limit_policy<aimd_limit<>>);
static_assert(limit_policy<aimd_limit<manual_clock<>>>);

} // namespace v0
} // namespace qlimits
