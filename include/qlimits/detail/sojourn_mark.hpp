// SPDX-License-Identifier: MIT
// qlimits/detail/sojourn_mark.hpp: the smallest completion-side sojourn timer the peer policies
// need (a stand-in until the library's shared sojourn probe lands; same interface).
//
// At a completion at time t0 the completion side notes the cumulative queued count Q (the mark).
// Rings are FIFO, so once the cumulative completed count passes Q, the item that was last in
// line at t0 has left: now - t0 is a sojourn (a lower bound for that item, which arrived at or
// before t0). One measurement is in flight at a time; O(1), completion side only.
#pragma once

#include <cstdint>
#include <limits>

namespace qlimits {
inline namespace v0 {
namespace detail {

/// One finished measurement.
struct sojourn_mark_sample {
    std::uint64_t sojourn = 0; ///< ticks from arm() to the completion that passed the mark
    std::uint32_t backlog = 0; ///< units in flight when armed
};

class sojourn_mark {
public:
    /// Start timing at `now` the backlog queued - completed. False (unarmed) when it is empty.
    bool arm(std::uint32_t queued, std::uint32_t completed, std::uint64_t now) noexcept {
        const std::uint32_t backlog = queued - completed;
        armed_ = backlog != 0 && backlog <= std::numeric_limits<std::int32_t>::max();
        mark_ = queued;
        start_ = now;
        backlog_ = backlog;
        return armed_;
    }
    /// True when `completed` passes the mark: the sample is in last(), the timer disarmed.
    bool on_completed(std::uint32_t completed, std::uint64_t now) noexcept {
        if (!armed_ || static_cast<std::int32_t>(completed - mark_) < 0)
            return false;
        armed_ = false;
        const std::uint64_t dt = now - start_; // a clock that went backwards gives 0
        last_ = {static_cast<std::int64_t>(dt) < 0 ? 0 : dt, backlog_};
        return true;
    }
    void disarm() noexcept { armed_ = false; }
    [[nodiscard]] bool armed() const noexcept { return armed_; }
    [[nodiscard]] const sojourn_mark_sample& last() const noexcept { return last_; }

private:
    std::uint32_t mark_ = 0;
    std::uint32_t backlog_ = 0;
    std::uint64_t start_ = 0;
    sojourn_mark_sample last_{};
    bool armed_ = false;
};

} // namespace detail
} // namespace v0
} // namespace qlimits
