// SPDX-License-Identifier: MIT
// qlimits/dim/net_dim.hpp: net DIM, the adaptive interrupt-moderation tuner of Linux's network
// drivers, with the behaviour of lib/dim/net_dim.c on 64-bit kernels. Written from a description
// of that behaviour (../shared/specs/dim.md), not from its code.
//
// Model: the driver feeds one sample per interrupt (or per poll round) with cumulative event,
// packet and byte counters. Once 64 events have passed since the window opened (and the window
// is at least 1 us long), the tuner rates the window (dim/stats.hpp) and compares it with the
// previous one: more bytes per ms is better; with bytes within 11%, more packets per ms; with
// both within 11%, fewer interrupts per ms. It then searches the 5-entry profile:
//  - parked on top: stays while windows compare SAME; anything else leaves parking (left if the
//    index is above 0, right otherwise) and steps at once;
//  - going right/left: a window that is not BETTER turns the search around; right after a turn
//    that undoes a single step following several, the best point is found: park on top; else
//    step (at an edge: park on top; after 10 steps without parking on top: park tired);
//  - parked tired: counts 10 decisions down without comparing, then leaves parking.
// The previous window's stats are replaced by the current ones after every decision except one
// that both starts and ends parked on top (the reference stays frozen while resting, so slow
// drift adds up until it crosses the threshold).
//
// A decision that moves the index returns true from on_sample(): apply moderation() through your
// hook (a device call, a busy-poll budget, a timer), then call on_applied(). Until then samples
// are ignored; the sample after on_applied() opens the next window. A decision that does not
// move the index opens the next window at the deciding sample. adapters/moderation.hpp does this
// handoff for you, synchronously or deferred.
//
// Time is the sample's: the tuner never reads a clock, and the sample that opens a window gives
// the window's start time.
//
// Threading: one tuner per queue, driven from one thread at a time (the queue's poll loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "qlimits/config.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/sample.hpp"
#include "qlimits/dim/stats.hpp"
#include "qlimits/dim/tuner.hpp"

