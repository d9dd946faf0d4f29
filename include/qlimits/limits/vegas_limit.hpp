// SPDX-License-Identifier: MIT
// qlimits/limits/vegas_limit.hpp: a delay-based limit after TCP Vegas, the peer users know as
// Netflix concurrency-limits' VegasLimit.
//
// Behaviour, described from Netflix/concurrency-limits (concurrency-limits-core, VegasLimit.java
// at commit 141214dc and functions/Log10RootFunction.java; Apache-2.0) and re-written here:
//  - the policy keeps the smallest RTT seen (the no-load RTT) and estimates the queue it is
//    building as  queue = ceil(limit * (1 - rtt_noload / rtt));
//  - with lg = max(1, floor(log10(limit))), the thresholds are alpha = 3*lg, beta = 6*lg and
//    threshold = lg;
//  - on a drop the limit falls by lg; else, when the caller uses less than half the limit,
//    nothing changes (no upward drift while idle); else a queue up to `threshold` grows the
//    limit by beta (no queueing: grow fast), below alpha by lg, above beta the limit falls by
//    lg, and between alpha and beta it holds;
//  - the result is clamped to [min_limit, max_limit] and then smoothed:
//    limit = (1 - smoothing) * limit + smoothing * new;
//  - probing: every jitter * probe_multiplier * limit samples (jitter uniform in [0.5, 1), drawn
//    again after each probe) the current sample becomes the no-load RTT, so a baseline that
//    rose for good (a slower consumer) is re-learnt; a sample below the no-load RTT replaces
//    it. Neither sample changes the limit.
// Netflix's log10 table covers limits below 1000 and falls back to sqrt above (the square-root
// function's code); its comment and name say log10, which is what this rule uses everywhere.
// The jitter comes from a small deterministic generator seeded by the config (Netflix uses
// ThreadLocalRandom), so runs replay exactly.
// The limit counts items (Netflix's requests); the policy facade multiplies it by units_per_item.
//
// vegas_rule is the sample-driven core; vegas_limit<Clock> is the limit_policy that learns its
// samples on a ring (see qlimits/limits/peer_policy.hpp).
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>

#include "qlimits/limits/peer_policy.hpp"

