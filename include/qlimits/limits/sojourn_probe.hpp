// SPDX-License-Identifier: MIT
// qlimits/limits/sojourn_probe.hpp: how long an item waits in a queue, and how fast the queue
// drains, learned from the completion side alone.
//
// A limit policy sees on_queued(n) (often without a time: channel passes one only to a policy
// that asks for it, tx_gate only in its timed forms) and
// on_completed(n, now). It cannot stamp items. It can still time the queue the way a stopwatch
// times a line at a counter: at some completion, at time t0, note the cumulative number of units
// queued so far, Q ("the mark"). Queues are FIFO, so when the cumulative completed count passes
// Q, everything that was waiting at t0 has left: now - t0 is how long an item that arrived at t0
// waited (its sojourn, the queue's "virtual" delay as CoDel calls it), and the units completed
// in between, drained over now - t0, give the drain rate while there was a backlog.
//
//  - sojourn_probe: one measurement in flight at a time. arm() needs the producer's queued
//    count once per measurement (one read of the producer's line per sample, not per item);
//    on_completed() is one comparison of two completion-side counters. No producer-side clock.
//  - drain_meter: accumulates the probe's (units, ticks) until a window of ticks has passed,
//    then publishes units per tick. A coarse clock (many completions at the same `now`, samples
//    of 0 ticks) just makes windows span more samples: the rate is never divided by zero and
//    does not depend on how completions were grouped.
//
// Units of time are ticks of the caller's clock (unsigned 64-bit, wrapping); counters are the
// caller's 32-bit cumulative queued/completed counts (wrapping, compared by signed difference),
// the same counters dql and fixed_limit keep. Everything is O(1), noexcept, allocation-free.
// Neither type is thread-safe: both belong to the completion side.
#pragma once

#include <cstdint>
#include <limits>

