// The limit policies a scenario compares, behind one small interface so a scenario runs any of
// them. dql is the library's own qlimits::dql, driven with simulated time: the simulator never
// re-implements a policy it measures.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "engine.hpp"
#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/limits/dql.hpp"

namespace lab::sim {

/// What a scenario needs from a limit policy. Units are the scenario's (bytes for a NIC ring,
/// 1 per packet for a software ring, as veth's BQL charges).
class sim_policy {
public:
    virtual ~sim_policy() = default;
    virtual void queued(std::uint32_t units, ns_t now) = 0;
    virtual void completed(std::uint32_t units, ns_t now) = 0;
    /// True when the producer must stop (the policy's available() < 0).
    [[nodiscard]] virtual bool over_limit() const = 0;
    /// The limit, if the policy has one.
    [[nodiscard]] virtual std::optional<std::uint32_t> limit() const = 0;
    /// Units queued and not yet reported completed.
    [[nodiscard]] virtual std::uint32_t inflight() const = 0;
};

/// Any qlimits::limit_policy, fed simulated nanoseconds converted to the policy's own tick.
template <qlimits::limit_policy P>
class library_policy final : public sim_policy {
public:
    explicit library_policy(const typename P::config_type& cfg) : p_(cfg, to_tick(0)) {}
    void queued(std::uint32_t units, ns_t now) override { p_.on_queued(units, to_tick(now)); }
    void completed(std::uint32_t units, ns_t now) override { p_.on_completed(units, to_tick(now)); }
    [[nodiscard]] bool over_limit() const override { return p_.available() < 0; }
    [[nodiscard]] std::optional<std::uint32_t> limit() const override { return p_.limit(); }
    [[nodiscard]] std::uint32_t inflight() const override { return p_.inflight(); }
    [[nodiscard]] const P& policy() const noexcept { return p_; }

private:
    // Truncation, as a kernel reads jiffies: a 1 ms tick sees every time in [k ms, k+1 ms) as k.
    static typename P::time_point to_tick(ns_t now) {
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
class unlimited_policy final : public sim_policy {
public:
    void queued(std::uint32_t units, ns_t) override { queued_ += units; }
    void completed(std::uint32_t units, ns_t) override { completed_ += units; }
    [[nodiscard]] bool over_limit() const override { return false; }
    [[nodiscard]] std::optional<std::uint32_t> limit() const override { return std::nullopt; }
    [[nodiscard]] std::uint32_t inflight() const override { return queued_ - completed_; }

private:
    std::uint32_t queued_ = 0, completed_ = 0;
};

/// A constant limit with DQL's stopping rule (stop once available = limit - inflight < 0), so
/// it overshoots by the same one object a DQL producer does and the comparison is like for like.
class fixed_policy final : public sim_policy {
public:
    explicit fixed_policy(std::uint32_t limit) : limit_(limit) {}
    void queued(std::uint32_t units, ns_t) override { queued_ += units; }
    void completed(std::uint32_t units, ns_t) override { completed_ += units; }
    [[nodiscard]] bool over_limit() const override {
        return static_cast<std::int64_t>(limit_) - static_cast<std::int64_t>(inflight()) < 0;
    }
    [[nodiscard]] std::optional<std::uint32_t> limit() const override { return limit_; }
    [[nodiscard]] std::uint32_t inflight() const override { return queued_ - completed_; }

private:
    std::uint32_t limit_;
    std::uint32_t queued_ = 0, completed_ = 0;
};

} // namespace lab::sim
