// SPDX-License-Identifier: MIT
// qlimits/dim/tuner.hpp: the state every DIM tuner shares: the measure/apply handoff, the tune
// state, the profile index and the step counters, with the moves both flavours make (turn, park).
//
// Direction words: "right" is more moderation (a higher index, a longer timer), "left" is less.
//
// The handoff (identical in net and RDMA DIM):
//   start_measure        the next sample only opens a window (it becomes the start sample)
//   measure_in_progress  samples are measured against the start; after 64 events a decision
//   apply_new_profile    a decision chose a new index: every sample is ignored until the user
//                        has applied the new moderation and called on_applied()
// A user that never calls on_applied() after a decision stops the tuner for good, as in Linux.
#pragma once

#include <cstdint>

#include "qlimits/config.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/sample.hpp"
#include "qlimits/dim/stats.hpp"

namespace qlimits {
inline namespace v0 {

/// Where the measuring window stands (Linux enum dim_state).
enum class dim_state : std::uint8_t {
    start_measure = 0,
    measure_in_progress = 1,
    apply_new_profile = 2
};

/// The tuner's search state (Linux enum dim_tune_state).
enum class dim_tune_state : std::uint8_t {
    parking_on_top = 0,
    parking_tired = 1,
    going_right = 2,
    going_left = 3
};

/// The result of one step (Linux enum dim_step_result).
enum class dim_step_result : std::uint8_t { stepped = 0, too_tired = 1, on_edge = 2 };

/// The kernel's name of a tune state, as the trace format prints it.
[[nodiscard]] constexpr const char* to_string(dim_tune_state s) noexcept {
    switch (s) {
    case dim_tune_state::parking_on_top:
        return "PARKING_ON_TOP";
    case dim_tune_state::parking_tired:
        return "PARKING_TIRED";
    case dim_tune_state::going_right:
        return "GOING_RIGHT";
    case dim_tune_state::going_left:
        return "GOING_LEFT";
    }
    return "?";
}

/// A snapshot of a tuner's search state (what the trace format prints after each call).
struct dim_tuning {
    dim_tune_state tune = dim_tune_state::parking_on_top;
    std::uint8_t profile_ix = 0;
    std::uint8_t steps_left = 0;
    std::uint8_t steps_right = 0;
    std::uint8_t tired = 0;
    friend constexpr bool operator==(const dim_tuning&, const dim_tuning&) noexcept = default;
};

namespace detail {

/// The moves shared by the net and RDMA decisions. Counters are u8 and wrap, as in Linux.
struct dim_search {
    dim_tuning t{};

    /// Reverse direction; the step counter of the new direction starts over. No-op when parked.
    constexpr void turn() noexcept {
        if (t.tune == dim_tune_state::going_right) {
            t.tune = dim_tune_state::going_left;
            t.steps_left = 0;
        } else if (t.tune == dim_tune_state::going_left) {
            t.tune = dim_tune_state::going_right;
            t.steps_right = 0;
        }
    }
    /// Rest at the best index found: step counters and tiredness cleared.
    constexpr void park_on_top() noexcept {
        t.steps_left = 0;
        t.steps_right = 0;
        t.tired = 0;
        t.tune = dim_tune_state::parking_on_top;
    }
    /// Rest after too many steps: step counters cleared, tiredness kept (it counts down).
    constexpr void park_tired() noexcept {
        t.steps_left = 0;
        t.steps_right = 0;
        t.tune = dim_tune_state::parking_tired;
    }
    /// The search just crossed the best point: one step back after several forward.
    [[nodiscard]] constexpr bool on_top() const noexcept {
        if (t.tune == dim_tune_state::going_right) return t.steps_left > 1 && t.steps_right == 1;
        if (t.tune == dim_tune_state::going_left) return t.steps_right > 1 && t.steps_left == 1;
        return false;
    }
    /// Move the index one place in the current direction. Returns false at the edge (index
    /// last_ix going right, 0 going left) and when parked.
    constexpr bool move(std::uint8_t last_ix) noexcept {
        if (t.tune == dim_tune_state::going_right) {
            if (t.profile_ix == last_ix) return false;
            ++t.profile_ix;
            t.steps_right = static_cast<std::uint8_t>(t.steps_right + 1);
            return true;
        }
        if (t.tune == dim_tune_state::going_left) {
            if (t.profile_ix == 0) return false;
            --t.profile_ix;
            t.steps_left = static_cast<std::uint8_t>(t.steps_left + 1);
            return true;
        }
        return false;
    }
};


/// What net_dim and rdma_dim share: the window handoff state, the search, the reference stats
/// and the profile table, with their accessors and checked setters. Derived (CRTP) adds the
/// sampling and the decision, and the texts of its contract messages.
template <class Derived, class Profile>
class dim_tuner_base {
public:
    using profile_type = Profile;
    static constexpr std::uint8_t profile_count = static_cast<std::uint8_t>(Profile::size());

    /// The user applied the chosen moderation: the next sample opens a new window. (Callable at
    /// any time; it always restarts measuring, as the kernel's driver work function does.)
    constexpr void on_applied() noexcept { state_ = dim_state::start_measure; }

    /// Set the profile index (a driver's initial choice). Out of range is a contract violation
    /// and is refused (returns false, state unchanged).
    constexpr bool set_profile_ix(std::uint8_t ix) noexcept {
        if (ix >= profile_count) {
            contract_failed(Derived::set_profile_ix_where, Derived::ix_out_of_range);
            return false;
        }
        s_.t.profile_ix = ix;
        return true;
    }

    /// Swap the profile table; the tuner's state is untouched (only the numbers
    /// current_moderation() returns change). A table with the wrong number of entries is a
    /// contract violation and is refused (returns false, the old table stays). Check
    /// profile.valid() first for user input.
    constexpr bool set_profile(const Profile& profile) noexcept {
        if (!profile.valid()) {
            contract_failed(Derived::set_profile_where, profile.error_message());
            return false;
        }
        profile_ = profile;
        return true;
    }

    /// The moderation at the current index: what the device should run.
    [[nodiscard]] constexpr const moderation& current_moderation() const noexcept {
        return profile_[s_.t.profile_ix];
    }
    [[nodiscard]] constexpr const Profile& profile() const noexcept { return profile_; }
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
    /// The sample that opened the current window.
    [[nodiscard]] constexpr const dim_sample& start_sample() const noexcept { return start_; }

protected:
    constexpr explicit dim_tuner_base(const Profile& default_profile) noexcept
        : profile_(default_profile) {}

    // Hot fields first: the no-decision path reads state_ and start_.events only.
    dim_state state_ = dim_state::start_measure;
    dim_sample start_{};
    dim_search s_{};
    dim_stats prev_stats_{};
    Profile profile_;
};

} // namespace detail
} // namespace v0
} // namespace qlimits