namespace qlimits {
inline namespace v0 {

/// Configuration of a vegas_rule / vegas_limit. Defaults are Netflix VegasLimit.Builder's.
struct vegas_config {
    std::uint32_t initial_limit = 20;    ///< Builder initialLimit = 20 (clamped into [min, max])
    std::uint32_t min_limit = 1;         ///< VegasLimit clamps to at least 1
    std::uint32_t max_limit = 1000;      ///< Builder maxConcurrency = 1000
    double smoothing = 1.0;              ///< Builder smoothing = 1.0 (no smoothing); in (0, 1]
    std::uint32_t probe_multiplier = 30; ///< Builder probeMultiplier = 30
    std::uint64_t seed = 0x5EED'0F'7E6A5ULL; ///< seed of the probe jitter (ours)
    /// Units one item counts for (1 for packet-counted rings; a typical item size for bytes).
    std::uint32_t units_per_item = 1;

    /// 1 <= min_limit <= max_limit, smoothing in (0, 1], probe_multiplier >= 1, and
    /// max_limit * units_per_item within peer_max_limit.
    [[nodiscard]] constexpr bool valid() const noexcept {
        return detail::peer_bounds_valid(min_limit, max_limit, units_per_item) && smoothing > 0.0 &&
               smoothing <= 1.0 && probe_multiplier >= 1;
    }
};

/// max(1, floor(log10(v))): Netflix's Log10RootFunction with baseline 0 (see the file comment).
[[nodiscard]] constexpr std::uint32_t vegas_log10_root(std::uint32_t v) noexcept {
    std::uint32_t digits_after_first = 0;
    for (std::uint32_t x = v; x >= 10; x /= 10)
        ++digits_after_first;
    return digits_after_first > 1 ? digits_after_first : 1;
}

/// The Vegas rule alone: feed it samples, read the limit (in items).
class vegas_rule {
public:
    using config_type = vegas_config;
    /// The operations named in contract messages (config.hpp: `where` is the operation).
    static constexpr const char* where_completed = "vegas_limit::on_completed";
    static constexpr const char* where_constructed = "vegas_limit::vegas_limit";

    /// cfg must be valid (the facade checks); initial_limit is clamped into [min, max].
    explicit constexpr vegas_rule(const vegas_config& cfg) noexcept : cfg_(cfg) { reset(); }

    /// One RTT sample: rtt, the items in flight when it was taken, and whether it was a drop.
    /// Returns the new limit. A sample of 0 ns or less is ignored (Netflix's VegasLimit refuses
    /// it: "rtt must be >0"): taken as a 1 ns no-load RTT it made every later sample look
    /// queued and cut the limit until the next probe (review 2026-12-03). It happens with
    /// completions within one tick of the probe's arming on a coarse clock.
    std::uint32_t on_sample(std::chrono::nanoseconds rtt, std::uint32_t inflight,
                            bool dropped) noexcept {
        if (rtt.count() <= 0) [[unlikely]]
            return limit();
        const auto r = static_cast<std::uint64_t>(rtt.count());
        ++since_probe_;
        if (static_cast<double>(since_probe_) >=
            jitter_ * static_cast<double>(cfg_.probe_multiplier) * estimate_) {
            // Probe: take this sample as the new baseline, whatever it is.
            since_probe_ = 0;
            draw_jitter();
            rtt_noload_ = r;
            ++probes_;
            return limit();
        }
        if (rtt_noload_ == 0 || r < rtt_noload_) {
            rtt_noload_ = r;
            return limit();
        }
        const std::uint32_t cur = limit();
        const std::uint32_t lg = vegas_log10_root(cur);
        const double queue = std::ceil(
            estimate_ * (1.0 - static_cast<double>(rtt_noload_) / static_cast<double>(r)));
        double next = estimate_;
        if (dropped) {
            next = estimate_ - lg;
        } else if (2.0 * static_cast<double>(inflight) < estimate_) {
            return cur; // not using the limit: do not drift up
        } else if (queue <= static_cast<double>(lg)) {
            next = estimate_ + 6.0 * lg; // no queueing: grow by beta
        } else if (queue < 3.0 * lg) {
            next = estimate_ + lg;
        } else if (queue > 6.0 * lg) {
            next = estimate_ - lg;
        } else {
            return cur; // between alpha and beta: the sweet spot
        }
        next = detail::clamp_limit_f(next, cfg_.min_limit, cfg_.max_limit);
        // Clamped again after smoothing: a mix of two in-range values can round to just below
        // min_limit (10 * (1 - s) + 10 * s = 9.999...), which would read as min_limit - 1.
        estimate_ =
            detail::clamp_limit_f((1.0 - cfg_.smoothing) * estimate_ + cfg_.smoothing * next,
                                  cfg_.min_limit, cfg_.max_limit);
        return limit();
    }

    /// Back to the initial limit, no baseline, the jitter generator re-seeded.
    constexpr void reset() noexcept {
        estimate_ = static_cast<double>(detail::initial_limit_of(cfg_));
        rtt_noload_ = 0;
        since_probe_ = 0;
        probes_ = 0;
        rng_ = cfg_.seed;
        draw_jitter();
    }

    /// The limit in items (the estimate rounded down, as Netflix's getLimit()).
    [[nodiscard]] constexpr std::uint32_t limit() const noexcept {
        return static_cast<std::uint32_t>(estimate_);
    }
    /// The no-load RTT in nanoseconds (0: no sample yet).
    [[nodiscard]] constexpr std::uint64_t rtt_noload_ns() const noexcept { return rtt_noload_; }
    /// Probes taken so far.
    [[nodiscard]] constexpr std::uint64_t probes() const noexcept { return probes_; }
    /// The probe jitter now in force, in [0.5, 1).
    [[nodiscard]] constexpr double jitter() const noexcept { return jitter_; }
    [[nodiscard]] constexpr const vegas_config& config() const noexcept { return cfg_; }

private:
    // splitmix64: one multiply-xorshift step per probe, enough to de-synchronise policies.
    constexpr void draw_jitter() noexcept {
        rng_ += 0x9E37'79B9'7F4A'7C15ULL;
        std::uint64_t z = rng_;
        z = (z ^ (z >> 30)) * 0xBF58'476D'1CE4'E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D0'49BB'1331'11EBULL;
        z ^= z >> 31;
        // 52 random bits, exact in [0.5, 1) (0.5 + 0.5 * (53 bits) rounded the largest draw,
        // 1 - 2^-54, up to 1.0; a review, 2026-12-05).
        jitter_ = 0.5 + static_cast<double>(z >> 12) * 0x1.0p-53;
    }

    vegas_config cfg_;
    double estimate_ = 0;
    std::uint64_t rtt_noload_ = 0;
    std::uint64_t since_probe_ = 0;
    std::uint64_t probes_ = 0;
    std::uint64_t rng_ = 0;
    double jitter_ = 0.5;
};

/// Vegas as a limit policy (O(1), allocation-free; see peer_policy for threading and time).
template <clock_source Clock = steady_clock_source>
using vegas_limit = peer_policy<vegas_rule, Clock>;

static_assert(limit_policy<vegas_limit<>>);
static_assert(limit_policy<vegas_limit<manual_clock<>>>);

} // namespace v0
} // namespace qlimits
