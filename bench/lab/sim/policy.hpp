// The limit policies a scenario compares, behind one small interface so a scenario runs any of
// them. Every one is the library's own (qlimits::dql, fixed_limit, unlimited), driven with
// simulated time: the simulator never re-implements a policy it measures.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>

#include "engine.hpp"
#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/software_limit.hpp"

namespace lab::sim {

/// What a scenario needs from a limit policy. Units are the scenario's (bytes for a NIC ring,
/// 1 per packet for a software ring, as veth's BQL charges).
class sim_policy {
public:
    virtual ~sim_policy() = default;
    /// False when the policy refused the units (more than its largest object): nothing counted.
    virtual bool queued(std::uint32_t units, ns_t now) noexcept = 0;
    /// The same without a time (the channel's producer counts without reading a clock).
    virtual bool queued(std::uint32_t units) noexcept = 0;
    virtual bool completed(std::uint32_t units, ns_t now) noexcept = 0;
    /// Units taken by a consumer (the real pipeline's channel), the time read through now(ctx)
    /// only when the policy needs it (software_limit::on_taken); the others read it once per
    /// call, as the channel does for them. same_take: a later part of the previous call's take
    /// (software_limit counts the parts as one batch at one time; the others ignore it).
    using now_fn = ns_t (*)(const void* ctx) noexcept;
    virtual bool taken(std::uint32_t units, now_fn now, const void* ctx, bool same_take) noexcept {
        (void)same_take;
        return completed(units, now(ctx));
    }
    /// The consumer spent `spent` ns in the call that woke the stopped producer (a twin's
    /// simulated futex wake, the real pipeline's timed one): told to a policy that weighs it
    /// (qlimits::accepts_wake_call: software_limit), ignored by the others.
    virtual void wake_call(ns_t spent) noexcept { (void)spent; }
    /// The consumer slept `spent` ns on an empty ring before this take (a twin's simulated
    /// futex wait, the real pipeline's timed one): told to a policy that weighs it
    /// (qlimits::accepts_consumer_idle: software_limit), ignored by the others.
    virtual void consumer_idle(ns_t spent) noexcept { (void)spent; }
    virtual void reset(ns_t now) noexcept = 0;
    /// Whether the next queued() needs its time (qlimits::asks_post_time: dql's stall
    /// detector); a caller that has no time at hand calls queued(units) otherwise.
    [[nodiscard]] virtual bool wants_post_time() const noexcept { return false; }
    /// Units the producer may still queue; below 0 it must stop.
    [[nodiscard]] virtual std::int64_t available() const noexcept = 0;
    /// True when the producer must stop (available() < 0).
    [[nodiscard]] bool over_limit() const noexcept { return available() < 0; }
    /// The limit, if the policy has one.
    [[nodiscard]] virtual std::optional<std::uint32_t> limit() const noexcept = 0;
    /// Units queued and not yet reported completed.
    [[nodiscard]] virtual std::uint32_t inflight() const noexcept = 0;
};

/// Any qlimits::limit_policy, fed simulated nanoseconds converted to the policy's own tick.
/// HasLimit = false hides the limit of a policy that has none (qlimits::unlimited reports
/// UINT32_MAX), so tables and plots show "no limit" rather than 4 billion.
template <qlimits::limit_policy P, bool HasLimit = true>
class library_policy final : public sim_policy {
public:
    explicit library_policy(const typename P::config_type& cfg) : p_(cfg, to_tick(0)) {}
    bool queued(std::uint32_t units, ns_t now) noexcept override {
        return p_.on_queued(units, to_tick(now));
    }
    bool queued(std::uint32_t units) noexcept override { return p_.on_queued(units); }
    [[nodiscard]] bool wants_post_time() const noexcept override {
        if constexpr (qlimits::asks_post_time<P>)
            return p_.wants_post_time();
        else
            return false;
    }
    bool completed(std::uint32_t units, ns_t now) noexcept override {
        return p_.on_completed(units, to_tick(now));
    }
    bool taken(std::uint32_t units, now_fn now, const void* ctx,
               bool same_take) noexcept override {
        const auto read = [now, ctx]() noexcept { return to_tick(now(ctx)); };
        if constexpr (qlimits::accepts_take_parts<P>)
            return p_.on_taken(units, read, same_take);
        else if constexpr (qlimits::accepts_lazy_time<P>)
            return p_.on_taken(units, read);
        else
            return p_.on_completed(units, to_tick(now(ctx)));
    }
    void wake_call(ns_t spent) noexcept override {
        if constexpr (qlimits::accepts_wake_call<P>)
            p_.on_wake_call(std::chrono::duration_cast<typename P::time_point::duration>(
                std::chrono::nanoseconds{static_cast<std::int64_t>(spent)}));
    }
    void consumer_idle(ns_t spent) noexcept override {
        if constexpr (qlimits::accepts_consumer_idle<P>)
            p_.on_consumer_idle(std::chrono::duration_cast<typename P::time_point::duration>(
                std::chrono::nanoseconds{static_cast<std::int64_t>(spent)}));
    }
    void reset(ns_t now) noexcept override { p_.reset(to_tick(now)); }
    [[nodiscard]] std::int64_t available() const noexcept override { return p_.available(); }
    [[nodiscard]] std::optional<std::uint32_t> limit() const noexcept override {
        if constexpr (HasLimit) return p_.limit();
        return std::nullopt;
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept override { return p_.inflight(); }
    [[nodiscard]] const P& policy() const noexcept { return p_; }

private:
    // Truncation, as a kernel reads jiffies: a 1 ms tick sees every time in [k ms, k+1 ms) as k.
    static typename P::time_point to_tick(ns_t now) noexcept {
        using d = typename P::time_point::duration;
        return typename P::time_point{std::chrono::duration_cast<d>(
            std::chrono::nanoseconds{static_cast<std::int64_t>(now)})};
    }
    P p_;
};

/// The simulator runs dql on a 1 ms tick: Linux measures hold_time (and the stall detector) in
/// jiffies, and a distribution kernel's jiffy is 1 ms (HZ=1000). With a nanosecond tick the
/// default stall threshold window would span 256 ns instead of 256 ms.
using sim_dql = qlimits::dql<qlimits::manual_clock<std::chrono::milliseconds>>;

struct dql_params {
    std::uint32_t min_limit = 0;
    std::uint32_t max_limit = qlimits::dql_max_limit;
    std::int64_t hold_ms = 1000;
};

inline std::unique_ptr<sim_policy> make_dql(const dql_params& p) {
    sim_dql::config_type cfg{};
    cfg.min_limit = p.min_limit;
    cfg.max_limit = p.max_limit;
    cfg.hold_time = std::chrono::milliseconds{p.hold_ms};
    return std::make_unique<library_policy<sim_dql>>(cfg);
}

/// No limit at all: only the ring's capacity stops the producer (the "BQL disabled" runs).
/// The library's qlimits::unlimited, reported as having no limit.
inline std::unique_ptr<sim_policy> make_unlimited() {
    using P = qlimits::unlimited<qlimits::manual_clock<std::chrono::milliseconds>>;
    return std::make_unique<library_policy<P, false>>(typename P::config_type{});
}

/// A constant limit: the library's qlimits::fixed_limit, which stops the producer on DQL's rule
/// (available = limit - inflight < 0), so it overshoots by the same one object a DQL producer
/// does and the comparison is like for like.
inline std::unique_ptr<sim_policy> make_fixed(std::uint32_t limit) {
    using P = qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>>;
    typename P::config_type cfg{};
    cfg.limit = limit;
    return std::make_unique<library_policy<P>>(cfg);
}

/// The software-interface limit on a nanosecond clock (the simulator's own unit: its windows,
/// budgets and sojourn samples are microseconds, which a 1 ms tick could not see).
using sim_software = qlimits::software_limit<qlimits::manual_clock<std::chrono::nanoseconds>>;

/// qlimits::software_limit with its defaults, except the sojourn budget (--sojourn-us), the
/// wake cost's prior and learning (--wake-cost-ns, --learn-wake) and the overhead share
/// (--overhead-share-pct).
inline std::unique_ptr<sim_policy> make_software(double sojourn_us, double wake_cost_ns,
                                                 bool learn_wake, double overhead_share_pct) {
    qlimits::software_limit_config cfg{};
    cfg.sojourn_budget =
        std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(sojourn_us * 1000.0))};
    cfg.wake_cost = std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(wake_cost_ns))};
    cfg.learn_wake_cost = learn_wake;
    cfg.overhead_share_pct = static_cast<std::uint32_t>(overhead_share_pct);
    return std::make_unique<library_policy<sim_software>>(cfg);
}

} // namespace lab::sim
