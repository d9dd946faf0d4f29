// SPDX-License-Identifier: MIT
// qlimits/limits/peer_policy.hpp: the limit_policy facade of the peer policies (vegas_limit,
// gradient2_limit, aimd_limit): one sample-driven rule, the in-flight counters, and the way the
// rule learns its "RTT" on a ring.
//
// Model: the peers come from RPC concurrency limiting (Netflix concurrency-limits), where every
// request reports its round-trip time when it finishes. On a ring, an item's RTT is its sojourn:
// the time from enqueue to completion. The facade learns sojourns from its own calls, on the
// completion side alone (channel and tx_gate pass no time with an enqueue), with the library's
// sojourn_probe (qlimits/limits/sojourn_probe.hpp): at a completion it marks the cumulative
// queued count and the time; when the completed count passes the mark (rings are FIFO) the
// elapsed time is one sojourn sample, fed to the rule with the backlog seen at the mark as its
// "inflight" (Netflix passes the inflight seen when a request started).
// One sample is in flight at a time, so a rule sees about one sample per sojourn, whether the
// ring completes per item or per batch. Callers that measure sojourns themselves (or see drops)
// can feed the rule directly with on_sample().
//
// Limits: the rules count items (Netflix's requests). The policy's limit in units is the rule's
// limit times config.units_per_item (1 for packet-counted rings; for byte-counted rings a typical
// item size), and inflight is handed to the rule in items, rounded up. available() is
// limit - inflight, so (as with dql and fixed_limit) inflight reaches limit + the last item.
//
// Time: one tick is one Clock::duration; sojourns reach the rules in nanoseconds. Use a fine clock
// (the default steady_clock_source): a 1 ms tick reads most ring sojourns as 0 (Vegas ignores a
// 0 ns sample, as upstream; Gradient2 and AIMD read it as 1 ns). A negative one (a clock that
// stepped back) Vegas and AIMD ignore (AIMD still takes a drop) and Gradient2 reads as 1 ns.
//
// Threading: on_queued()/available() belong to the producer; on_completed(), on_sample(),
// reset() to the completion path. Each side must be serialised on its own; the two sides may run
// concurrently. stats() may be called from any thread (fields read one by one, relaxed).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/sojourn_probe.hpp"

