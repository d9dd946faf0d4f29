// SPDX-License-Identifier: MIT
// qlimits/concepts.hpp: what a limit policy is.
//
// A limit policy decides how many units (bytes, or packets for packet-counted rings) may be in
// flight between a producer and a completion path. The producer reports each enqueue and asks
// available(); the completion path reports retired units with the current time. Policies are
// pure state machines: no clock reads, no allocation, no exceptions, no blocking.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "qlimits/clock.hpp"

namespace qlimits {
inline namespace v0 {

/// Tag: construct a policy's all-zero state, for a policy that has one (dql: a freshly
/// zero-allocated kernel struct, before dql_init). Trace replay starts there; real users want a
/// config. Wrappers (checked<>, recording<>, capturing<>) forward it.
struct zeroed_state_t {
    explicit constexpr zeroed_state_t() = default;
};
inline constexpr zeroed_state_t zeroed_state{};

/// A limit policy, as the adapters (tx_gate, channel) drive it.
///  - constructed in place from (config, now), never moved (it may hold atomics);
///  - on_queued(n[, now]) returns false when it refused the enqueue (state unchanged);
///  - on_completed(n, now) returns false when it refused the completion (state unchanged);
///  - available() < 0 means "over the limit, stop the producer".
template <class P>
concept limit_policy =
    requires {
        typename P::config_type;
        typename P::time_point;
        typename P::stats_type;
        { P::max_object } -> std::convertible_to<std::uint32_t>;
    } && std::default_initializable<typename P::config_type> &&
    std::is_nothrow_constructible_v<P, const typename P::config_type&, typename P::time_point> &&
    requires(P& p, const P& cp, std::uint32_t n, typename P::time_point now) {
        { cp.available() } noexcept -> std::same_as<std::int64_t>;
        { cp.limit() } noexcept -> std::same_as<std::uint32_t>;
        { cp.inflight() } noexcept -> std::same_as<std::uint32_t>;
        { p.on_queued(n) } noexcept -> std::same_as<bool>;
        { p.on_queued(n, now) } noexcept -> std::same_as<bool>;
        { p.on_completed(n, now) } noexcept -> std::same_as<bool>;
        { p.reset(now) } noexcept -> std::same_as<void>;
        { cp.stats() } noexcept -> std::same_as<typename P::stats_type>;
    };

/// Tag of an optional policy overload, on_completed(n, now, known_counted): the caller knows
/// that the n units were counted by on_queued() before (an adapter that saw them pass a FIFO
/// ahead of an item posted later), so the policy need not read the producer's count to check
/// for over-completion (the caller's knowledge is the check). Adapters call the overload where
/// a policy has it (fixed_limit, unlimited) and on_completed(n, now) otherwise. A caller that
/// is wrong corrupts the books for good (inflight() wraps; later over-completions pass) until
/// reset(): use the plain overload unless you can prove the count.
struct known_counted_t {
    explicit known_counted_t() = default;
};
inline constexpr known_counted_t known_counted{};

/// The policy has the on_completed(n, now, known_counted) overload.
template <class P>
concept accepts_known_counted =
    requires(P& p, std::uint32_t n, typename P::time_point now) {
        { p.on_completed(n, now, known_counted) } noexcept -> std::same_as<bool>;
    };

/// The policy has `bool may_post() noexcept`: available() >= 0, asked from the producer's
/// thread, possibly cheaper (fixed_limit's and dql's read the completion side's line only when
/// their last reading shows no room). Adapters use it for the producer's first look where
/// present.
template <class P>
concept has_may_post = requires(P& p) {
    { p.may_post() } noexcept -> std::same_as<bool>;
};

namespace detail {
/// The producer's first look, as the adapters take it: available() >= 0, by may_post() where
/// the policy has it.
template <class P>
[[nodiscard]] bool first_look(P& p) noexcept {
    if constexpr (has_may_post<P>)
        return p.may_post();
    else
        return p.available() >= 0;
}
} // namespace detail

/// The policy has `void on_unqueued(std::uint32_t n) noexcept`: n units reported by on_queued()
/// did not leave after all (the ring refused the item); take them back, on the producer's
/// thread. With it an adapter can count an item before the item becomes visible to the
/// completion side, so every completion is of counted units (channel then never reads the
/// producer's count to check). Only for policies whose on_queued() is a plain count that
/// subtracting undoes (fixed_limit, unlimited; not dql, whose on_queued() also records the
/// object's size for the completion side).
template <class P>
concept accepts_unqueue = requires(P& p, std::uint32_t n) {
    { p.on_unqueued(n) } noexcept -> std::same_as<void>;
};

/// The policy has `bool wants_post_time() const noexcept`, asked from the producer's thread:
/// true while it records when units are posted (dql with a stall threshold), so on_queued()
/// needs the time. Adapters that own a clock (channel) then call on_queued(n, now) instead of
/// on_queued(n), and read the clock only then.
template <class P>
concept asks_post_time = requires(const P& p) {
    { p.wants_post_time() } noexcept -> std::same_as<bool>;
};

/// The policy has `bool on_completed(std::uint32_t n, time_point seen, Now&& now) noexcept`
/// (dql): as on_completed(n, now()), where `seen` is a time no later than now (a clock reading
/// reused over several completions) that the policy may use only for decisions a later time
/// could only confirm (the end of a hold window: judged by `seen`, it comes late, never early),
/// and `now` a noexcept callable returning the time now, called where the policy keeps the time.
/// channel uses it on a coarse clock (detail/coarse_clock.hpp) and reads once per up to 16
/// completions (every completion while dql's stall detector is on: it keeps each one's time);
/// other policies get a reading per completion.
namespace detail {
/// A callable returning TimePoint that converts to nothing else: the probe of
/// accepts_seen_time (a function pointer would also match an overload taking a bool).
template <class TimePoint>
struct now_probe {
    TimePoint operator()() const noexcept;
};
} // namespace detail
template <class P>
concept accepts_seen_time =
    requires(P& p, std::uint32_t n, typename P::time_point seen,
             detail::now_probe<typename P::time_point> now) {
        { p.on_completed(n, seen, now) } noexcept -> std::same_as<bool>;
    };

/// The policy has `bool on_taken(std::uint32_t n, Now&& now) noexcept`: n units taken by the
/// consumer in one take (one pop, one batch), where `now` is a noexcept callable returning the
/// policy's time_point that the policy calls only when it needs the time (software_limit reads
/// it once every limit / 8 takes, about 8 times per limit's worth of items, instead of once per
/// item). Adapters use it in place of on_completed(n, now) where present; a policy gets one or
/// the other.
template <class P>
concept accepts_lazy_time =
    requires(P& p, std::uint32_t n, typename P::time_point (*now)() noexcept) {
        { p.on_taken(n, now) } noexcept -> std::same_as<bool>;
    };

/// The policy also has `bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept`:
/// same_take = true reports units that left the ring in the same take as the previous call's
/// (a batch taken at once and completed item by item), so the policy counts the parts as one
/// batch at one time. Adapters pass it where present (channel's receive_batch per item).
template <class P>
concept accepts_take_parts =
    accepts_lazy_time<P> &&
    requires(P& p, std::uint32_t n, typename P::time_point (*now)() noexcept, bool same) {
        { p.on_taken(n, now, same) } noexcept -> std::same_as<bool>;
    };

/// The policy has `void on_wake_call(typename P::time_point::duration spent) noexcept`, called
/// on the completion side after the call that woke a producer the limit had stopped, with the
/// time that call took (the system call of the wake-up). Adapters that make such a call
/// themselves and own a clock (channel) time it and report it where a policy has the hook
/// (software_limit), and only when a system call was made.
template <class P>
concept accepts_wake_call = requires(P& p, typename P::time_point::duration d) {
    { p.on_wake_call(d) } noexcept -> std::same_as<void>;
};

/// The policy has `void on_consumer_idle(typename P::time_point::duration spent) noexcept`,
/// called on the completion side when the consumer, having slept on an empty ring, is woken,
/// before it reports the take that follows, with the time it slept. Adapters that put the
/// consumer to sleep themselves and own a clock (channel) time that sleep and report it where
/// a policy has the hook (software_limit); the spin before a sleep is not timed.
template <class P>
concept accepts_consumer_idle = requires(P& p, typename P::time_point::duration d) {
    { p.on_consumer_idle(d) } noexcept -> std::same_as<void>;
};

namespace detail {
/// A base for policy wrappers (testing::checked, testing::recording): it declares the wrapped
/// policy's clock_type when that has one, so adapters pick the same default clock for the
/// wrapper as for the policy itself.
template <class Policy>
struct forward_clock_type {};
template <class Policy>
    requires requires { typename Policy::clock_type; }
struct forward_clock_type<Policy> {
    using clock_type = typename Policy::clock_type;
};
} // namespace detail

} // namespace v0
} // namespace qlimits
