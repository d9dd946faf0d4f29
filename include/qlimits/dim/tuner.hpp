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

} // namespace detail
} // namespace v0
} // namespace qlimits