namespace qlimits {
inline namespace v0 {

/// The net DIM tuner for one queue.
class net_dim {
public:
    using profile_type = net_dim_profile;
    /// Indices 0..4.
    static constexpr std::uint8_t profile_count = static_cast<std::uint8_t>(net_dim_profile_count);
    /// Steps without parking on top before the search rests (Linux: twice the profile count).
    static constexpr std::uint8_t tired_limit = 2 * profile_count;

    /// The state of a freshly zero-allocated kernel instance: start_measure, parked on top at
    /// index 0, all counters and stats zero; the RX EQE table.
    constexpr net_dim() noexcept = default;

    /// A tuner over `profile`, starting at index `ix` (default 1, the moderation a Linux device
    /// starts with; apply moderation() once at start-up so the device matches). An invalid
    /// profile or index is a contract violation; the default (RX EQE table, index 0) is kept.
    constexpr explicit net_dim(const net_dim_profile& profile,
                               std::uint8_t ix = net_dim_default_profile_ix) noexcept {
        (void)set_profile(profile);
        (void)set_profile_ix(ix);
    }

    /// Feed one sample. Returns true when a decision chose a new profile index: apply
    /// moderation(), then call on_applied(). The common case (fewer than 64 events since the
    /// window opened) is a subtraction and a compare.
    [[nodiscard]] constexpr bool on_sample(const dim_sample& s) noexcept {
        if (state_ == dim_state::measure_in_progress) {
            if (detail::dim_event_gap(s.events, start_.events) < dim_window_events) [[likely]]
                return false;
            return measure(s);
        }
        if (state_ == dim_state::start_measure) open_window(s);
        return false;
    }

    /// The user applied the chosen moderation: the next sample opens a new window. (Callable at
    /// any time; it always restarts measuring, as the kernel's driver work function does.)
    constexpr void on_applied() noexcept { state_ = dim_state::start_measure; }

    /// One decision on a window's stats (the part of on_sample() after the window is rated).
    /// Returns true if the profile index changed. Public for tests and simulators; it does not
    /// touch the measure/apply handoff.
    constexpr bool decide(const dim_stats& curr) noexcept {
        const dim_tune_state was = s_.t.tune;
        const std::uint8_t was_ix = s_.t.profile_ix;
        switch (s_.t.tune) {
        case dim_tune_state::parking_on_top:
            if (net_dim_compare(curr, prev_stats_) != dim_verdict::same) leave_parking();
            break;
        case dim_tune_state::parking_tired:
            s_.t.tired = static_cast<std::uint8_t>(s_.t.tired - 1);
            if (s_.t.tired == 0) leave_parking();
            break;
        case dim_tune_state::going_right:
        case dim_tune_state::going_left:
            if (net_dim_compare(curr, prev_stats_) != dim_verdict::better) s_.turn();
            if (s_.on_top()) {
                s_.park_on_top();
                break;
            }
            switch (step()) {
            case dim_step_result::on_edge:
                s_.park_on_top();
                break;
            case dim_step_result::too_tired:
                s_.park_tired();
                break;
            case dim_step_result::stepped:
                break;
            }
            break;
        }
        if (was != dim_tune_state::parking_on_top || s_.t.tune != dim_tune_state::parking_on_top)
            prev_stats_ = curr;
        return s_.t.profile_ix != was_ix;
    }

    /// Set the profile index (a driver's initial choice). Out of range (above 4) is a contract
    /// violation and is refused (returns false, state unchanged).
    constexpr bool set_profile_ix(std::uint8_t ix) noexcept {
        if (ix >= profile_count) {
            detail::contract_failed("net_dim::set_profile_ix", "profile index out of range (0..4)");
            return false;
        }
        s_.t.profile_ix = ix;
        return true;
    }

    /// Swap the profile table; the tuner's state is untouched (only the numbers moderation()
    /// returns change). A table without exactly 5 entries is a contract violation and is refused
    /// (returns false, the old table stays). Check profile.valid() first for user input.
    constexpr bool set_profile(const net_dim_profile& profile) noexcept {
        if (!profile.valid()) {
            detail::contract_failed("net_dim::set_profile", profile.error_message());
            return false;
        }
        profile_ = profile;
        return true;
    }

    /// The moderation at the current index: what the device should run.
    [[nodiscard]] constexpr const moderation& current_moderation() const noexcept {
        return profile_[s_.t.profile_ix];
    }
    [[nodiscard]] constexpr const net_dim_profile& profile() const noexcept { return profile_; }
    [[nodiscard]] constexpr std::uint8_t profile_ix() const noexcept { return s_.t.profile_ix; }
    [[nodiscard]] constexpr dim_tune_state tune_state() const noexcept { return s_.t.tune; }
    [[nodiscard]] constexpr std::uint8_t steps_left() const noexcept { return s_.t.steps_left; }
    [[nodiscard]] constexpr std::uint8_t steps_right() const noexcept { return s_.t.steps_right; }
    [[nodiscard]] constexpr std::uint8_t tired() const noexcept { return s_.t.tired; }
    [[nodiscard]] constexpr dim_tuning tuning() const noexcept { return s_.t; }
    [[nodiscard]] constexpr dim_state state() const noexcept { return state_; }
    /// A decision is waiting for on_applied().
    [[nodiscard]] constexpr bool pending() const noexcept {
        return state_ == dim_state::apply_new_profile;
    }
    /// The reference the next window is compared with.
    [[nodiscard]] constexpr const dim_stats& prev_stats() const noexcept { return prev_stats_; }
    /// The sample that opened the current window (completions: never updated by net DIM).
    [[nodiscard]] constexpr const dim_sample& start_sample() const noexcept { return start_; }

private:
    // Rare path: a full window. Kept out of line so on_sample() stays a few instructions.
    [[gnu::noinline]] constexpr bool measure(const dim_sample& s) noexcept {
        const std::optional<dim_stats> st = compute_dim_stats(start_, s);
        if (!st) return false; // 0 us: keep the window open
        if (decide(*st)) {
            state_ = dim_state::apply_new_profile; // the start sample is not re-seeded
            return true;
        }
        open_window(s);
        return false;
    }

    // The start sample takes the sample's events, packets, bytes and time; net DIM never
    // updates its completions.
    constexpr void open_window(const dim_sample& s) noexcept {
        start_.time = s.time;
        start_.events = s.events;
        start_.pkts = s.pkts;
        start_.bytes = s.bytes;
        state_ = dim_state::measure_in_progress;
    }

    constexpr dim_step_result step() noexcept {
        if (s_.t.tired == tired_limit) return dim_step_result::too_tired;
        if (s_.t.tune == dim_tune_state::going_right || s_.t.tune == dim_tune_state::going_left) {
            if (!s_.move(profile_count - 1)) return dim_step_result::on_edge;
        }
        s_.t.tired = static_cast<std::uint8_t>(s_.t.tired + 1);
        return dim_step_result::stepped;
    }

    // Leave parking towards the side with room, and step at once (its result is not used: the
    // tiredness is 0 on both ways in, and the direction always has room).
    constexpr void leave_parking() noexcept {
        s_.t.tune = s_.t.profile_ix > 0 ? dim_tune_state::going_left : dim_tune_state::going_right;
        (void)step();
    }

    // Hot fields first: the no-decision path reads state_ and start_.events only.
    dim_state state_ = dim_state::start_measure;
    dim_sample start_{};
    detail::dim_search s_{};
    dim_stats prev_stats_{};
    net_dim_profile profile_ = net_dim_rx_eqe_profile;
};

} // namespace v0
} // namespace qlimits
