// SPDX-License-Identifier: MIT
// qlimits/limits/dql.hpp: classic dynamic queue limits, the algorithm behind Linux Byte Queue
// Limits, with the behaviour of Linux 6.15+ lib/dynamic_queue_limits.c (stall detector included).
// Written from a description of that behaviour (docs/design.md §2), not from its code.
//
// Model: a producer posts units (bytes for a NIC, 1 per packet for a software ring) to a ring; a
// completion path retires them later, once per completion round. The policy looks for the
// smallest in-flight limit that never lets the ring run dry while the producer was held back:
//  - the limit grows when the ring was starved (it ran empty while the limit held work back);
//  - it shrinks by the smallest slack seen over a hold time during which the ring stayed busy;
//  - it is clamped to [min_limit, max_limit], the upper bound checked first.
// All counters are 32-bit and wrap; every comparison is a signed difference, so behaviour depends
// only on differences modulo 2^32.
//
// Time: one tick is one unit of Clock::duration. The default jiffy_clock ticks in milliseconds,
// like a kernel with HZ=1000, so hold times and stall thresholds mean what they mean in Linux.
//
// Threading: on_queued()/available()/may_post() belong to the producer; on_completed(), reset()
// and the setters to the completion path. Each side must be serialised on its own; the two sides
// may run concurrently. stats() may be called from any thread (each field is read atomically; the
// set is not one consistent snapshot). state() is for the completion side or a quiescent policy.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/detail/wrap.hpp"

