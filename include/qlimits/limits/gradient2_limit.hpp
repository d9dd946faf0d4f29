// SPDX-License-Identifier: MIT
// qlimits/limits/gradient2_limit.hpp: a limit driven by the ratio of a long-term to a short-term
// RTT, the peer users know as Netflix concurrency-limits' Gradient2Limit (Envoy's adaptive
// concurrency filter is its C++ sibling).
//
// Behaviour, described from Netflix/concurrency-limits (concurrency-limits-core,
// Gradient2Limit.java, the version with rttTolerance, and measurement/ExpAvgMeasurement.java;
// Apache-2.0) and re-written here:
//  - short RTT: the last sample; long RTT: the plain mean of the first `warmup` samples, then an
//    exponential average with factor 2 / (long_window + 1);
//  - when the long RTT is more than twice the short one (latency came back down after a long
//    overload) the long RTT is pulled down by `long_rtt_decay` (0.95) per such sample;
//  - when the caller uses less than half the limit, nothing more happens (app-limited);
//  - gradient = clamp(tolerance * long / short, 0.5, 1.0): 1 means "no queueing", and the
//    limit can at most halve per step;
//  - new = gradient * limit + queue_size(limit), smoothed: limit = (1 - s) * limit + s * new,
//    then clamped to [min_limit, max_limit]. queue_size is a constant (default 4) or, with
//    queue_growth::square_root, max(queue_size, floor(sqrt(limit))) (Netflix's
//    SquareRootFunction.create(baseline)).
// The limit counts items (Netflix's requests); the policy facade multiplies it by units_per_item.
//
// gradient2_rule is the sample-driven core; gradient2_limit<Clock> is the limit_policy that
// learns its samples on a ring (see qlimits/limits/peer_policy.hpp).
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>

#include "qlimits/limits/peer_policy.hpp"

