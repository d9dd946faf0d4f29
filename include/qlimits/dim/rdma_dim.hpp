// SPDX-License-Identifier: MIT
// qlimits/dim/rdma_dim.hpp: RDMA DIM, the completion-queue moderation tuner of Linux's RDMA core,
// with the behaviour of lib/dim/rdma_dim.c (and its use in drivers/infiniband/core/cq.c) on
// 64-bit kernels. Written from a description of that behaviour (../shared/specs/dim.md section
// 9), not from its code.
//
// Model: each poll of a completion queue is one call with the number of completions it reaped;
// every call counts as one event. The tuner keeps a running sample (events + 1 per call, its
// completions summed modulo 2^32, packets and bytes 0, time = the call's time). Once the event
// gap reaches 64 and the window is at least 1 us long, it rates the window and decides:
//  - compare: previous completions/ms 0 -> SAME; else completions/ms changed by >= 11% ->
//    BETTER if higher, else WORSE; else completions-per-event ratio changed by >= 11% -> BETTER
//    if higher, else WORSE; else SAME;
//  - SAME: if the ratio is <= 50 x the index (as it was before the decision), snap to index 0
//    (direction and step counters untouched);
//  - WORSE: turn, then step; BETTER: step; a step at an edge (index 8 going right, 0 going left)
//    turns instead. No parking, no tiredness; step counters are u8 and wrap;
//  - the previous stats are always replaced by the current ones.
// Linux quirks kept on purpose:
//  - the event gap is the difference of the two u16 counters as a signed int, stored in a u32:
//    when the counter wraps inside a window the gap is "negative", hence huge, and a decision is
//    made early over a short window (still rated as if 64 events happened);
//  - the tuner starts going right at index 0 (a parked RDMA tuner would never move; if one is
//    parked anyway, decisions only refresh the previous stats).
// The handoff is net DIM's (dim/tuner.hpp): true from on_completions() means apply
// current_moderation() and call on_applied(); calls in between still count events and
// completions in the running sample, but do not measure.
//
// Threading: one tuner per completion queue, driven from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "qlimits/config.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/sample.hpp"
#include "qlimits/dim/stats.hpp"
#include "qlimits/dim/tuner.hpp"

