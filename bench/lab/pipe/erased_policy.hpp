// A registry policy (lab::sim::sim_policy) behind the library's limit_policy interface, so the
// real pipeline's qlimits::channel runs exactly the policies the simulator runs, built by the
// same registry factories. Every policy, `none` included, pays the same virtual call per
// operation, so the comparison between them stays like for like.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "qlimits/clock.hpp"
#include "qlimits/limits/dql.hpp"
#include "sim/policy.hpp"

namespace lab::pipe {

class erased_policy {
public:
    struct config_type {
        std::shared_ptr<sim::sim_policy> impl; ///< built by a registry entry's factory
    };
    using clock_type = qlimits::steady_clock_source; // nanoseconds: the simulator's unit too
    using time_point = clock_type::time_point;
    struct stats_type {
        std::uint32_t limit = 0;
        std::uint32_t inflight = 0;
    };
    // The largest object any lab policy admits (the library's DQL bound).
    static constexpr std::uint32_t max_object = qlimits::dql_max_object;

    erased_policy(const config_type& cfg, time_point now) noexcept : p_(cfg.impl) {
        p_->reset(ns(now));
    }
    erased_policy(const erased_policy&) = delete;
    erased_policy& operator=(const erased_policy&) = delete;

    [[nodiscard]] std::int64_t available() const noexcept { return p_->available(); }
    [[nodiscard]] std::uint32_t limit() const noexcept { return p_->limit().value_or(UINT32_MAX); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return p_->inflight(); }
    bool on_queued(std::uint32_t n) noexcept { return p_->queued(n); }
    bool on_queued(std::uint32_t n, time_point now) noexcept { return p_->queued(n, ns(now)); }
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        return p_->completed(n, ns(now));
    }
    /// Whether the next post needs its time (dql with a stall threshold): the channel then
    /// calls on_queued(n, now), as it does for the policy outside the lab.
    [[nodiscard]] bool wants_post_time() const noexcept { return p_->wants_post_time(); }
    /// One take, the time read only if the policy needs it (software_limit reads it about once
    /// per limit / 8 takes; the others once per call). What the channel does for every lab
    /// policy; outside the lab some take cheaper paths this interface cannot offer per policy:
    /// fixed_limit and unlimited count before the push (on_unqueued) and skip the clock
    /// (uses_time = false), fixed_limit and dql ask may_post() instead of available(), dql
    /// reads a coarse clock. The lab's rows therefore all pay the same: the
    /// same virtual calls, available() on every send.
    template <class Now>
        requires std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return on_taken(n, now, false);
    }
    /// A later part of the previous call's take (receive_batch() completed per item).
    template <class Now>
        requires std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        return p_->taken(
            n,
            [](const void* ctx) noexcept {
                return ns((*static_cast<const std::remove_reference_t<Now>*>(ctx))());
            },
            &now, same_take);
    }
    /// A timed wake call, forwarded to every lab policy (those that do not weigh it ignore it):
    /// the channel then times its wake-ups for every row alike, two clock reads per system call.
    void on_wake_call(time_point::duration spent) noexcept {
        p_->wake_call(spent.count() < 0 ? 0 : static_cast<sim::ns_t>(spent.count()));
    }
    /// A timed consumer sleep, forwarded to every lab policy as the wake calls are.
    void on_consumer_idle(time_point::duration spent) noexcept {
        p_->consumer_idle(spent.count() < 0 ? 0 : static_cast<sim::ns_t>(spent.count()));
    }
    void reset(time_point now) noexcept { p_->reset(ns(now)); }
    [[nodiscard]] stats_type stats() const noexcept { return {limit(), inflight()}; }
    /// The registry's view of the same policy (has a limit or not).
    [[nodiscard]] const sim::sim_policy& impl() const noexcept { return *p_; }

private:
    static sim::ns_t ns(time_point t) noexcept {
        return static_cast<sim::ns_t>(t.time_since_epoch().count());
    }
    std::shared_ptr<sim::sim_policy> p_;
};

} // namespace lab::pipe
