// SPDX-License-Identifier: MIT
// qlimits/limits/fixed.hpp: two baseline limit policies, a constant limit (fixed_limit) and no
// limit at all (unlimited). They exist so that a dynamic policy can be compared with the static
// budget it replaces, and so that an adapter's own cost can be measured with the limit out of
// the way.
//
// Model: as for dql, a producer reports units queued and a completion path reports units
// retired. fixed_limit admits while inflight <= limit, checked before the enqueue, so (as with
// dql) inflight can reach limit + the last item and never more. unlimited never asks the
// producer to stop; it still counts, so inflight() and the contract check on over-completion
// behave exactly as they do for dql.
//
// Threading: on_queued()/available() belong to the producer; on_completed(), reset() and
// set_limit() to the completion path. Each side must be serialised on its own; the two sides may
// run concurrently. stats() may be called from any thread (fields read one by one, relaxed).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"

namespace qlimits {
inline namespace v0 {

/// Largest single enqueue, the same as dql_max_object (UINT_MAX / 16), so a trace or an adapter
/// behaves identically whichever policy it drives.
inline constexpr std::uint32_t fixed_max_object = std::numeric_limits<std::uint32_t>::max() / 16;
/// Highest fixed limit, the same as dql_max_limit: limit + one object stays below 2^31, so the
/// signed 32-bit available() can never wrap while the producer honours it.
inline constexpr std::uint32_t fixed_max_limit =
    std::numeric_limits<std::uint32_t>::max() / 2 - fixed_max_object;

/// Configuration of a fixed_limit.
struct fixed_limit_config {
    /// Units allowed in flight. Default 65536: one 64 KiB GSO super-packet, the largest single
    /// transmit the Linux stack hands a driver without BIG TCP (GSO_MAX_SIZE), i.e. the
    /// smallest static byte budget that never splits a TSO burst.
    std::uint32_t limit = 65536;
    /// limit within [0, fixed_max_limit].
    [[nodiscard]] constexpr bool valid() const noexcept { return limit <= fixed_max_limit; }
};

/// Configuration of unlimited: nothing to configure.
struct unlimited_config {
    [[nodiscard]] constexpr bool valid() const noexcept { return true; }
};

/// A point-in-time summary of a baseline policy, readable from any thread.
struct baseline_stats {
    std::uint32_t limit;             ///< the limit (UINT32_MAX for unlimited)
    std::uint32_t inflight;          ///< queued - completed (mod 2^32)
    std::int64_t available;          ///< units that may still be posted; < 0: stop
    std::uint64_t rejected_enqueues; ///< enqueues refused: over max_object, or over 2^31 - 1
                                     ///< units in flight
};

namespace detail {
// The counters both baselines keep, one cache line per side so neither side's hot path writes
// a line the other writes too.
struct baseline_counters {
    struct alignas(cache_line_size) producer_line {
        std::atomic<std::uint32_t> queued{0};
        std::atomic<std::uint32_t> limit{0}; // written by the completion side, rarely
        std::atomic<std::uint64_t> rejected{0};
        // The producer's last reading of completion_line::completed (may_post()). Completions
        // only grow, so it is a lower bound: room computed from it is never more than there is.
        std::uint32_t completed_seen = 0;
    };
    struct alignas(cache_line_size) completion_line {
        std::atomic<std::uint32_t> completed{0};
    };
    producer_line p;
    completion_line c;

    // Refused (false, counted in `rejected`, nothing else changes): an item over max_object,
    // and a post that would put more than 2^31 - 1 units in flight. The 32-bit books compare
    // in flight as a signed difference: past that, a rightful completion would read as an
    // over-completion (a review, 2026-12-06: unlimited, which never asks the producer to stop,
    // wrapped at 17 items of max_object units and refused the next completion). fixed_limit
    // stops a producer that honours available() long before. completed_seen is a lower bound
    // of the completed count (it only grows), so the bound is read fresh only when the last
    // reading does not show room; it also keeps completed_seen within 2^31 of queued, so the
    // room may_post() computes from it cannot wrap.
    bool queue(std::uint32_t n) noexcept {
        const std::uint32_t q = p.queued.load(std::memory_order_relaxed) + n;
        if (n > fixed_max_object || !within_books(q)) [[unlikely]] {
            p.rejected.store(p.rejected.load(std::memory_order_relaxed) + 1,
                             std::memory_order_relaxed);
            return false;
        }
        p.queued.store(q, std::memory_order_relaxed);
        return true;
    }
    // queued would be q: at most max_inflight in flight (every earlier post kept it so, and n
    // <= max_object, so q - completed cannot wrap).
    bool within_books(std::uint32_t q) noexcept {
        if (q - p.completed_seen <= max_inflight) [[likely]]
            return true;
        p.completed_seen = c.completed.load(std::memory_order_relaxed);
        return q - p.completed_seen <= max_inflight;
    }
    static constexpr std::uint32_t max_inflight = 0x7FFF'FFFFU;
    // Checked against a fresh reading of `queued` every time, as dql does: on_unqueued() makes
    // it shrink, so an older reading is no bound (a cached one let a completion of units taken
    // back through; review 2026-12-03). Callers that know the units were counted (channel)
    // use complete_counted() and do not read the producer's line.
    bool complete(std::uint32_t n, const char* where) noexcept {
        const std::uint32_t done = c.completed.load(std::memory_order_relaxed);
        if (n > p.queued.load(std::memory_order_relaxed) - done) [[unlikely]] {
            detail::contract_failed(where, "over-completion: completed more than is in flight");
            return false;
        }
        c.completed.store(done + n, std::memory_order_release); // see inflight()
        return true;
    }
    // n units counted by queue() never left (on_unqueued): only the producer writes queued.
    // More than is in flight is a contract violation and changes nothing: taken, it would wrap
    // inflight to ~2^32 and disarm complete()'s check for good (review 2026-12-05). The
    // completion side's count may be an older reading; completions only grow, so the in-flight
    // figure it gives is at least the true one, and a rightful take-back is never refused.
    bool unqueue(std::uint32_t n, const char* where) noexcept {
        const std::uint32_t q = p.queued.load(std::memory_order_relaxed);
        if (n > q - c.completed.load(std::memory_order_relaxed)) [[unlikely]] {
            detail::contract_failed(where, "on_unqueued of more than is in flight");
            return false;
        }
        p.queued.store(q - n, std::memory_order_relaxed);
        return true;
    }
    // The caller knows the n units were counted (known_counted_t): no read of the producer's
    // line.
    void complete_counted(std::uint32_t n) noexcept {
        c.completed.store(c.completed.load(std::memory_order_relaxed) + n,
                          std::memory_order_release); // see inflight()
    }
    // limit - inflight >= 0, read from the producer's side: the completion side's line is read
    // only when the room computed from the last reading of it is negative, so a producer far
    // below its limit does not pull that line across on every post. Exact: a negative answer is
    // always checked against a fresh reading.
    bool may_post(std::uint32_t limit) noexcept {
        const std::uint32_t q = p.queued.load(std::memory_order_relaxed);
        if (static_cast<std::int32_t>(limit - (q - p.completed_seen)) >= 0)
            return true;
        p.completed_seen = c.completed.load(std::memory_order_relaxed);
        return static_cast<std::int32_t>(limit - (q - p.completed_seen)) >= 0;
    }
    void reset() noexcept {
        p.completed_seen = 0;
        p.queued.store(0, std::memory_order_relaxed);
        c.completed.store(0, std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept {
        // Completed first (acquire), queued second: from a third thread the two cannot both be
        // read at one instant, and a completion read after the post it completes would make
        // the difference wrap to ~2^32. Read in this order, the queued count is at least the
        // one each completion read was made against (the completion side's store is release).
        const std::uint32_t done = c.completed.load(std::memory_order_acquire);
        return p.queued.load(std::memory_order_relaxed) - done;
    }
};
} // namespace detail

/// A constant limit: available() = limit - inflight. The baseline a dynamic policy must beat.
template <clock_source Clock = jiffy_clock>
class fixed_limit {
public:
    using clock_type = Clock;
    using time_point = typename Clock::time_point;
    using config_type = fixed_limit_config;
    using stats_type = baseline_stats;
    static constexpr std::uint32_t max_object = fixed_max_object;
    /// on_completed() ignores its time argument; adapters may skip reading the clock.
    static constexpr bool uses_time = false;

    /// An invalid cfg is a contract violation; if the handler returns, the default limit is used.
    explicit fixed_limit(const config_type& cfg, time_point) noexcept {
        std::uint32_t lim = cfg.limit;
        if (!cfg.valid()) [[unlikely]] {
            detail::contract_failed("fixed_limit::fixed_limit",
                                    "invalid fixed_limit_config (limit above fixed_max_limit)");
            lim = config_type{}.limit;
        }
        n_.p.limit.store(lim, std::memory_order_relaxed);
    }
    fixed_limit(const fixed_limit&) = delete;
    fixed_limit& operator=(const fixed_limit&) = delete;

    /// Report n units posted. Refused (false, only the rejection counted) when n > max_object,
    /// or when more than 2^31 - 1 units would be in flight (a producer that honours available()
    /// never gets there).
    bool on_queued(std::uint32_t n) noexcept { return n_.queue(n); }
    bool on_queued(std::uint32_t n, time_point) noexcept { return n_.queue(n); }
    /// Take back n units of an on_queued() whose item never left (producer side). n more
    /// than is in flight is a contract violation and changes nothing.
    void on_unqueued(std::uint32_t n) noexcept { (void)n_.unqueue(n, "fixed_limit::on_unqueued"); }

    /// limit + completed - queued as signed 32-bit; < 0: stop.
    [[nodiscard]] std::int64_t available() const noexcept {
        return static_cast<std::int32_t>(n_.p.limit.load(std::memory_order_relaxed) -
                                         n_.inflight());
    }
    /// available() >= 0, for the producer's thread only: it reads the completion side's count
    /// only when its last reading of it shows no room (adapters call it on every post).
    [[nodiscard]] bool may_post() noexcept {
        return n_.may_post(n_.p.limit.load(std::memory_order_relaxed));
    }

    /// Report n units retired. More than is in flight is a contract violation; if the handler
    /// returns, the call is refused (false) and nothing changes.
    bool on_completed(std::uint32_t n, time_point) noexcept {
        return n_.complete(n, "fixed_limit::on_completed");
    }
    /// As on_completed(n, now), for a caller that knows the n units were counted (see
    /// known_counted_t): no over-completion check, which would read the producer's line. The
    /// caller's word is the check: more than is in flight passed here wraps inflight() to
    /// ~2^32, and the policy's books stay wrong (later over-completions pass) until reset().
    bool on_completed(std::uint32_t n, time_point, known_counted_t) noexcept {
        n_.complete_counted(n);
        return true;
    }
    /// Forget everything in flight; rejected_enqueues is kept (a lifetime count). Call only
    /// while neither side is running.
    void reset(time_point) noexcept { n_.reset(); }
    /// Change the limit (completion side). Refused (false, unchanged) above fixed_max_limit.
    bool set_limit(std::uint32_t v) noexcept {
        if (v > fixed_max_limit)
            return false;
        n_.p.limit.store(v, std::memory_order_relaxed);
        return true;
    }

    [[nodiscard]] std::uint32_t limit() const noexcept {
        return n_.p.limit.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return n_.inflight(); }
    [[nodiscard]] baseline_stats stats() const noexcept {
        return {limit(), inflight(), available(), n_.p.rejected.load(std::memory_order_relaxed)};
    }

private:
    detail::baseline_counters n_;
};

/// No limit: available() is always the largest positive value, so an adapter's stop path is
/// never taken (and, available() being a constant, is compiled away). Counts inflight anyway,
/// in 32 bits: a post that would put more than 2^31 - 1 units in flight is refused.
template <clock_source Clock = jiffy_clock>
class unlimited {
public:
    using clock_type = Clock;
    using time_point = typename Clock::time_point;
    using config_type = unlimited_config;
    using stats_type = baseline_stats;
    static constexpr std::uint32_t max_object = fixed_max_object;
    static constexpr bool uses_time = false;

    explicit unlimited(const config_type&, time_point) noexcept {}
    unlimited(const unlimited&) = delete;
    unlimited& operator=(const unlimited&) = delete;

    /// Report n units posted. Refused (false, only the rejection counted) when n > max_object,
    /// or when more than 2^31 - 1 units would be in flight: the 32-bit books cannot count
    /// more (the adapters refuse such a send before it reaches the policy).
    bool on_queued(std::uint32_t n) noexcept { return n_.queue(n); }
    bool on_queued(std::uint32_t n, time_point) noexcept { return n_.queue(n); }
    /// Take back n units of an on_queued() whose item never left (producer side). n more
    /// than is in flight is a contract violation and changes nothing.
    void on_unqueued(std::uint32_t n) noexcept { (void)n_.unqueue(n, "unlimited::on_unqueued"); }
    /// Always INT32_MAX: the largest value a 32-bit policy can report.
    [[nodiscard]] std::int64_t available() const noexcept {
        return std::numeric_limits<std::int32_t>::max();
    }
    bool on_completed(std::uint32_t n, time_point) noexcept {
        return n_.complete(n, "unlimited::on_completed");
    }
    /// As on_completed(n, now), for a caller that knows the n units were counted (see
    /// known_counted_t): no over-completion check, which would read the producer's line. The
    /// caller's word is the check: more than is in flight passed here wraps inflight() to
    /// ~2^32, and the policy's books stay wrong (later over-completions pass) until reset().
    bool on_completed(std::uint32_t n, time_point, known_counted_t) noexcept {
        n_.complete_counted(n);
        return true;
    }
    /// As fixed_limit::reset().
    void reset(time_point) noexcept { n_.reset(); }

    /// UINT32_MAX: no limit.
    [[nodiscard]] std::uint32_t limit() const noexcept {
        return std::numeric_limits<std::uint32_t>::max();
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return n_.inflight(); }
    [[nodiscard]] baseline_stats stats() const noexcept {
        return {limit(), inflight(), available(), n_.p.rejected.load(std::memory_order_relaxed)};
    }

private:
    detail::baseline_counters n_;
};

static_assert(limit_policy<fixed_limit<>>);
static_assert(limit_policy<fixed_limit<manual_clock<>>>);
static_assert(limit_policy<unlimited<>>);
static_assert(limit_policy<unlimited<steady_clock_source>>);
static_assert(accepts_known_counted<fixed_limit<>> && accepts_known_counted<unlimited<>>);
static_assert(has_may_post<fixed_limit<>>);
static_assert(accepts_unqueue<fixed_limit<>> && accepts_unqueue<unlimited<>>);

} // namespace v0
} // namespace qlimits
