// SPDX-License-Identifier: MIT
// qlimits/dim/net_dim.hpp: net DIM, the adaptive interrupt-moderation tuner of Linux's network
// drivers, with the behaviour of lib/dim/net_dim.c on 64-bit kernels. Written from a description
// of that behaviour (docs/design.md §5), not from its code.
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
// A decision that moves the index returns true from on_sample(): apply current_moderation()
// through your hook (a device call, a busy-poll budget, a timer), then call on_applied(). Until
// then samples are ignored; the sample after on_applied() opens the next window. A decision that does not
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
class net_dim : public detail::dim_tuner_base<net_dim, net_dim_profile> {
    using base = detail::dim_tuner_base<net_dim, net_dim_profile>;
    friend base;
    static constexpr const char* set_profile_ix_where = "net_dim::set_profile_ix";
    static constexpr const char* ix_out_of_range = "profile index out of range (0..4)";
    static constexpr const char* set_profile_where = "net_dim::set_profile";

public:
    /// Steps without parking on top before the search rests (Linux: twice the profile count).
    static constexpr std::uint8_t tired_limit = 2 * profile_count;

    /// The state of a freshly zero-allocated kernel instance: start_measure, parked on top at
    /// index 0, all counters and stats zero; the RX EQE table.
    constexpr net_dim() noexcept : base(net_dim_rx_eqe_profile) {}

    /// A tuner over `profile`, starting at index `ix`, parked on top. The default, 0, is a Linux
    /// driver's zeroed tuner: its first decision with traffic leaves parking to the right, to
    /// index 1. The device meanwhile runs Linux's default moderation, entry 1
    /// (net_dim_default_moderation(); program it at start-up). Another `ix` starts a search
    /// Linux does not make: from index 1 the first decision goes left, to 0. An invalid profile
    /// or index is a contract violation; if the handler returns, an invalid profile leaves the
    /// RX EQE table in place (then at index `ix`), and an invalid index leaves index 0 (of
    /// `profile`).
    constexpr explicit net_dim(const net_dim_profile& profile, std::uint8_t ix = 0) noexcept
        : net_dim() {
        (void)set_profile(profile);
        (void)set_profile_ix(ix);
    }

    /// Feed one sample. Returns true when a decision chose a new profile index: apply
    /// current_moderation(), then call on_applied(). The common case (fewer than 64 events since the
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

};

} // namespace v0
} // namespace qlimits