namespace qlimits {
inline namespace v0 {

/// How Gradient2's queue_size term grows with the limit.
enum class queue_growth : std::uint8_t {
    constant,    ///< queue_size (Netflix's default `concurrency -> 4`)
    square_root, ///< max(queue_size, floor(sqrt(limit)))
};

/// Configuration of a gradient2_rule / gradient2_limit. Defaults are Netflix
/// Gradient2Limit.Builder's.
struct gradient2_config {
    std::uint32_t initial_limit = 20; ///< Builder initialLimit = 20 (clamped into [min, max])
    std::uint32_t min_limit = 20;     ///< Builder minLimit = 20
    std::uint32_t max_limit = 200;    ///< Builder maxConcurrency = 200
    double smoothing = 0.2;           ///< Builder smoothing = 0.2; in (0, 1]
    std::uint32_t queue_size = 4;     ///< Builder queueSize: concurrency -> 4
    queue_growth growth = queue_growth::constant;
    double tolerance = 1.5;          ///< Builder rttTolerance = 1.5; > 0
    std::uint32_t long_window = 600; ///< Builder longWindow = 600 samples
    std::uint32_t warmup = 10;       ///< ExpAvgMeasurement(longWindow, 10): plain mean first
    double long_rtt_decay = 0.95;    ///< applied while long > 2 * short; in (0, 1]
    /// Units one item counts for (1 for packet-counted rings; a typical item size for bytes).
    std::uint32_t units_per_item = 1;

    /// 1 <= min_limit <= max_limit, growth one of queue_growth's values, smoothing in (0, 1],
    /// tolerance > 0, long_window >= 1, warmup >= 1, long_rtt_decay in (0, 1], and
    /// max_limit * units_per_item within peer_max_limit. (A warmup of 0 started the long average at 0 and moved it by 2 / 601 of
    /// a sample at a time: under a steady RTT the gradient sat at its floor and the limit fell
    /// to the minimum; a review, 2026-12-05. Upstream's warm-up is fixed at 10.)
    [[nodiscard]] constexpr bool valid() const noexcept {
        return detail::peer_bounds_valid(min_limit, max_limit, units_per_item) &&
               (growth == queue_growth::constant || growth == queue_growth::square_root) &&
               smoothing > 0.0 && smoothing <= 1.0 && tolerance > 0.0 && long_window >= 1 && warmup >= 1 &&
               long_rtt_decay > 0.0 && long_rtt_decay <= 1.0;
    }
};

/// The Gradient2 rule alone: feed it samples, read the limit (in items).
class gradient2_rule {
public:
    using config_type = gradient2_config;
    /// The operations named in contract messages (config.hpp: `where` is the operation).
    static constexpr const char* where_completed = "gradient2_limit::on_completed";
    static constexpr const char* where_constructed = "gradient2_limit::gradient2_limit";

    /// cfg must be valid (the facade checks); initial_limit is clamped into [min, max].
    explicit constexpr gradient2_rule(const gradient2_config& cfg) noexcept : cfg_(cfg) { reset(); }

    /// One RTT sample: rtt (> 0; 0 is read as 1 ns), the items in flight when it was taken, and
    /// whether it was a drop (Gradient2 ignores drops, as Netflix's does). Returns the new limit.
    std::uint32_t on_sample(std::chrono::nanoseconds rtt, std::uint32_t inflight,
                            bool /*dropped*/) noexcept {
        const double queue = queue_term();
        short_rtt_ = static_cast<double>(rtt.count() > 0 ? rtt.count() : 1);
        add_long(short_rtt_);
        if (long_rtt_ > 2.0 * short_rtt_)
            long_rtt_ *= cfg_.long_rtt_decay;
        // The gradient uses the long RTT as it was before the decay (Netflix reads it first).
        if (static_cast<double>(inflight) < estimate_ / 2.0)
            return limit();
        double gradient = cfg_.tolerance * long_before_decay_ / short_rtt_;
        gradient = gradient < 0.5 ? 0.5 : (gradient > 1.0 ? 1.0 : gradient);
        const double next = estimate_ * gradient + queue;
        estimate_ =
            detail::clamp_limit_f((1.0 - cfg_.smoothing) * estimate_ + cfg_.smoothing * next,
                                  cfg_.min_limit, cfg_.max_limit);
        return limit();
    }

    /// Back to the initial limit with no RTT history.
    constexpr void reset() noexcept {
        estimate_ = static_cast<double>(detail::initial_limit_of(cfg_));
        short_rtt_ = 0;
        long_rtt_ = 0;
        long_before_decay_ = 0;
        long_sum_ = 0;
        long_count_ = 0;
    }

    /// The limit in items (the estimate rounded down, as Netflix's getLimit()).
    [[nodiscard]] constexpr std::uint32_t limit() const noexcept {
        return static_cast<std::uint32_t>(estimate_);
    }
    /// The last sample, in nanoseconds (0: none yet).
    [[nodiscard]] constexpr double short_rtt_ns() const noexcept { return short_rtt_; }
    /// The long-term average, in nanoseconds (0: none yet).
    [[nodiscard]] constexpr double long_rtt_ns() const noexcept { return long_rtt_; }
    [[nodiscard]] constexpr const gradient2_config& config() const noexcept { return cfg_; }

private:
    [[nodiscard]] double queue_term() const noexcept {
        const auto base = static_cast<double>(cfg_.queue_size);
        if (cfg_.growth == queue_growth::constant)
            return base;
        const double root = std::floor(std::sqrt(static_cast<double>(limit())));
        return root > base ? root : base;
    }
    constexpr void add_long(double sample) noexcept {
        if (long_count_ < cfg_.warmup) {
            ++long_count_;
            long_sum_ += sample;
            long_rtt_ = long_sum_ / static_cast<double>(long_count_);
        } else {
            const double f = 2.0 / (static_cast<double>(cfg_.long_window) + 1.0);
            long_rtt_ = long_rtt_ * (1.0 - f) + sample * f;
        }
        long_before_decay_ = long_rtt_;
    }

    gradient2_config cfg_;
    double estimate_ = 0;
    double short_rtt_ = 0;
    double long_rtt_ = 0;
    double long_before_decay_ = 0;
    double long_sum_ = 0;
    std::uint32_t long_count_ = 0;
};

/// Gradient2 as a limit policy (O(1), allocation-free; see peer_policy for threading and time).
template <clock_source Clock = steady_clock_source>
using gradient2_limit = peer_policy<gradient2_rule, Clock>;

static_assert(limit_policy<gradient2_limit<>>);
static_assert(limit_policy<gradient2_limit<manual_clock<>>>);

} // namespace v0
} // namespace qlimits