namespace qlimits {
inline namespace v0 {

/// The RDMA DIM tuner for one completion queue.
class rdma_dim {
public:
    using profile_type = rdma_dim_profile;
    /// Indices 0..8.
    static constexpr std::uint8_t profile_count = static_cast<std::uint8_t>(rdma_dim_profile_count);

    /// The RDMA core's initial state: start_measure, going right at index 0, counters and stats
    /// zero; the Linux RDMA table.
    constexpr rdma_dim() noexcept { s_.t.tune = dim_tune_state::going_right; }

    /// A tuner over a custom 9-entry table (invalid: contract violation, the default is kept).
    constexpr explicit rdma_dim(const rdma_dim_profile& profile) noexcept : rdma_dim() {
        (void)set_profile(profile);
    }

    /// One poll that reaped `completions` (truncated into the 32-bit running sum, as Linux does),
    /// at time `now`. Returns true when a decision chose a new index: apply current_moderation(),
    /// then call on_applied().
    [[nodiscard]] constexpr bool on_completions(std::uint64_t completions,
                                                std::chrono::nanoseconds now) noexcept {
        run_.events = static_cast<std::uint16_t>(run_.events + 1);
        run_.pkts = 0;
        run_.bytes = 0;
        run_.comps = static_cast<std::uint32_t>(run_.comps + completions);
        run_.time = now;
        if (state_ == dim_state::measure_in_progress) {
            // The signed int gap stored in u32: huge when the u16 counter wrapped.
            const auto gap = static_cast<std::uint32_t>(int{run_.events} - int{start_.events});
            if (gap < dim_window_events) [[likely]]
                return false;
            return measure();
        }
        if (state_ == dim_state::start_measure) open_window();
        return false;
    }

    /// The user applied the chosen moderation: the next call opens a new window.
    constexpr void on_applied() noexcept { state_ = dim_state::start_measure; }

    /// One decision on a window's stats. Returns true if the profile index changed. Public for
    /// tests and simulators; it does not touch the measure/apply handoff.
    constexpr bool decide(const dim_stats& curr) noexcept {
        const std::uint8_t was_ix = s_.t.profile_ix;
        if (s_.t.tune == dim_tune_state::going_right || s_.t.tune == dim_tune_state::going_left) {
            switch (rdma_dim_compare(curr, prev_stats_)) {
            case dim_verdict::same:
                if (curr.cpe_ratio <= 50 * int{was_ix}) s_.t.profile_ix = 0;
                break;
            case dim_verdict::worse:
                s_.turn();
                [[fallthrough]];
            case dim_verdict::better:
                if (!s_.move(profile_count - 1)) s_.turn();
                break;
            }
        }
        prev_stats_ = curr;
        return s_.t.profile_ix != was_ix;
    }

    /// Set the profile index. Out of range (above 8) is a contract violation and is refused.
    constexpr bool set_profile_ix(std::uint8_t ix) noexcept {
        if (ix >= profile_count) {
            detail::contract_failed("rdma_dim::set_profile_ix", "profile index out of range (0..8)");
            return false;
        }
        s_.t.profile_ix = ix;
        return true;
    }

    /// Swap the table; the tuner's state is untouched. Not exactly 9 entries: contract
    /// violation, refused.
    constexpr bool set_profile(const rdma_dim_profile& profile) noexcept {
        if (!profile.valid()) {
            detail::contract_failed("rdma_dim::set_profile", profile.error_message());
            return false;
        }
        profile_ = profile;
        return true;
    }

    [[nodiscard]] constexpr const moderation& current_moderation() const noexcept {
        return profile_[s_.t.profile_ix];
    }
    [[nodiscard]] constexpr const rdma_dim_profile& profile() const noexcept { return profile_; }
    [[nodiscard]] constexpr std::uint8_t profile_ix() const noexcept { return s_.t.profile_ix; }
    [[nodiscard]] constexpr dim_tune_state tune_state() const noexcept { return s_.t.tune; }
    [[nodiscard]] constexpr std::uint8_t steps_left() const noexcept { return s_.t.steps_left; }
    [[nodiscard]] constexpr std::uint8_t steps_right() const noexcept { return s_.t.steps_right; }
    [[nodiscard]] constexpr std::uint8_t tired() const noexcept { return s_.t.tired; }
    [[nodiscard]] constexpr dim_tuning tuning() const noexcept { return s_.t; }
    [[nodiscard]] constexpr dim_state state() const noexcept { return state_; }
    [[nodiscard]] constexpr bool pending() const noexcept {
        return state_ == dim_state::apply_new_profile;
    }
    [[nodiscard]] constexpr const dim_stats& prev_stats() const noexcept { return prev_stats_; }
    [[nodiscard]] constexpr const dim_sample& start_sample() const noexcept { return start_; }
    /// The running sample (events and completions so far, time of the last call).
    [[nodiscard]] constexpr const dim_sample& running_sample() const noexcept { return run_; }

private:
    [[gnu::noinline]] constexpr bool measure() noexcept {
        const std::optional<dim_stats> st = compute_dim_stats(start_, run_);
        if (!st) return false; // 0 us: keep the window open
        if (decide(*st)) {
            state_ = dim_state::apply_new_profile;
            return true;
        }
        open_window();
        return false;
    }

    // The start becomes the running sample: its events and completions, packets and bytes 0,
    // and the call's time.
    constexpr void open_window() noexcept {
        start_ = run_;
        state_ = dim_state::measure_in_progress;
    }

    dim_state state_ = dim_state::start_measure;
    dim_sample run_{};
    dim_sample start_{};
    detail::dim_search s_{};
    dim_stats prev_stats_{};
    rdma_dim_profile profile_ = rdma_dim_default_profile;
};

} // namespace v0
} // namespace qlimits
