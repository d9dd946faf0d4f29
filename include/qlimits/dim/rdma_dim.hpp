// SPDX-License-Identifier: MIT
// qlimits/dim/rdma_dim.hpp: RDMA DIM, the completion-queue moderation tuner of Linux's RDMA core,
// with the behaviour of lib/dim/rdma_dim.c (and its use in drivers/infiniband/core/cq.c) on
// 64-bit kernels. Written from a description of that behaviour (docs/design.md §5), not
// from its code.
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
class rdma_dim : public detail::dim_tuner_base<rdma_dim, rdma_dim_profile> {
    using base = detail::dim_tuner_base<rdma_dim, rdma_dim_profile>;
    friend base;
    static constexpr const char* set_profile_ix_where = "rdma_dim::set_profile_ix";
    static constexpr const char* ix_out_of_range = "profile index out of range (0..8)";
    static constexpr const char* set_profile_where = "rdma_dim::set_profile";

public:
    /// The RDMA core's initial state: start_measure, going right at index 0, counters and stats
    /// zero; the Linux RDMA table.
    constexpr rdma_dim() noexcept : base(rdma_dim_default_profile) {
        s_.t.tune = dim_tune_state::going_right;
    }

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

    dim_sample run_{}; // every call's events and completions; the next window's start
};

} // namespace v0
} // namespace qlimits