namespace qlimits {
inline namespace v0 {

/// Largest limit in units a peer policy can publish (the same bound as dql_max_limit, so the
/// signed 32-bit available() never wraps while the producer honours it).
inline constexpr std::uint32_t peer_max_limit = fixed_max_limit;

namespace detail {
/// 1 <= min <= max and max * units_per_item within peer_max_limit.
[[nodiscard]] constexpr bool peer_bounds_valid(std::uint32_t min, std::uint32_t max,
                                               std::uint32_t units_per_item) noexcept {
    return min >= 1 && min <= max && units_per_item >= 1 &&
           std::uint64_t{max} * units_per_item <= peer_max_limit;
}
[[nodiscard]] constexpr std::uint32_t clamp_limit(std::uint64_t v, std::uint32_t lo,
                                                  std::uint32_t hi) noexcept {
    return static_cast<std::uint32_t>(v < lo ? lo : (v > hi ? hi : v));
}
[[nodiscard]] constexpr double clamp_limit_f(double v, std::uint32_t lo,
                                             std::uint32_t hi) noexcept {
    const auto l = static_cast<double>(lo);
    const auto h = static_cast<double>(hi);
    return v < l ? l : (v > h ? h : v);
}
/// A rule's starting limit: initial_limit clamped into [min_limit, max_limit].
template <class Config>
[[nodiscard]] constexpr std::uint32_t initial_limit_of(const Config& cfg) noexcept {
    return clamp_limit(cfg.initial_limit, cfg.min_limit, cfg.max_limit);
}
} // namespace detail

/// A point-in-time summary of a peer policy, readable from any thread.
struct peer_stats {
    std::uint32_t limit;             ///< the limit in units (rule limit * units_per_item)
    std::uint32_t inflight;          ///< queued - completed (mod 2^32)
    std::int64_t available;          ///< limit - inflight as signed 32-bit; < 0: stop
    std::uint64_t rejected_enqueues; ///< enqueues refused for exceeding max_object
    std::uint64_t samples;           ///< RTT (sojourn) samples fed to the rule
    std::uint64_t last_sojourn_ns;   ///< the last sample, in nanoseconds
};

/// A sample-driven Rule (vegas_rule, gradient2_rule, aimd_rule) as a limit policy.
template <class Rule, clock_source Clock>
class peer_policy {
public:
    using rule_type = Rule;
    using clock_type = Clock;
    using duration = typename Clock::duration;
    using time_point = typename Clock::time_point;
    using config_type = typename Rule::config_type;
    using stats_type = peer_stats;
    static constexpr std::uint32_t max_object = fixed_max_object;

    /// An invalid cfg is a contract violation; if the handler returns, the defaults are used.
    explicit peer_policy(const config_type& cfg, time_point) noexcept
        : peer_policy(checked_tag{}, usable(cfg), 0) {}
    peer_policy(const peer_policy&) = delete;
    peer_policy& operator=(const peer_policy&) = delete;

    // ---- producer side -------------------------------------------------------------------

    /// Report n units posted. Refused (false, only the rejection counted) when n > max_object,
    /// or over 2^31 - 1 units in flight (a producer that honours available() never gets there).
    bool on_queued(std::uint32_t n) noexcept { return n_.queue(n); }
    /// As on_queued(n); the time is not needed (sojourns are timed on the completion side).
    bool on_queued(std::uint32_t n, time_point) noexcept { return n_.queue(n); }
    /// limit - inflight as signed 32-bit; < 0: stop.
    [[nodiscard]] std::int64_t available() const noexcept {
        return static_cast<std::int32_t>(n_.p.limit.load(std::memory_order_relaxed) -
                                         n_.inflight());
    }

    // ---- completion side -----------------------------------------------------------------

    /// Report n units retired at `now`. A completion that finishes a sojourn measurement feeds
    /// the rule one sample. More than is in flight is a contract violation; if the handler
    /// returns, the call is refused (false) and nothing changes.
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        if (!n_.complete(n, Rule::where_completed)) [[unlikely]]
            return false;
        const std::uint64_t t = qlimits::ticks_of(now);
        const std::uint32_t done = n_.c.completed.load(std::memory_order_relaxed);
        if (probe_.on_completed(done, t)) {
            const auto& s = probe_.last();
            feed(to_ns(s.sojourn), items(s.backlog), false);
        }
        // The producer's line is read only to arm a measurement: once per sample while the ring
        // stays busy.
        if (!probe_.armed())
            probe_.arm(n_.p.queued.load(std::memory_order_relaxed), done, t);
        return true;
    }

    /// Feed the rule a sample measured elsewhere (a stamped item's sojourn, or a drop), with the
    /// items in flight when it was taken. Completion side.
    void on_sample(std::chrono::nanoseconds rtt, std::uint32_t inflight_items,
                   bool dropped) noexcept {
        feed(rtt, inflight_items, dropped);
    }

    /// Forget everything in flight and start the rule again; rejected_enqueues is kept (a
    /// lifetime count). Call only while neither side runs.
    void reset(time_point) noexcept {
        n_.reset();
        probe_.disarm();
        rule_.reset();
        publish(rule_.limit());
    }

    // ---- any side ------------------------------------------------------------------------

    /// The limit in units.
    [[nodiscard]] std::uint32_t limit() const noexcept {
        return n_.p.limit.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return n_.inflight(); }
    [[nodiscard]] peer_stats stats() const noexcept {
        return {limit(),
                inflight(),
                available(),
                n_.p.rejected.load(std::memory_order_relaxed),
                samples_.load(std::memory_order_relaxed),
                last_ns_.load(std::memory_order_relaxed)};
    }
    /// The rule (completion side or a quiescent policy): its own state, for tests and tracing.
    [[nodiscard]] const Rule& rule() const noexcept { return rule_; }
    [[nodiscard]] std::uint32_t units_per_item() const noexcept { return units_per_item_; }

private:
    // Three parameters, so no two-argument call (P p(cfg, {}), as for the library's other
    // policies) can mean this one.
    struct checked_tag {};
    peer_policy(checked_tag, const config_type& cfg, int) noexcept
        : rule_(cfg), units_per_item_(cfg.units_per_item) {
        publish(rule_.limit());
    }
    static const config_type& usable(const config_type& cfg) noexcept {
        if (cfg.valid()) [[likely]]
            return cfg;
        static constexpr config_type defaults{};
        detail::contract_failed(Rule::where_constructed, "invalid config (see its valid())");
        return defaults;
    }

    // Ticks to nanoseconds, rounded down and saturating (a clock that jumped by centuries
    // must not overflow). The product is formed in 128 bits before the division, so a period
    // that is not a whole number of nanoseconds (a 3.579545 MHz timer: 200000000/715909 ns)
    // loses less than one nanosecond, not whole ticks (review 2026-12-03).
    static std::chrono::nanoseconds to_ns(std::uint64_t ticks) noexcept {
        using per_tick = std::ratio_divide<typename duration::period, std::nano>;
        constexpr auto most = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        __extension__ using u128 = unsigned __int128; // GCC and Clang; not ISO C++
        const u128 ns = static_cast<u128>(ticks) * static_cast<std::uint64_t>(per_tick::num) /
                        static_cast<std::uint64_t>(per_tick::den);
        return std::chrono::nanoseconds{
            static_cast<std::int64_t>(ns > most ? most : static_cast<std::uint64_t>(ns))};
    }
    [[nodiscard]] std::uint32_t items(std::uint32_t units) const noexcept {
        return units / units_per_item_ + (units % units_per_item_ != 0 ? 1U : 0U);
    }
    void feed(std::chrono::nanoseconds rtt, std::uint32_t inflight_items, bool dropped) noexcept {
        publish(rule_.on_sample(rtt, inflight_items, dropped));
        samples_.store(samples_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        last_ns_.store(rtt.count() > 0 ? static_cast<std::uint64_t>(rtt.count()) : 0,
                       std::memory_order_relaxed);
    }
    // Rule limits are at most max_limit, and max_limit * units_per_item <= peer_max_limit.
    void publish(std::uint32_t items_limit) noexcept {
        n_.p.limit.store(items_limit * units_per_item_, std::memory_order_relaxed);
    }

    detail::baseline_counters n_; // producer line (queued, limit) and completion line
    Rule rule_;
    std::uint32_t units_per_item_;
    sojourn_probe probe_;
    std::atomic<std::uint64_t> samples_{0};
    std::atomic<std::uint64_t> last_ns_{0};
};

} // namespace v0
} // namespace qlimits