namespace qlimits {
inline namespace v0 {

/// Largest single enqueue: UINT_MAX / 16 = 268,435,455 (kernel DQL_MAX_OBJECT). Larger ones are
/// refused and counted, leaving the state unchanged, as current kernels do (older ones BUG()).
inline constexpr std::uint32_t dql_max_object = std::numeric_limits<std::uint32_t>::max() / 16;
/// Default and highest max_limit: UINT_MAX / 2 - dql_max_object = 1,879,048,192 (kernel
/// DQL_MAX_LIMIT, also the sysfs ceiling). dql_max_limit + dql_max_object < 2^31, so a producer
/// that stops at available() < 0 can never make the signed avail wrap.
inline constexpr std::uint32_t dql_max_limit =
    std::numeric_limits<std::uint32_t>::max() / 2 - dql_max_object;
static_assert(dql_max_limit == 0x7000'0000U && dql_max_object == 0x0FFF'FFFFU);

/// "No slack measured yet" (the kernel's UINT_MAX sentinel for lowest_slack).
inline constexpr std::uint32_t dql_no_slack = std::numeric_limits<std::uint32_t>::max();
/// Ticks per stall-history word (the kernel's BITS_PER_LONG on 64-bit machines).
inline constexpr std::uint64_t dql_history_word_bits = 64;
/// Words of stall history (kernel DQL_HIST_LEN): the history spans 4 * 64 = 256 ticks.
inline constexpr std::size_t dql_history_words = 4;

/// A hold time dql accepts: 0 to 2^63 - 1 ticks. Times are compared as signed 64-bit
/// differences, so a longer hold (a negative one, or 2^63 and above on a clock with an unsigned
/// count) would end before it began: the limit would shrink in the tick the window opened.
template <class Duration>
[[nodiscard]] constexpr bool dql_hold_ok(Duration d) noexcept {
    if constexpr (std::is_signed_v<typename Duration::rep>)
        return d.count() >= 0;
    else
        return static_cast<std::uint64_t>(d.count()) <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

/// Configuration of a dql. Defaults are those of a Linux netdev TX queue.
template <class Duration>
struct dql_config {
    std::uint32_t min_limit = 0;             ///< dql_init sets 0
    std::uint32_t max_limit = dql_max_limit; ///< dql_init sets DQL_MAX_LIMIT
    /// Slack is measured over this long before the limit may shrink. Default 1 s: the kernel's
    /// netdev_init_one_queue() calls dql_init(..., HZ), i.e. one second of jiffies.
    Duration hold_time = std::chrono::seconds{1};
    /// Stall detector threshold in ticks; 0 turns it off (the kernel's default). At most 65535
    /// (a u16, as the kernel's stall_thrs); it is useful up to the history span of 256 ticks.
    Duration stall_threshold = Duration{0};

    /// min_limit and max_limit within [0, dql_max_limit] (the kernel's sysfs bounds; min > max is
    /// allowed, as in sysfs, and then the clamp gives max when the limit reaches max, else min);
    /// hold_time within [0, 2^63) ticks (see dql_hold_ok); stall_threshold within [0, 65535]
    /// ticks.
    [[nodiscard]] constexpr bool valid() const noexcept {
        return min_limit <= dql_max_limit && max_limit <= dql_max_limit && dql_hold_ok(hold_time) &&
               stall_threshold.count() >= 0 && stall_threshold.count() <= 0xFFFF;
    }
};

/// A point-in-time summary of a dql, readable from any thread.
struct dql_stats {
    std::uint32_t limit;            ///< the current limit (units)
    std::uint32_t inflight;         ///< queued - completed (mod 2^32)
    std::int64_t available;         ///< adj_limit - queued as signed 32-bit; < 0: stop
    std::uint32_t min_limit;        ///< configured lower bound
    std::uint32_t max_limit;        ///< configured upper bound
    std::uint64_t hold_time_ticks;  ///< slack hold time in ticks
    std::uint32_t lowest_slack;     ///< smallest slack this hold window (dql_no_slack: none)
    std::uint16_t stall_threshold;  ///< ticks; 0 = stall detection off
    std::uint64_t stall_count;      ///< stalls detected (kernel stall_cnt)
    std::uint16_t stall_max;        ///< longest stall in ticks, mod 2^16 (kernel stall_max)
    std::uint64_t rejected_enqueues; ///< enqueues refused for exceeding dql_max_object
};

/// Every field of the algorithm's state, named as in the kernel (for replay and invariants).
struct dql_state {
    std::uint32_t limit, num_queued, num_completed, adj_limit, prev_ovlimit, lowest_slack;
    std::uint32_t prev_num_queued, prev_last_obj_cnt, last_obj_cnt, min_limit, max_limit;
    std::uint64_t hold_time, slack_start_time, last_reap, history_head, stall_count;
    std::uint16_t stall_threshold, stall_max;
    std::array<std::uint64_t, dql_history_words> history;
    /// adj_limit - num_queued read as signed 32-bit (the kernel's dql_avail()).
    [[nodiscard]] constexpr std::int32_t avail() const noexcept {
        return static_cast<std::int32_t>(adj_limit - num_queued);
    }
};

// zeroed_state (concepts.hpp): dql's all-zero state, that of a freshly zero-allocated kernel
// struct before dql_init (max_limit 0, hold 0, lowest_slack 0).

/// Classic DQL as a limit policy.
template <clock_source Clock = jiffy_clock>
class dql {
public:
    using clock_type = Clock;
    using duration = typename Clock::duration;
    using time_point = typename Clock::time_point;
    using config_type = dql_config<duration>;
    using stats_type = dql_stats;
    static constexpr std::uint32_t max_object = dql_max_object;

    /// Initialise as dql_init does, then apply cfg. An invalid cfg is a contract violation; if
    /// the handler returns, the defaults are used instead.
    explicit dql(const config_type& cfg, time_point now) noexcept {
        const config_type& use = cfg.valid() ? cfg : default_config_after_violation();
        init(use.hold_time, now);
        c_.min_limit.store(use.min_limit, std::memory_order_relaxed);
        c_.max_limit.store(use.max_limit, std::memory_order_relaxed);
        c_.limit.store(use.min_limit, std::memory_order_relaxed);
        set_stall_threshold(use.stall_threshold, now);
    }
    /// The all-zero state (see zeroed_state_t).
    explicit dql(zeroed_state_t) noexcept {}

    dql(const dql&) = delete;
    dql& operator=(const dql&) = delete;

    // ---- producer side -------------------------------------------------------------------

    /// Report n units posted to the ring. Returns false, changing nothing but the rejection
    /// count, when n > max_object. This overload does not mark the stall history: with a stall
    /// threshold set, use the timed overload.
    bool on_queued(std::uint32_t n) noexcept {
        if (n > max_object) [[unlikely]]
            return reject_enqueue();
        // The size first: the completion path reads it as prev_last_obj_cnt; writing it first
        // also takes the line for ownership before the counter update (the kernel's hint).
        p_.last_obj_cnt.store(n, std::memory_order_relaxed);
        p_.num_queued.store(p_.num_queued.load(std::memory_order_relaxed) + n,
                            std::memory_order_relaxed);
        return true;
    }
    /// As on_queued(n), and with a stall threshold set, records that something was queued now.
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        if (!on_queued(n)) return false;
        if (wants_post_time()) [[unlikely]]
            mark_history(qlimits::ticks_of(now));
        return true;
    }
    /// A stall threshold is set: posts must come with their time (on_queued(n, now)) for the
    /// stall detector to see them. Producer side; channel asks it before each count.
    [[nodiscard]] bool wants_post_time() const noexcept {
        return p_.stall_threshold.load(std::memory_order_relaxed) != 0;
    }

    /// Units that may still be posted: adj_limit - queued as signed 32-bit. < 0: stop.
    [[nodiscard]] std::int64_t available() const noexcept {
        return static_cast<std::int32_t>(c_.adj_limit.load(std::memory_order_acquire) -
                                         p_.num_queued.load(std::memory_order_relaxed));
    }
    /// available() >= 0, answered where it can be from the producer's last reading of
    /// adj_limit, so a producer with room does not fetch the completion path's line on every
    /// post (adapters ask this). adj_limit grows with every completion and shrinks only when
    /// the limit falls by more than the round completed; the completion path then bumps `cuts`
    /// on the producer's own line, and a reading older than the last cut is not trusted.
    /// Without a cut the last reading is a lower bound, so room it shows is there. The same
    /// answer as available() >= 0 on one thread while inflight() < 2^31 (the adapters keep it
    /// there), also for a caller that posts without asking. Producer side.
    [[nodiscard]] bool may_post() noexcept {
        const std::uint32_t q = p_.num_queued.load(std::memory_order_relaxed);
        const std::uint32_t cuts = p_.cuts.load(std::memory_order_acquire);
        // Room by the last reading, no more than any limit allows: the bound also keeps a
        // reading that fell 2^31 or more behind from looking like room (see the growth bump).
        if (cuts == p_.cuts_seen && p_.adj_seen - q <= dql_max_limit) [[likely]]
            return true;
        // Cuts first, adj_limit second (acquire): a cut not seen here is seen by the next ask.
        p_.cuts_seen = cuts;
        p_.adj_seen = c_.adj_limit.load(std::memory_order_acquire);
        return static_cast<std::int32_t>(p_.adj_seen - q) >= 0;
    }

    // ---- completion side -----------------------------------------------------------------

    /// Report n units retired in this completion round, at time now. Re-evaluates the limit.
    /// Completing more than is in flight is a contract violation; if the handler returns, the
    /// call is refused (returns false) and nothing changes.
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        return complete<false>(n, now, [now]() noexcept { return now; });
    }
    /// As on_completed(n, now), for a caller that reuses a clock reading over several
    /// completions (channel, on a coarse clock): `seen` is a time no later than now (an
    /// earlier reading), `now_fn()` reads the clock. Only the end of a hold window is judged by
    /// `seen`, so a window may end late by the reading's age, never early; every time the
    /// policy keeps (a window's start, the stall detector's last completion) is now_fn()'s,
    /// called at most once. With seen == now_fn(), exactly on_completed(n, now).
    template <class Now>
        requires std::is_nothrow_invocable_r_v<time_point, Now&>
    bool on_completed(std::uint32_t n, time_point seen, Now&& now_fn) noexcept {
        return complete<true>(n, seen, now_fn);
    }

private:
    // Reused: `seen` may be older than now_fn(); otherwise it is now (no call of now_fn).
    template <bool Reused, class Now>
    bool complete(std::uint32_t n, time_point seen, Now&& now_fn) noexcept {
        // The time the policy keeps: now, read once, when first needed.
        std::uint64_t t_now = 0;
        bool have_now = false;
        const auto t = [&]() noexcept -> std::uint64_t {
            if constexpr (!Reused) {
                (void)now_fn;
                return qlimits::ticks_of(seen);
            } else {
                if (!have_now) {
                    t_now = qlimits::ticks_of(now_fn());
                    have_now = true;
                }
                return t_now;
            }
        };
        // One read each of what the producer owns, at entry (the kernel's snapshots).
        const std::uint32_t queued = p_.num_queued.load(std::memory_order_relaxed);
        const auto stall_thrs = p_.stall_threshold.load(std::memory_order_relaxed);
        const std::uint32_t completed = c_.num_completed.load(std::memory_order_relaxed);
        if (n > queued - completed) [[unlikely]] {
            detail::contract_failed("dql::on_completed",
                                    "over-completion: completed more than is in flight");
            return false;
        }
        const std::uint32_t done = completed + n;
        const std::uint32_t prev_ov = c_.prev_ovlimit;
        std::uint32_t lim = c_.limit.load(std::memory_order_relaxed);
        // Overshoot is measured against what was in flight before this round retired anything.
        std::uint32_t ovlimit = detail::pos_diff(queued - completed, lim);
        const std::uint32_t still_inflight = queued - done;
        const std::uint32_t prev_still_inflight = c_.prev_num_queued - completed;
        const bool all_prev_done = detail::after_eq(done, c_.prev_num_queued);

        if ((ovlimit != 0 && still_inflight == 0) || (prev_ov != 0 && all_prev_done)) {
            // Starved: the limit held work back and yet the ring ran dry (or everything queued by
            // the last round is done while that round was over the limit). Grow by what was both
            // queued and retired since the last round, plus the last round's overshoot.
            lim += detail::pos_diff(done, c_.prev_num_queued) + prev_ov;
            c_.slack_start_time = t();
            c_.lowest_slack.store(dql_no_slack, std::memory_order_relaxed);
        } else if (still_inflight != 0 && prev_still_inflight != 0 && !all_prev_done) {
            // The ring stayed busy across rounds: how much of the limit was not needed? Track the
            // minimum over the hold time and give that much back once the window has expired.
            const std::uint32_t slack_by_limit = detail::pos_diff(lim + prev_ov, 2 * n);
            const std::uint32_t slack_by_last_obj =
                prev_ov != 0 ? detail::pos_diff(c_.prev_last_obj_cnt, prev_ov) : 0U;
            const std::uint32_t slack =
                slack_by_limit > slack_by_last_obj ? slack_by_limit : slack_by_last_obj;
            std::uint32_t lowest = c_.lowest_slack.load(std::memory_order_relaxed);
            if (slack < lowest) lowest = slack;
            // Strictly after the hold time: with hold H the earliest decrease is H + 1 ticks on.
            if (window_ended<Reused>(seen, stall_thrs != 0, t)) {
                lim = detail::pos_diff(lim, lowest);
                c_.slack_start_time = t();
                lowest = dql_no_slack;
            }
            c_.lowest_slack.store(lowest, std::memory_order_relaxed);
        }

        // Clamp with the upper bound checked first: with min > max this yields max at or above
        // max and min below it, as current kernels do.
        const std::uint32_t hi = c_.max_limit.load(std::memory_order_relaxed);
        const std::uint32_t lo = c_.min_limit.load(std::memory_order_relaxed);
        if (lim >= hi)
            lim = hi;
        else if (lim <= lo)
            lim = lo;

        // Any change of limit in this round (including one made only by the clamp) forgets this
        // round's overshoot. A limit written by set_limit is where the round started from, so
        // the write alone forgets nothing (as in Linux, which reads the limit at entry).
        if (lim != c_.limit.load(std::memory_order_relaxed)) {
            c_.limit.store(lim, std::memory_order_relaxed);
            ovlimit = 0;
        }
        c_.prev_ovlimit = ovlimit;
        c_.prev_last_obj_cnt = p_.last_obj_cnt.load(std::memory_order_relaxed);
        c_.prev_num_queued = queued;
        // The completed count before the room it makes (Linux writes them the other way round;
        // a one-thread sequence of calls cannot tell). A producer admitted on the new adj_limit
        // (acquire in available()) then reads a completed count at least this new, so inflight()
        // on its thread stays within the limit plus the item that crossed it. Written second, a
        // stale count let it read up to two items over (review, 2026-12-04).
        c_.num_completed.store(done, std::memory_order_release); // see inflight()
        const std::uint32_t adj = lim + done;
        c_.adj_limit.store(adj, std::memory_order_release);
        // adj_limit fell (the limit shrank by more than this round completed): tell may_post()
        // its last reading may now show room that is gone. Rare (at most once per hold time
        // from the algorithm, or after a bound was lowered), so the write to the producer's
        // line costs nothing in the steady state. Also whenever the completed count crosses a
        // multiple of 2^28: a caller that posts without asking may_post() can run 2^31 past
        // its reading while the consumer completes; with fewer than 2^28 units completed since
        // the reading, what it computes then lies outside [0, dql_max_limit] (inflight() < 2^31)
        // and is not taken for room.
        if (static_cast<std::int32_t>(adj - c_.adj_written) < 0 || ((done ^ completed) >> 28) != 0)
            [[unlikely]]
            p_.cuts.store(p_.cuts.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        c_.adj_written = adj;

        if (stall_thrs != 0) [[unlikely]]
            check_stall(t(), stall_thrs);
        return true;
    }
    // The hold window has run out. Reused: judged by `seen`, an older reading, which can only
    // delay the end, never bring it early (a reading from before the window began: not
    // ended), unless the time now is read anyway (the stall detector keeps it): then by that.
    template <bool Reused, class Now>
    [[nodiscard]] bool window_ended(time_point seen, bool reading_now, Now& t) const noexcept {
        const std::uint64_t start = c_.slack_start_time;
        if constexpr (Reused) {
            const std::uint64_t when = reading_now ? t() : qlimits::ticks_of(seen);
            return !detail::time_before(when, start) &&
                   detail::time_after(when, start + hold_ticks());
        } else {
            (void)reading_now;
            (void)t;
            return detail::time_after(qlimits::ticks_of(seen), start + hold_ticks());
        }
    }

public:

    /// Forget everything in flight, as dql_reset does: counters to 0, limit = min_limit, the
    /// hold window and stall history restarted at now. Kept: the configuration, the stall
    /// statistics, rejected_enqueues (lifetime counts) and adj_limit, so available() is stale
    /// until the next completion (as in Linux). Call only while neither side is running (e.g.
    /// after flushing the ring).
    void reset(time_point now) noexcept {
        const std::uint64_t t = qlimits::ticks_of(now);
        c_.limit.store(c_.min_limit.load(std::memory_order_relaxed), std::memory_order_relaxed);
        p_.num_queued.store(0, std::memory_order_relaxed);
        c_.num_completed.store(0, std::memory_order_relaxed);
        p_.last_obj_cnt.store(0, std::memory_order_relaxed);
        c_.prev_num_queued = 0;
        c_.prev_last_obj_cnt = 0;
        c_.prev_ovlimit = 0;
        c_.lowest_slack.store(dql_no_slack, std::memory_order_relaxed);
        c_.slack_start_time = t;
        c_.last_reap = t;
        p_.history_head.store(t / dql_history_word_bits, std::memory_order_relaxed);
        for (auto& w : p_.history) w.store(0, std::memory_order_relaxed);
        sync_adj_seen();
        // The kept adj_limit bears no relation to the counters restarted at 0, so the next
        // completion's value may lie anywhere from it, even 2^31 or more below, which the fall
        // test would read as growth. Pretend the last value was 2^31: the next completion
        // writes limit + n below it (limit < 0x7000'0000, and n < 2^28 or the completed count
        // crosses 2^28 and bumps anyway), a fall, so may_post() reads again.
        c_.adj_written = 0x8000'0000U;
    }

    /// Re-initialise as dql_init does: max = dql_max_limit, min = 0, the given hold time, stall
    /// detection off, then reset(now). The stall statistics and adj_limit are kept. Refused
    /// (false, nothing changed) for a hold time dql_hold_ok() rejects, as set_hold_time().
    bool init(duration hold_time, time_point now) noexcept {
        if (!dql_hold_ok(hold_time)) return false;
        c_.max_limit.store(dql_max_limit, std::memory_order_relaxed);
        c_.min_limit.store(0, std::memory_order_relaxed);
        c_.hold_time.store(static_cast<std::uint64_t>(hold_time.count()),
                           std::memory_order_relaxed);
        p_.stall_threshold.store(0, std::memory_order_relaxed);
        reset(now);
        return true;
    }

    // ---- configuration (completion side), each as the matching Linux sysfs file -----------

    /// Lower bound; refused (false, unchanged) above dql_max_limit, as sysfs answers -EINVAL.
    bool set_min_limit(std::uint32_t v) noexcept { return set_bound(c_.min_limit, v); }
    /// Upper bound; refused (false, unchanged) above dql_max_limit, as sysfs answers -EINVAL.
    bool set_max_limit(std::uint32_t v) noexcept { return set_bound(c_.max_limit, v); }
    /// Overwrite the limit itself (sysfs `limit`): not clamped now; the next completion starts
    /// from it as from a limit it computed (and clamps it): the write alone forgets nothing.
    bool set_limit(std::uint32_t v) noexcept { return set_bound(c_.limit, v); }
    /// Slack hold time; refused (false, unchanged) outside dql_hold_ok() (negative, or 2^63
    /// ticks and above).
    bool set_hold_time(duration d) noexcept {
        if (!dql_hold_ok(d)) return false;
        c_.hold_time.store(static_cast<std::uint64_t>(d.count()), std::memory_order_relaxed);
        return true;
    }
    /// Stall threshold in ticks (0 = off). Switching it on starts watching from now; changing
    /// between two non-zero values does not. Refused (false) outside [0, 65535] ticks.
    bool set_stall_threshold(duration d, time_point now) noexcept {
        if (d.count() < 0 || d.count() > 0xFFFF) return false;
        const auto v = static_cast<std::uint16_t>(d.count());
        if (p_.stall_threshold.load(std::memory_order_relaxed) == 0 && v != 0)
            c_.last_reap = qlimits::ticks_of(now);
        p_.stall_threshold.store(v, std::memory_order_relaxed);
        return true;
    }
    /// Forget the longest stall (any write to sysfs stall_max does this).
    void clear_stall_max() noexcept { c_.stall_max.store(0, std::memory_order_relaxed); }
    /// Translate every absolute counter so that the completed total becomes `completed_total`.
    /// The limits that follow are unchanged (DQL depends only on differences mod 2^32); this is
    /// how tests start counters near 2^32 (the trace directive `origin`). It writes both
    /// sides' counters (relaxed), so call it with neither side running, as reset().
    void rebase(std::uint32_t completed_total) noexcept {
        const std::uint32_t delta =
            completed_total - c_.num_completed.load(std::memory_order_relaxed);
        p_.num_queued.store(p_.num_queued.load(std::memory_order_relaxed) + delta,
                            std::memory_order_relaxed);
        c_.adj_limit.store(c_.adj_limit.load(std::memory_order_relaxed) + delta,
                           std::memory_order_relaxed);
        c_.adj_written += delta;
        sync_adj_seen();
        c_.num_completed.store(completed_total, std::memory_order_relaxed);
        c_.prev_num_queued += delta;
    }

    // ---- observation ---------------------------------------------------------------------

    [[nodiscard]] std::uint32_t limit() const noexcept {
        return c_.limit.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept {
        // Completed first (acquire), queued second: from a third thread the two cannot both be
        // read at one instant, and a completion read after the post it completes would make
        // the difference wrap to ~2^32. Read in this order, the queued count is at least the
        // one each completion read was made against (the completion side's store is release).
        const std::uint32_t done = c_.num_completed.load(std::memory_order_acquire);
        return p_.num_queued.load(std::memory_order_relaxed) - done;
    }
    [[nodiscard]] dql_stats stats() const noexcept {
        return dql_stats{
            .limit = limit(),
            .inflight = inflight(),
            .available = available(),
            .min_limit = c_.min_limit.load(std::memory_order_relaxed),
            .max_limit = c_.max_limit.load(std::memory_order_relaxed),
            .hold_time_ticks = hold_ticks(),
            .lowest_slack = c_.lowest_slack.load(std::memory_order_relaxed),
            .stall_threshold = p_.stall_threshold.load(std::memory_order_relaxed),
            .stall_count = c_.stall_count.load(std::memory_order_relaxed),
            .stall_max = c_.stall_max.load(std::memory_order_relaxed),
            .rejected_enqueues = c_.rejected.load(std::memory_order_relaxed),
        };
    }
    [[nodiscard]] dql_state state() const noexcept {
        dql_state s{};
        s.limit = limit();
        s.num_queued = p_.num_queued.load(std::memory_order_relaxed);
        s.num_completed = c_.num_completed.load(std::memory_order_relaxed);
        s.adj_limit = c_.adj_limit.load(std::memory_order_relaxed);
        s.prev_ovlimit = c_.prev_ovlimit;
        s.lowest_slack = c_.lowest_slack.load(std::memory_order_relaxed);
        s.prev_num_queued = c_.prev_num_queued;
        s.prev_last_obj_cnt = c_.prev_last_obj_cnt;
        s.last_obj_cnt = p_.last_obj_cnt.load(std::memory_order_relaxed);
        s.min_limit = c_.min_limit.load(std::memory_order_relaxed);
        s.max_limit = c_.max_limit.load(std::memory_order_relaxed);
        s.hold_time = hold_ticks();
        s.slack_start_time = c_.slack_start_time;
        s.last_reap = c_.last_reap;
        s.history_head = p_.history_head.load(std::memory_order_relaxed);
        s.stall_count = c_.stall_count.load(std::memory_order_relaxed);
        s.stall_threshold = p_.stall_threshold.load(std::memory_order_relaxed);
        s.stall_max = c_.stall_max.load(std::memory_order_relaxed);
        for (std::size_t i = 0; i < dql_history_words; ++i)
            s.history[i] = p_.history[i].load(std::memory_order_relaxed);
        return s;
    }

private:
    static const config_type& default_config_after_violation() noexcept {
        detail::contract_failed("dql::dql", "invalid dql_config (see dql_config::valid())");
        static constexpr config_type defaults{};
        return defaults;
    }
    bool reject_enqueue() noexcept {
        c_.rejected.store(c_.rejected.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
        return false;
    }
    // may_post()'s reading made current, after a change made with neither side running.
    void sync_adj_seen() noexcept {
        p_.adj_seen = c_.adj_limit.load(std::memory_order_relaxed);
        p_.cuts_seen = p_.cuts.load(std::memory_order_relaxed);
    }
    static bool set_bound(std::atomic<std::uint32_t>& field, std::uint32_t v) noexcept {
        if (v > dql_max_limit) return false;
        field.store(v, std::memory_order_relaxed);
        return true;
    }
    [[nodiscard]] std::uint64_t hold_ticks() const noexcept {
        return c_.hold_time.load(std::memory_order_relaxed);
    }

    // The history is a ring of 4 words of 64 bits; bit (t mod 256) stands for tick t and the
    // head is the index t / 64 of the newest word written. Moving the head to a new word clears
    // every word after the old head up to the new one (all four after a long quiet spell), so
    // bits left from a lap ago never look like fresh posts.
    void mark_history(std::uint64_t t) noexcept {
        const std::uint64_t word = t / dql_history_word_bits;
        const std::uint64_t head = p_.history_head.load(std::memory_order_relaxed);
        if (word != head) [[unlikely]] {
            for (std::uint64_t i = 0; i < dql_history_words; ++i) {
                // Compared as tick numbers (index * 64), i.e. modulo 2^58 in word indices.
                if (word * dql_history_word_bits == (head + i) * dql_history_word_bits) break;
                history_word(head + i + 1).store(0, std::memory_order_relaxed);
            }
            // Pairs with the acquire load in check_stall(): cleared words are visible first.
            p_.history_head.store(word, std::memory_order_release);
        }
        auto& w = history_word(word);
        const std::uint64_t bit = std::uint64_t{1} << (t % dql_history_word_bits);
        const std::uint64_t old = w.load(std::memory_order_relaxed);
        if ((old & bit) == 0) w.store(old | bit, std::memory_order_relaxed);
    }
    std::atomic<std::uint64_t>& history_word(std::uint64_t index) noexcept {
        return p_.history[index % dql_history_words];
    }
    [[nodiscard]] bool history_bit(std::uint64_t t) const noexcept {
        const std::uint64_t w = p_.history[(t / dql_history_word_bits) % dql_history_words].load(
            std::memory_order_relaxed);
        return ((w >> (t % dql_history_word_bits)) & 1U) != 0;
    }

    // A stall is a gap of at least `thrs` ticks without a completion, during the first half of
    // which something was posted. Only posts after the previous completion (last_reap + 1 on)
    // count, and only those at least thrs/2 ticks old.
    void check_stall(std::uint64_t now, std::uint16_t thrs) noexcept {
        const auto window = static_cast<std::uint64_t>(thrs);
        if (detail::time_after_eq(now, c_.last_reap + window)) {
            for (;;) {
                // Pairs with the release store in mark_history().
                const std::uint64_t head = p_.history_head.load(std::memory_order_acquire);
                std::uint64_t start = (head - (dql_history_words - 1)) * dql_history_word_bits;
                if (detail::time_before(start, c_.last_reap + 1)) start = c_.last_reap + 1;
                std::uint64_t end = head * dql_history_word_bits + (dql_history_word_bits - 1);
                if (detail::time_before(now, end + window / 2)) end = now - window / 2;
                // The ring holds 256 ticks, so after 256 probes the bits repeat: looking further
                // can find nothing new.
                bool found = false;
                std::uint64_t when = start;
                for (std::uint64_t k = 0; k < dql_history_words * dql_history_word_bits &&
                                          detail::time_before_eq(when, end);
                     ++k, ++when) {
                    if (history_bit(when)) {
                        found = true;
                        break;
                    }
                }
                if (!found) break;
                // The producer moved the head while we looked: look again at the new window.
                if (head != p_.history_head.load(std::memory_order_acquire)) continue;
                c_.stall_count.store(c_.stall_count.load(std::memory_order_relaxed) + 1,
                                     std::memory_order_relaxed);
                // The stall length is kept in 16 bits and truncated before the comparison.
                const auto len = static_cast<std::uint16_t>(now - when);
                if (len > c_.stall_max.load(std::memory_order_relaxed))
                    c_.stall_max.store(len, std::memory_order_relaxed);
                break;
            }
        }
        c_.last_reap = now;
    }

    // Everything on_queued()/may_post() touch while there is room, in one cache line that
    // only the producer writes, but for `cuts` (rare). The completion path reads it every round
    // (num_queued, last_obj_cnt), as it must; it no longer writes it every round (adj_limit
    // lived here once, and each completion then pulled the line away from the producer).
    struct alignas(cache_line_size) producer_line {
        std::atomic<std::uint32_t> num_queued{0};
        std::atomic<std::uint32_t> last_obj_cnt{0};
        std::atomic<std::uint16_t> stall_threshold{0};
        std::atomic<std::uint32_t> cuts{0}; // bumps: see on_completed() (completion path writes)
        std::uint32_t adj_seen = 0;         // may_post()'s last reading of adj_limit
        std::uint32_t cuts_seen = 0;        // ... and of cuts
        std::atomic<std::uint64_t> history_head{0};
        std::array<std::atomic<std::uint64_t>, dql_history_words> history{};
    };
    // What the completion path owns. Fields also read by stats() from other threads are atomic.
    struct alignas(cache_line_size) completion_line {
        std::atomic<std::uint32_t> adj_limit{0}; // limit + num_completed (available() reads it)
        std::uint32_t adj_written = 0;           // the adj_limit last stored, to see it fall
        std::atomic<std::uint32_t> limit{0};
        std::atomic<std::uint32_t> num_completed{0};
        std::uint32_t prev_ovlimit = 0;
        std::uint32_t prev_num_queued = 0;
        std::uint32_t prev_last_obj_cnt = 0;
        std::atomic<std::uint32_t> lowest_slack{0};
        std::atomic<std::uint32_t> max_limit{0};
        std::atomic<std::uint32_t> min_limit{0};
        std::uint64_t slack_start_time = 0;
        std::atomic<std::uint64_t> hold_time{0};
        std::uint64_t last_reap = 0;
        std::atomic<std::uint64_t> stall_count{0};
        std::atomic<std::uint16_t> stall_max{0};
        // Written by the producer, only when it refuses a post over max_object (bad input):
        // kept off its hot line.
        std::atomic<std::uint64_t> rejected{0};
    };
    static_assert(sizeof(producer_line) == cache_line_size || cache_line_size < 64,
                  "the enqueue path must touch exactly one cache line");

    producer_line p_;
    completion_line c_;
};

static_assert(limit_policy<dql<>>);
static_assert(accepts_seen_time<dql<>>);
static_assert(limit_policy<dql<manual_clock<>>>);
static_assert(limit_policy<dql<steady_clock_source>>);

} // namespace v0
} // namespace qlimits