namespace qlimits {
inline namespace v0 {

/// One finished measurement of a sojourn_probe.
struct sojourn_sample {
    std::uint64_t sojourn = 0; ///< ticks from arm() to the completion that passed the mark
    std::uint32_t drained = 0; ///< units completed in that time (>= the backlog seen at arm())
    std::uint32_t backlog = 0; ///< units in flight when the probe was armed
};

/// Times the backlog seen at one moment until it has drained (see the file comment).
class sojourn_probe {
public:
    /// Start a measurement at `now`: `queued` and `completed` are the cumulative counts now.
    /// Returns false (and stays unarmed) when nothing is in flight: there is nothing to time.
    /// Re-arming while armed restarts the measurement.
    bool arm(std::uint32_t queued, std::uint32_t completed, std::uint64_t now) noexcept {
        const std::uint32_t backlog = queued - completed;
        // A backlog of 2^31 or more cannot be told from a counter that went backwards.
        if (backlog == 0 || backlog > std::numeric_limits<std::int32_t>::max()) {
            armed_ = false;
            return false;
        }
        armed_ = true;
        mark_ = queued;
        start_completed_ = completed;
        start_ = now;
        backlog_ = backlog;
        return true;
    }

    /// Whether the cumulative completed count `completed` passes the armed probe's mark (the
    /// next on_completed() with it ends the probe): a caller can read its clock only then.
    [[nodiscard]] bool passed(std::uint32_t completed) const noexcept {
        return armed_ && static_cast<std::int32_t>(completed - mark_) >= 0;
    }

    /// The cumulative completed count is now `completed`, at `now`. Returns true when that
    /// passes the mark: the sample is in last() and the probe is disarmed.
    bool on_completed(std::uint32_t completed, std::uint64_t now) noexcept {
        if (!armed_ || static_cast<std::int32_t>(completed - mark_) < 0) return false;
        armed_ = false;
        // A clock that went backwards (or a caller mixing clocks) gives 0, never a huge value.
        const std::uint64_t dt = now - start_;
        last_.sojourn = static_cast<std::int64_t>(dt) < 0 ? 0 : dt;
        last_.drained = completed - start_completed_;
        last_.backlog = backlog_;
        ++samples_;
        return true;
    }

    /// Drop the measurement in flight (e.g. when the counters are reset).
    void disarm() noexcept { armed_ = false; }

    [[nodiscard]] bool armed() const noexcept { return armed_; }
    /// While armed: ticks since arm() at `now` (0 if the clock went backwards). A value above a
    /// budget already tells that the sample will exceed it, before the backlog has drained.
    [[nodiscard]] std::uint64_t elapsed(std::uint64_t now) const noexcept {
        const std::uint64_t dt = now - start_;
        return static_cast<std::int64_t>(dt) < 0 ? 0 : dt;
    }
    /// While armed: units completed since arm(), given the cumulative completed count now.
    [[nodiscard]] std::uint32_t drained(std::uint32_t completed) const noexcept {
        return completed - start_completed_;
    }
    /// The last finished sample (all zero before the first).
    [[nodiscard]] const sojourn_sample& last() const noexcept { return last_; }
    /// Samples finished so far.
    [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }

private:
    std::uint32_t mark_ = 0;
    std::uint32_t start_completed_ = 0;
    std::uint32_t backlog_ = 0;
    bool armed_ = false;
    std::uint64_t start_ = 0;
    sojourn_sample last_{};
    std::uint64_t samples_ = 0;
};

/// Drain rate in units per tick, from (units, ticks) pieces: a window closes once it holds at
/// least `window_ticks` ticks, and its units / ticks becomes the rate. The rate is fixed point
/// with `rate_shift` fractional bits, so a slow queue (less than one unit per tick) is not 0:
/// 7,000 units/s on a nanosecond clock is 7e-6 units per tick, 30,000 in fixed point.
class drain_meter {
public:
    /// Fractional bits of rate_fp(): 32, so rates down to 1 unit per 2^32 ticks (4.3 s on a
    /// nanosecond clock) are nonzero and a 7 kpps consumer keeps 5 significant digits.
    static constexpr unsigned rate_shift = 32;

    /// window_ticks 0 is taken as 1 (a rate needs at least one tick).
    explicit constexpr drain_meter(std::uint64_t window_ticks = 1) noexcept
        : window_(window_ticks == 0 ? 1 : window_ticks) {}

    /// Add `units` drained over `ticks`. Returns true when this closed a window (new rate).
    bool add(std::uint32_t units, std::uint64_t ticks) noexcept {
        units_ += units;
        // Saturating: with windows of 2^63 ticks and more two adds could wrap to a window that
        // never closes.
        constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
        ticks_ = ticks > most - ticks_ ? most : ticks_ + ticks;
        if (ticks_ < window_) return false;
        // units_ < 2^64 / 2^32 unless a window holds 2^32 units or more: clamp, never wrap.
        constexpr std::uint64_t cap = std::numeric_limits<std::uint64_t>::max() >> rate_shift;
        const std::uint64_t u = units_ > cap ? cap : units_;
        rate_fp_ = (u << rate_shift) / ticks_;
        units_ = 0;
        ticks_ = 0;
        ++windows_;
        return true;
    }
    /// Forget the open window (the published rate is kept).
    void restart() noexcept {
        units_ = 0;
        ticks_ = 0;
    }
    void set_window(std::uint64_t window_ticks) noexcept {
        window_ = window_ticks == 0 ? 1 : window_ticks;
    }

    /// Units per tick << rate_shift; 0 until the first window closes.
    [[nodiscard]] constexpr std::uint64_t rate_fp() const noexcept { return rate_fp_; }
    /// Units drained in `ticks` at the current rate (rounded down, saturating).
    [[nodiscard]] constexpr std::uint64_t units_in(std::uint64_t ticks) const noexcept {
        if (ticks == 0 || rate_fp_ == 0) return 0;
        if (rate_fp_ > std::numeric_limits<std::uint64_t>::max() / ticks)
            return std::numeric_limits<std::uint64_t>::max() >> rate_shift;
        return (rate_fp_ * ticks) >> rate_shift;
    }
    /// Windows closed so far (0: no rate yet).
    [[nodiscard]] constexpr std::uint64_t windows() const noexcept { return windows_; }
    [[nodiscard]] constexpr std::uint64_t window_ticks() const noexcept { return window_; }

private:
    std::uint64_t window_;
    std::uint64_t units_ = 0;
    std::uint64_t ticks_ = 0;
    std::uint64_t rate_fp_ = 0;
    std::uint64_t windows_ = 0;
};

} // namespace v0
} // namespace qlimits
