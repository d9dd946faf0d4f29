// SPDX-License-Identifier: MIT
// qlimits/limits/software_limit.hpp: a queue limit for software rings (veth's ptr_ring, a tun
// queue, a thread-to-thread queue), where an item is complete the moment the consumer takes it
// and completions may come per item, per poll or coalesced by time. docs/software_limit.md has
// the derivation; in short, the limit is the smallest number of units that
//   (1) keeps the consumer busy while a stopped producer wakes up: the *lead*, measured in units
//       the consumer drains between the moment the policy gives the producer room again and the
//       moment the producer's next post is seen;
//   (2) moves enough units per producer stop -> wake cycle that wake-ups cost at most a share of
//       the consumer's work: the *step*. The producer gets room in steps (hysteresis), so one
//       stop -> wake cycle moves `step` units instead of one. A running producer's room is
//       refreshed every min(step, limit / 8) completions (at least 1: once per item at a limit
//       below 16), so it is never held back with less than limit + 1 - limit / 8 in flight
//       by a room given long ago; every limit / 8 while it is calm (no stop in the last window,
//       never more than half the limit in flight since: set_refresh()). Not while a woken
//       producer's first post is awaited (its wake latency is being measured): a producer that
//       wakes and then pauses before posting has its room refreshed only `step` completions
//       after the wake-up, so it can be held with limit + 1 - step in flight, where a held
//       producer is woken anyway (review 2026-12-05). So available() < 0
//       with inflight() < limit() is normal: a completion path that holds reports back must
//       report them before it idles while the producer is stopped (waiting for more than
//       limit() pending, veth BQL v7's rule for dql, can wait for good);
//   (3) keeps at least a cache line of pointers in flight (the *cache floor*, 8) when items are
//       cheap enough that the line bouncing between the two cores would cost more than that share;
//   (4) for a producer that pauses after each burst, keeps the consumer busy through the pause:
//       the *gap*, tried before it is trusted, since for bursts on a timer's schedule a larger
//       limit only moves the wait into the ring (gap_sample());
// and never more than the drain rate times the sojourn budget (an item waits at most that
// long), nor outside [min_limit, max_limit].
//   limit = clamp(max(lead + max(step, batch) - 1, gap), floor, cap),
//   (for takes, on_taken(): max(lead + step - 1, batch) in place of the first term: a take is
//   work in hand while the producer wakes),
//   cap = drain_rate x sojourn_budget (less the timed wake calls in it), batch = the largest
//   batch completed at one time in this window or the last (recompute()).
//
// Signals, all from the policy's own calls (no producer-side clock; on_queued(n) may come
// without a time):
//  - drain rate and sojourn: a sojourn_probe (sojourn_probe.hpp) times how long the backlog seen
//    at one completion takes to drain; a drain_meter turns that into units per tick;
//  - lead: when room is given to a producer that was over the limit, the completion side watches
//    for the producer's next post; the units completed meanwhile are a lead sample. The ring
//    running dry while the producer is held is a starvation: that batch's units count double.
//    Running dry while a woken producer is awaited (a look saw it, or room was given at an
//    empty ring once a drain rate is known), the consumer idles: the sample adds the idle at
//    the drain rate, and a nonzero idle keeps the next rate sample between two empty moments
//    out. The lead is the largest sample of the current window and what the previous window
//    carried: its own largest sample or half of what it was given, so a lead too big halves
//    at the end of every window;
//  - stop frequency: stops x step per unit completed over a window; it does not depend on the
//    step (a producer that outruns the consumer stops once per step), so step = stop frequency x
//    wake cost / overhead share is a fixed point, not a ratchet;
//  - wake cost: the configured prior, or (learn_wake_cost) the smoothed wait of each wake-up
//    where that is larger, or the smoothed wake call an adapter timed and told
//    (on_wake_call(): channel's futex wake) where that is larger; the told calls are also left
//    out of the drain-rate samples, and the cap counts the calls an item waits through
//    (units_with_calls());
//  - consumer idle: the time the consumer slept on an empty ring, as an adapter timed and told
//    it (on_consumer_idle(): channel's futex wait), is left out of the drain-rate samples too;
//  - a sojourn sample above the budget cuts the limit to drained x budget / sojourn at once;
//  - gap: the consumer's idle after the ring ran dry behind a producer that was free to post,
//    following a busy period in which the limit held it back.
// Nothing grows unless the producer was held back by the limit: lead samples are taken only
// when room is given to a producer that was over the limit, starvation counts only then, and
// a gap is timed only after such a busy period (or while a gap sample is measured or tried).
//
// Time: `now` is used for windows and sojourn samples only, so a coarse clock, or one read once
// per batch, does no harm (a 0-tick sample waits in the meter until a window of ticks is full).
// Ticks are Clock::duration; the configuration is in nanoseconds and converted once.
// on_taken(n, now_fn) reports one take and reads the time only when needed (the probe ends,
// a held or woken producer is dealt with, a rate sample closes, or every limit / 8 takes);
// channel uses it, so a per-item consumer does not read the clock per item.
//
// Threading: on_queued()/available() belong to the producer; on_completed() and reset() to the
// completion path. Each side must be serialised on its own; the two may run concurrently.
// stats() may be called from any thread (each field read atomically; not one snapshot).
// Per completion the policy touches only its completion line. It reads the producer's line
// when the completions catch up with the last reading of it, once per refresh (min(step,
// limit / 8) completions, at least 1, or limit / 8 for a calm producer; for a producer held
// back: at the count where its room is due),
// when an input of the limit changed, and while it waits for a woken producer's next post;
// it writes the room there when it gives room and the room changed.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/limits/sojourn_probe.hpp"

namespace qlimits {
inline namespace v0 {

/// Largest single enqueue, dql's (UINT_MAX / 16), so traces and adapters behave alike.
inline constexpr std::uint32_t software_max_object = std::numeric_limits<std::uint32_t>::max() / 16;
/// Highest limit, dql's (UINT_MAX / 2 - max_object): limit + one object stays below 2^31, so
/// the signed 32-bit available() cannot wrap while the producer honours it.
inline constexpr std::uint32_t software_max_limit =
    std::numeric_limits<std::uint32_t>::max() / 2 - software_max_object;

/// Configuration of a software_limit. Times are in nanoseconds whatever the policy's clock;
/// each is rounded up to whole ticks of that clock (a nonzero cost or budget shorter than a tick
/// counts as one tick: on jiffy_clock's 1 ms ticks the 2 us wake_cost acts, and
/// stats().wake_cost_ns shows it, as 1 ms). Use a clock with ticks well below the costs.
struct software_limit_config {
    /// Lower bound. 1: a limit admits while inflight <= limit, so 1 keeps up to two items in
    /// flight, one being consumed and one waiting: the least that never idles a consumer whose
    /// item takes longer than a wake-up (the lab: a fixed limit of 1 keeps full throughput at veth's
    /// 3500 rules).
    std::uint32_t min_limit = 1;
    /// Upper bound. 4096: the largest ptr_ring a veth or tun queue is set up with in practice
    /// (tx_queue_len 1000 default, ethtool rings up to 4096) and far below software_max_limit;
    /// the sojourn budget is the bound that normally acts. In the policy's units: 4096 items
    /// when each item counts one, but behind an adapter that counts bytes it is under three
    /// 1500-byte packets, so raise it there (e.g. 4096 x the largest item).
    std::uint32_t max_limit = 4096;
    /// Units kept in flight when items are cheap: 8, one 64-byte cache line of 8-byte ring
    /// pointers, the floor found empirically for veth (limit_min=8, veth BQL series; its test
    /// README: "one cache-line of ptr_ring pointers"). 0 turns the floor off.
    std::uint32_t cache_floor = 8;
    /// How long an item may wait in the ring: 100 us, veth BQL v7's tx-usecs default, the
    /// interval its time-based completion "bounds actual queuing delay to". TCP Small Queues
    /// budgets ~1 ms of data per socket; a software hop should wait much less than a TCP flow.
    std::chrono::nanoseconds sojourn_budget = std::chrono::microseconds{100};
    /// Prior for the CPU cost of one producer stop -> wake cycle: 2 us, a futex wake-up plus the
    /// context switch it causes on current x86 Linux (1-5 us; lmbench lat_ctx, futex ping-pong
    /// benchmarks). The policy cannot see CPU time (but for the wake calls an adapter times
    /// and tells, on_wake_call(): the cost is at least those); it sees how often the producer
    /// stops, and sizes the step so that stops x wake_cost stay within the overhead share.
    /// With learn_wake_cost, the floor under the learned cost.
    std::chrono::nanoseconds wake_cost = std::chrono::microseconds{2};
    /// Learn the stop -> wake cost from the wake-ups seen: the wait from giving a held producer
    /// room to its next post, smoothed; wake_cost is then a floor (set it to 0 to let the cost
    /// fall below it too, e.g. for a producer that spins). Off by default: on real threads it
    /// lifted throughput, in the lab it met fewer cases than the prior alone
    /// (docs/software_limit.md, "Learning the wake cost").
    bool learn_wake_cost = false;
    /// Weigh the wake calls an adapter times and tells (on_wake_call(); channel does): the cost
    /// in force is at least the smoothed call, drain-rate samples leave the calls out, and the
    /// cap counts the calls an item waits through. On by default: in the lab it ended a spiral
    /// where wake-ups cost the consumer tens of microseconds and met T6 in as many random cases
    /// as before, with fewer T9 misses; it also lost one case of that kind
    /// (docs/software_limit.md, "Timing the wake call"). false: calls told are ignored.
    bool weigh_wake_calls = true;
    /// Cost per cache-line transfer between the producer's and the consumer's core: 100 ns, the
    /// order of cross-core cache-to-cache latency on x86 servers (core-to-core latency
    /// measurements, 50-150 ns). The cache floor applies while this is more than the overhead
    /// share of one item's consumer time.
    std::chrono::nanoseconds line_transfer_cost = std::chrono::nanoseconds{100};
    /// Overheads (producer wake-ups, cache-line bouncing) may cost at most this share of the
    /// consumer's work, in percent: 10. A design choice: where the consumer is the bottleneck
    /// and pays for the wake-ups it makes, this share is lost throughput at most (wake-ups that
    /// cost less than wake_cost lose less). 3 was tried: steps then grow past what a 100 us
    /// sojourn budget allows on the lab's veth cases (docs/software_limit.md, "The cost model").
    std::uint32_t overhead_share_pct = 10;
    /// Estimation window: 1 ms. Lead samples count whole for one to two windows, then halve at
    /// the end of each; the stop frequency is measured over one. One Linux jiffy at HZ=1000,
    /// the shortest interval at which classic DQL can change its limit at all; this policy
    /// shrinks at the end of every window.
    std::chrono::nanoseconds window = std::chrono::milliseconds{1};

    /// 1 <= min_limit <= max_limit <= software_max_limit; cache_floor <= software_max_limit;
    /// sojourn_budget and window positive and below ~292 years; wake_cost and
    /// line_transfer_cost >= 0; overhead_share_pct in [1, 100].
    [[nodiscard]] constexpr bool valid() const noexcept {
        return min_limit >= 1 && min_limit <= max_limit && max_limit <= software_max_limit &&
               cache_floor <= software_max_limit && sojourn_budget.count() > 0 &&
               window.count() > 0 && wake_cost.count() >= 0 && line_transfer_cost.count() >= 0 &&
               overhead_share_pct >= 1 && overhead_share_pct <= 100;
    }
};

/// How far software_limit's gap term has got in telling a producer that pauses once it has
/// posted its work (a larger limit shortens its cycle) from one whose pauses end on a schedule
/// (a larger limit only moves the wait into the ring). docs/software_limit.md, "The gap term".
enum class software_gap_stage : std::uint8_t {
    none,      ///< no gap asked for a larger limit (or gaps are ignored after a failed trial)
    measuring, ///< gaps are measured for a window, the limit unchanged
    trying,    ///< the limit asked for is in force; the pauses of two windows (or more) judge it
    trusted,   ///< the trial showed the pauses are the producer's: gaps act at once
};

/// What a software_limit knows and why its limit is what it is. Readable from any thread.
struct software_limit_stats {
    std::uint32_t limit;         ///< current limit (units)
    std::uint32_t inflight;      ///< queued - completed (mod 2^32)
    std::int64_t available;      ///< what the producer may still post (< 0: stopped)
    std::uint32_t lead;          ///< units drained while a woken producer gets going
    std::uint32_t step;          ///< units of room given per stop -> wake cycle (hysteresis)
    std::uint32_t floor;         ///< the cache floor in force (0: items too costly for it)
    std::uint32_t cap;           ///< drain rate x sojourn budget (the upper bound in force)
    double drain_rate_per_s;     ///< estimated units drained per second while backlogged
    double sojourn_last_ns;      ///< last sojourn sample (ns)
    double stop_frequency;       ///< stops x step per unit completed, last window
    double wake_cost_ns;         ///< stop -> wake cost in force: max(prior, learned estimate)
    std::uint32_t gap;           ///< limit the gap term asks for (0: none), before the cap
    software_gap_stage gap_stage; ///< how far the gap term is in its trial
    std::uint64_t sojourn_samples; ///< sojourn samples taken
    std::uint64_t stops;         ///< times room was given to a producer over the limit
    std::uint64_t starvations;   ///< times the ring ran dry while the producer was held back
    std::uint64_t budget_cuts;   ///< times a sojourn above the budget cut the limit
    std::uint64_t rejected_enqueues; ///< enqueues refused for exceeding max_object
};

/// The software-interface queue limit (see the file comment).
template <clock_source Clock = steady_clock_source>
class software_limit {
public:
    using clock_type = Clock;
    using duration = typename Clock::duration;
    using time_point = typename Clock::time_point;
    using config_type = software_limit_config;
    using stats_type = software_limit_stats;
    static constexpr std::uint32_t max_object = software_max_object;

    /// An invalid cfg is a contract violation; if the handler returns, the defaults are used.
    explicit software_limit(const config_type& cfg, time_point now) noexcept {
        const config_type& use = cfg.valid() ? cfg : default_config_after_violation();
        c_.min_limit = use.min_limit;
        c_.max_limit = use.max_limit;
        c_.cache_floor = use.cache_floor;
        // At most 2^62 ticks (146 years in nanoseconds): time + budget stays below 2^64.
        c_.budget = std::min(ticks_of_ns(use.sojourn_budget, 1), std::uint64_t{1} << 62);
        c_.wake_cost = ticks_of_ns(use.wake_cost, 0);
        c_.learn_wake = use.learn_wake_cost;
        c_.weigh_calls = use.weigh_wake_calls;
        c_.line_cost = ticks_of_ns(use.line_transfer_cost, 0);
        c_.share = static_cast<double>(use.overhead_share_pct) / 100.0;
        c_.window = ticks_of_ns(use.window, 1);
        c_.meter.set_window(meter_window());
        reset(now);
    }
    software_limit(const software_limit&) = delete;
    software_limit& operator=(const software_limit&) = delete;

    // ---- producer side -------------------------------------------------------------------

    /// Report n units posted. Refused (false, only the rejection counted) when n > max_object.
    bool on_queued(std::uint32_t n) noexcept {
        if (n > max_object) [[unlikely]] {
            p_.rejected.store(p_.rejected.load(std::memory_order_relaxed) + 1,
                              std::memory_order_relaxed);
            return false;
        }
        p_.queued.store(p_.queued.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        return true;
    }
    /// The same; the time is not needed (the policy never reads a producer-side clock).
    bool on_queued(std::uint32_t n, time_point) noexcept { return on_queued(n); }

    /// Room published by the completion side minus what was queued, signed 32-bit; < 0: stop.
    [[nodiscard]] std::int64_t available() const noexcept {
        return static_cast<std::int32_t>(p_.adj_limit.load(std::memory_order_acquire) -
                                         p_.queued.load(std::memory_order_relaxed));
    }

    // ---- completion side -----------------------------------------------------------------

    /// Report n units taken by the consumer, at now. More than is in flight is a contract
    /// violation; if the handler returns, the call is refused (false) and nothing changes.
    /// Completions at the same `now` count as one batch (taken at once, or stamped with one
    /// clock reading).
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        const auto given = [now]() noexcept { return now; };
        return complete<false>(n, given, false);
    }

    /// Report n units taken by the consumer in one take (one pop, one batch: each call is its
    /// own batch), before it works them off (a consumer that reports after the work should
    /// use on_completed(): a take counts as work in hand, for the limit and the drain rate),
    /// calling now() only when the time is needed: when the sojourn probe ends, when
    /// the slow path runs (a held or woken producer, a changed input, an empty ring; giving room
    /// to a running producer needs no time), and on every check_every-th call (limit / 8, at
    /// least 1: the time is read at least eight times while a backlog of `limit` drains, so an
    /// over-budget backlog is cut within an eighth of its drain; eight is a design choice, not
    /// a measured optimum).
    /// `channel` uses this, so per-item completions do not read the clock per item. Use either
    /// this or on_completed() on one policy, not both (the batch tracking differs). Refused as
    /// on_completed(), with one difference: a refused take still ends the take before it (a
    /// later same_take part starts a new take rather than join an older one).
    template <class Now>
        requires std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return complete<true>(n, now, false);
    }
    /// The same, for a take reported in parts (a batch taken at once, completed item by item):
    /// same_take = true says these units left the ring in the same take as the previous call's.
    /// They join its batch (the limit covers a consumer that takes that many at once) and share
    /// its time: the clock is read at most once per take, and a sojourn sample that begins and
    /// ends within one take lasts 0 ticks, so it gives no drain rate (a batch popped in a few
    /// hundred nanoseconds, then worked on, would otherwise read as a consumer draining at that
    /// speed). `channel` passes it for receive_batch() completed per item.
    template <class Now>
        requires std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        return complete<true>(n, now, same_take);
    }
    /// A take with its time given (a consumer that read its clock for the take anyway): the
    /// same as the lazy forms, with every take timed. (Not forwarded by the testing wrappers.)
    bool on_taken(std::uint32_t n, time_point now, bool same_take = false) noexcept {
        const auto given = [now]() noexcept { return now; };
        return complete<true, decltype(given), true>(n, given, same_take);
    }

    /// The completion side just spent `spent` of its own time in the call that woke a producer
    /// stopped by this limit (the wake-up's system call), as timed by the adapter that made it
    /// (channel does, around its futex wake; tx_gate's wake is the ring's own and is not
    /// timed). Three uses: the stop -> wake cost in force is at least the smoothed call (a
    /// consumer whose wake-ups cost it tens of microseconds gets steps that pay for them);
    /// drain-rate samples leave the calls out, so the rate is the consumer's pace at its work,
    /// not a pace that falls with every stop (a costly wake-up made a low cap, a low cap more
    /// stops, and the rate fell further); and the cap counts the calls an item waits through
    /// (units_with_calls()). docs/software_limit.md, "Timing the wake call". Completion side,
    /// after the call that gave the room. A negative duration (a clock that went backwards)
    /// counts as 0. Ignored with weigh_wake_calls = false.
    void on_wake_call(duration spent) noexcept {
        if (!c_.weigh_calls) return;
        const std::uint64_t ticks = count_away(spent);
        smooth_toward(c_.call_est, static_cast<double>(ticks)); // as the learned wait
        c_.inputs_changed = true;
    }

    /// The completion side just waited `spent` for work: it found the ring empty and slept
    /// until a producer's post woke it (channel times its futex wait; the spin before it is not
    /// timed). Drain-rate samples leave that time out, as they leave out the wake calls: the
    /// rate is the consumer's pace at its work. Untold, the time between two empty moments
    /// holds the consumer's sleep and wake-up, so a consumer that sleeps after every step reads
    /// as slow as the whole cycle: the cap (rate x budget) falls, the limit with it, the ring
    /// runs dry sooner and the consumer sleeps more (measured in the lab: limits of 9-12 moving
    /// 0.10-0.15x the items of no limit). docs/software_limit.md, "The consumer's idle".
    /// Completion side, before the take its wait ended in is reported. A negative duration
    /// counts as 0.
    void on_consumer_idle(duration spent) noexcept { (void)count_away(spent); }

    /// Forget everything in flight and every estimate: counters to 0, the limit back to its
    /// start (the cache floor within [min_limit, max_limit]). Kept: the configuration and
    /// rejected_enqueues (a lifetime count). Call only while neither side runs.
    void reset(time_point now) noexcept {
        const std::uint64_t t = ticks_of(now);
        p_.queued.store(0, std::memory_order_relaxed);
        c_.completed.store(0, std::memory_order_relaxed);
        c_.queued_seen = 0;
        c_.published_at = 0;
        c_.wake_pending = false;
        c_.probe.disarm();
        c_.probe_in_hand = 0;
        c_.takes = false;
        c_.meter = drain_meter{meter_window()};
        c_.rate_fp.store(0, std::memory_order_relaxed);
        c_.samples.store(0, std::memory_order_relaxed);
        c_.stop_freq_seen.store(0, std::memory_order_relaxed);
        c_.lead_cur = 0;
        c_.lead_prev = 0;
        c_.lead_units_cur = 0;
        c_.lead_units_prev = 0;
        c_.batch_cur = 0;
        c_.batch_prev = 0;
        c_.batch_run = 0;
        c_.batch_time = t;
        c_.take_timed = false;
        c_.rate_min_cur = 0;
        c_.rate_min_prev = 0;
        c_.empty_valid = false;
        c_.empty_held = false;
        c_.empty_done = 0;
        c_.empty_units = 0;
        c_.empty_time = t;
        c_.inputs_changed = true;
        c_.wake_starved = false;
        c_.idled_since_empty = false;
        c_.probe_cut = false;
        c_.held_in_busy = false;
        c_.gap_after_held = false;
        c_.gap_pending = false;
        c_.gap_time = t;
        c_.gap_done = 0;
        c_.gap_limit = 0;
        c_.gap_cur = c_.gap_prev = 0;
        c_.gap_phase = gap_stage::none;
        c_.gap_ref_idle = c_.gap_trial_max = c_.gap_trial_growth = 0;
        c_.gap_rate_min = c_.gap_rate_max = c_.gap_cycle_units_max = 0;
        c_.gap_trial_begun = false;
        c_.gap_trial_until = t;
        c_.gap_voids = 0;
        c_.gap_ref_need = c_.gap_ref_limit = c_.gap_trial_limit = 0;
        c_.gap_trial_n = c_.gap_trial_low = 0;
        c_.gap_phase_end = t;
        c_.gap_last_valid = false;
        c_.gap_last_time = t;
        c_.gap_last_done = 0;
        c_.gap_ref_units = c_.gap_ref_ticks = c_.gap_trial_units = c_.gap_trial_ticks = 0;
        c_.gap_off_until = t;
        c_.gap_backoff = 8;
        c_.gap_seen.store(0, std::memory_order_relaxed);
        c_.gap_stage_seen.store(gap_stage::none, std::memory_order_relaxed);
        c_.wake_time = t;
        c_.resolve_time = ~std::uint64_t{0};
        c_.settle_by = deadline_after(t, c_.budget < c_.window ? c_.budget : c_.window);
        c_.published_time = t;
        c_.last_time = t;
        c_.batch_published_time = t;
        c_.batch_done = 0;
        c_.window_start = t;
        c_.window_end = deadline_after(t, c_.window);
        c_.window_completed = 0;
        c_.window_stop_steps = 0;
        c_.stop_freq = 0;
        c_.wake_est = static_cast<double>(c_.wake_cost);
        c_.call_est = 0;
        c_.away_ticks = c_.probe_away = c_.empty_away = 0;
        c_.wake_est_seen.store(wake_cost_in_force() * ns_per_tick(), std::memory_order_relaxed);
        c_.stops.store(0, std::memory_order_relaxed);
        c_.starvations.store(0, std::memory_order_relaxed);
        c_.budget_cuts.store(0, std::memory_order_relaxed);
        c_.sojourn_last.store(0, std::memory_order_relaxed);
        const std::uint32_t start = clamp(c_.cache_floor, c_.min_limit, c_.max_limit);
        c_.lead.store(0, std::memory_order_relaxed);
        c_.floor.store(start, std::memory_order_relaxed);
        c_.cap.store(c_.max_limit, std::memory_order_relaxed);
        c_.step = 1;
        c_.refresh = 1;
        c_.calm = false;
        c_.peak_cur = 0;
        c_.step_seen.store(1, std::memory_order_relaxed);
        c_.limit.store(start, std::memory_order_relaxed);
        c_.check_every = start / 8 == 0 ? 1 : start / 8; // as set_limit() (on_taken())
        c_.until_time_check = 1;                         // the first take reads the time
        publish(0, start);
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
        const std::uint32_t done = c_.completed.load(std::memory_order_acquire);
        return p_.queued.load(std::memory_order_relaxed) - done;
    }
    [[nodiscard]] software_limit_stats stats() const noexcept {
        const double rate = per_tick_of(c_.rate_fp.load(std::memory_order_relaxed));
        return software_limit_stats{
            .limit = limit(),
            .inflight = inflight(),
            .available = available(),
            .lead = c_.lead.load(std::memory_order_relaxed),
            .step = c_.step_seen.load(std::memory_order_relaxed),
            .floor = c_.floor.load(std::memory_order_relaxed),
            .cap = c_.cap.load(std::memory_order_relaxed),
            .drain_rate_per_s = rate / ns_per_tick() * 1e9,
            .sojourn_last_ns =
                static_cast<double>(c_.sojourn_last.load(std::memory_order_relaxed)) *
                ns_per_tick(),
            .stop_frequency = c_.stop_freq_seen.load(std::memory_order_relaxed),
            .wake_cost_ns = c_.wake_est_seen.load(std::memory_order_relaxed),
            .gap = c_.gap_seen.load(std::memory_order_relaxed),
            .gap_stage = c_.gap_stage_seen.load(std::memory_order_relaxed),
            .sojourn_samples = c_.samples.load(std::memory_order_relaxed),
            .stops = c_.stops.load(std::memory_order_relaxed),
            .starvations = c_.starvations.load(std::memory_order_relaxed),
            .budget_cuts = c_.budget_cuts.load(std::memory_order_relaxed),
            .rejected_enqueues = p_.rejected.load(std::memory_order_relaxed),
        };
    }

private:
    using gap_stage = software_gap_stage;
    // Windows a tried gap term is trusted, and the longest back-off after a failed trial: 1024,
    // about a second at the default window (a design choice: a producer's kind changes rarely).
    static constexpr std::uint64_t gap_trust = 1024;
    // A tried gap term that moves at least 2 % more units per cycle than measured is kept: a
    // design choice, above the spread of a timer-paced producer's cycles.
    static constexpr double gap_gain = 1.02;

    static const config_type& default_config_after_violation() noexcept {
        detail::contract_failed("software_limit::software_limit",
                                "invalid software_limit_config (see software_limit_config::valid())");
        static constexpr config_type defaults{};
        return defaults;
    }
    static std::uint64_t ticks_of(time_point t) noexcept {
        return static_cast<std::uint64_t>(t.time_since_epoch().count());
    }
    static constexpr double ns_per_tick() noexcept {
        return 1e9 * static_cast<double>(duration::period::num) /
               static_cast<double>(duration::period::den);
    }
    // Nanoseconds to ticks, rounded up (a budget shorter than a tick is one tick), at least lo.
    static std::uint64_t ticks_of_ns(std::chrono::nanoseconds d, std::uint64_t lo) noexcept {
        const double t = std::ceil(static_cast<double>(d.count()) / ns_per_tick());
        const auto v = t >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
                                   : static_cast<std::uint64_t>(t);
        return v < lo ? lo : v;
    }
    static constexpr std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) noexcept {
        return b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b
                   ? std::numeric_limits<std::uint64_t>::max()
                   : a * b;
    }
    // Deadlines. Times are compared modulo 2^64, as clock.hpp promises (a clock that starts
    // below zero, or a jiffies-like counter, wraps), so a deadline is at most 2^62 ticks ahead
    // (146 years in nanoseconds: "never" for any window or back-off) and reached once the
    // signed difference is no longer negative. A saturated absolute deadline would never be
    // reached after the wrap (review 2026-12-04: the gap term then stayed off for good).
    static constexpr std::uint64_t max_ahead = std::uint64_t{1} << 62;
    static constexpr std::uint64_t deadline_after(std::uint64_t t, std::uint64_t ticks) noexcept {
        return t + (ticks < max_ahead ? ticks : max_ahead);
    }
    static constexpr bool reached(std::uint64_t t, std::uint64_t deadline) noexcept {
        return static_cast<std::int64_t>(t - deadline) >= 0;
    }
    // The earlier of two deadlines set at the same time.
    static constexpr std::uint64_t earlier(std::uint64_t a, std::uint64_t b) noexcept {
        return reached(a, b) ? b : a;
    }
    // a + b, saturated at the int64 bounds (clock jumps of 2^62 ticks or more would overflow).
    static constexpr std::int64_t sat_add_signed(std::int64_t a, std::int64_t b) noexcept {
        if (b > 0 && a > std::numeric_limits<std::int64_t>::max() - b)
            return std::numeric_limits<std::int64_t>::max();
        if (b < 0 && a < std::numeric_limits<std::int64_t>::min() - b)
            return std::numeric_limits<std::int64_t>::min();
        return a + b;
    }
    static constexpr std::uint32_t clamp(std::uint64_t v, std::uint32_t lo,
                                         std::uint32_t hi) noexcept {
        return v < lo ? lo : (v > hi ? hi : static_cast<std::uint32_t>(v));
    }

    // on_completed() (Lazy = false: the time is given, and same-time completions are one
    // batch) and on_taken() (Lazy = true: one call is one take, or a part of one with same_take;
    // the time read when needed).
    // same_take (on_taken() only): the units belong to the previous call's take.
    // Given (on_taken() with a time_point): every take is timed, as on_completed()'s calls are.
    template <bool Lazy, class Now, bool Given = false>
    bool complete(std::uint32_t n, const Now& now, bool same_take) noexcept {
        if constexpr (Lazy) {
            if (!same_take) {
                // A new take: nothing of the last one carries over, even if this call is
                // refused (a part after a refusal then starts afresh, not in an older take).
                c_.batch_run = 0;
                c_.take_timed = false;
                c_.resolve_time = ~std::uint64_t{0}; // the wake's look belongs to an older take
            }
        }
        const std::uint32_t before = c_.completed.load(std::memory_order_relaxed);
        if (n > c_.queued_seen - before) {
            // The last reading of the producer's count is a lower bound; read it again (kept
            // only if the call is accepted: a refused call changes nothing that later calls see).
            const std::uint32_t q = p_.queued.load(std::memory_order_relaxed);
            if (n > q - before) [[unlikely]] {
                detail::contract_failed(Lazy ? "software_limit::on_taken"
                                             : "software_limit::on_completed",
                                        "over-completion: completed more than is in flight");
                return false;
            }
            c_.queued_seen = q;
            saw_inflight(q - before);
        }
        // What the last accepted call reported: takes (before the work) or completions (after).
        if (c_.takes != Lazy) c_.takes = Lazy;
        const std::uint32_t done = before + n;
        c_.completed.store(done, std::memory_order_release); // see inflight()
        std::uint64_t t = 0;
        bool timed = true; // t holds this call's time
        // The time, read now for this call (and its take).
        const auto read_time = [&]() noexcept {
            c_.take_time = c_.last_time = ticks_of(now());
            c_.take_timed = true;
            return c_.take_time;
        };
        if constexpr (Lazy) {
            c_.batch_run += n; // 0 at a new take (above)
            if (c_.take_timed) {
                t = c_.take_time; // a part of a take whose time is known: no reading needed
            } else if constexpr (Given) {
                t = read_time();
            } else {
                timed = --c_.until_time_check == 0;
                if (timed) {
                    c_.until_time_check = c_.check_every;
                    t = read_time();
                }
            }
        } else {
            // Completions at the same time are one batch (a consumer that took them at once,
            // or a caller that read the clock once for them).
            t = ticks_of(now());
            c_.batch_run = t == c_.batch_time ? c_.batch_run + n : n;
            c_.batch_time = t;
        }
        // Set when an input of the limit changed here: the slow path recomputes it at once.
        bool changed = false;
        // The largest batch this window.
        if (c_.batch_run > c_.batch_cur) [[unlikely]] {
            c_.batch_cur = c_.batch_run;
            c_.inputs_changed = changed = true;
        }
        // Parts of the take whose look saw a woken producer's post (as completions at the same
        // time for on_completed()) extend that lead sample (on_taken(): parts of that take only;
        // a new take clears resolve_time, so a later take in the same clock tick does not).
        if (timed && t == c_.resolve_time && (!Lazy || same_take)) [[unlikely]] {
            const std::uint32_t u =
                c_.wake_checked_done - c_.wake_done + (done - c_.wake_checked_done) / 2;
            if (u > c_.lead_units_cur) c_.lead_units_cur = u;
            c_.inputs_changed = changed = true;
        }
        if (c_.probe.armed()) {
            if (c_.probe.passed(done)) {
                if (!timed) t = read_time();
                timed = true;
                (void)c_.probe.on_completed(done, t);
                on_sample(done);
                changed = true;
            } else if (timed && !c_.probe_cut && c_.probe.elapsed(t) > c_.budget) [[unlikely]] {
                over_budget_early(done, t);
            }
        }
        // The common case ends here: nothing the limit depends on changed, and the completions
        // have not reached the count at which room is next due (settle_at: every refresh for a
        // running producer, the count that brings a held one within limit + 1 - step), nor
        // caught up with the last reading of the producer's count; no woken producer is awaited
        // and the window has not ended (settle_by: at the latest one budget after the last look;
        // checked whenever the time was read).
        if (!changed && static_cast<std::int32_t>(done - c_.settle_at) < 0 &&
            done != c_.queued_seen && !c_.wake_pending && !c_.gap_pending &&
            (!timed || !reached(t, c_.settle_by))) [[likely]]
            return true;
        if constexpr (Lazy) {
            // Only a woken producer's next post awaited (the commonest slow look with per-item
            // takes): look at its count, and read the time only once the post shows. The look
            // is kept in units; the wait in ticks then runs from the last look that read the
            // time, an overestimate that the units measure bounds (lead_sample's callers take
            // the smaller of the two).
            // (Within a step of the gift, as settle() waits: settle_at may come sooner, every
            // refresh, which would read the time only to keep waiting.)
            if (!timed && !changed && c_.wake_pending && done - c_.published_at < c_.step &&
                done != c_.queued_seen) {
                // (A producer held again by a cut that took its room back is not due within a
                // step of that cut: it is held with more than the cut limit in flight, and due
                // at limit + 1 - step. So this early return never delays room that is due;
                // settle() forgets the wake-up then.)
                const std::uint32_t q = p_.queued.load(std::memory_order_relaxed);
                if (q == c_.wake_queued && q != done) {
                    c_.queued_seen = q;
                    c_.wake_checked_done = done;
                    return true;
                }
            }
            // A running producer's room is due (every refresh), or the completions caught up with
            // the last reading of its count: when the producer's count shows it running (within
            // its room) with work still in flight, and nothing else is pending (no woken
            // producer, no recompute), the look needs no time: give room and go on.
            //  - the gift is stamped with the latest time read (last_time: at most check_every
            //    takes old), earlier than the real one. The lead sample that reads it (the ring
            //    running dry under a held producer) overstates its ticks by at most those takes,
            //    and the limit takes the smaller of its ticks and units. An empty ring is left
            //    to the timed slow path: there every take publishes, and a stale time would
            //    overstate the lead by up to check_every polls (measured: the limit 25-60 %
            //    higher for a consumer that takes everything at each poll);
            //  - a backlog with no probe timing it (the last one ended on an empty ring) makes
            //    the look a timed one that arms it, so an over-budget backlog is cut as promptly
            //    as before;
            //  - windows and the budget are looked at on the timed takes (and a recompute still
            //    pending after a budget cut makes this look a timed one).
            //  - a calm producer's backlog (set_refresh()) is left to the timed takes: it is far
            //    below the limit, and a consumer right behind it otherwise made every take
            //    after an empty ring a timed look that armed a probe.
            if (!timed && !changed && !c_.wake_pending && !c_.gap_pending &&
                !c_.inputs_changed && (c_.probe.armed() || c_.calm)) {
                const std::uint32_t q = p_.queued.load(std::memory_order_relaxed);
                const bool due = done - c_.published_at >= c_.refresh;
                if (q != done && static_cast<std::int32_t>(q - c_.adj_pub) <= 0 &&
                    (due || static_cast<std::int32_t>(done - c_.settle_at) < 0)) {
                    c_.queued_seen = q;
                    saw_inflight(q - done);
                    if (due) {
                        publish(done, c_.limit.load(std::memory_order_relaxed));
                        c_.published_time = c_.last_time;
                    }
                    return true;
                }
            }
        }
        if (!timed) t = read_time();
        c_.last_time = t;
        // The switch is for the differential test only (tests/differential/): define it in every
        // translation unit or none.
#ifndef QLIMITS_SOFTWARE_LIMIT_NO_INLINE_LOOK
        if (!changed && running_look(done, t)) return true;
#endif
        settle(done, t);
        return true;
    }

    // settle() for its commonest cases, without its call: a producer running within its room,
    // nothing pending or to recompute, the window not over, and either work in flight that a
    // probe is timing, or a ring just emptied with nothing for settle() to time (no busy period
    // that held the producer, no gap trial). It does what settle() does then: give room if due
    // (always at an empty ring), restart the budget, note the empty moment. The room follows
    // the limit in force already: the limit changes only in a recompute (settle(), which gives
    // room with it) or in a budget cut, which sets inputs_changed. A review's randomized
    // differential run against settle() (2026-12-03: every byte of the state compared after
    // some 11 M such looks) found one difference, a producer 2^31 past its room (handled
    // below), and no other; tests/differential/ keeps checking, and the lab's output is
    // byte-identical. Where every call looks (completions in batches of `refresh` or more, or
    // each emptying the ring) this cut the cost of a call by about a fifth
    // (docs/software_limit.md, "Cost per call"). Returns false, having changed nothing, for
    // every other case.
    bool running_look(std::uint32_t done, std::uint64_t t) noexcept {
        if (c_.wake_pending || c_.gap_pending || c_.inputs_changed ||
            t - c_.window_start >= c_.window)
            return false;
        const std::uint32_t q = p_.queued.load(std::memory_order_relaxed);
        if (static_cast<std::int32_t>(q - c_.adj_pub) > 0) return false; // held
        const bool dry = q == done;
        if (dry ? c_.held_in_busy || c_.empty_held || c_.gap_phase == gap_stage::measuring ||
                      c_.gap_phase == gap_stage::trying
                : !c_.probe.armed())
            return false;
        c_.queued_seen = q;
        saw_inflight(q - done);
        const std::uint32_t lim = c_.limit.load(std::memory_order_relaxed);
        if (dry || done - c_.published_at >= c_.refresh) {
            publish_at(done, lim, t);
            // Held by the new room only for a producer more than 2^31 units past the old one
            // (the 32-bit comparison wraps): settle()'s rule for a held producer, as there.
            if (static_cast<std::int32_t>(q - c_.adj_pub) > 0) c_.settle_at = q - lim - 1 + c_.step;
        }
        c_.settle_by = earlier(deadline_after(t, c_.budget), c_.window_end);
        if (dry) {
            c_.idled_since_empty = false;
            c_.empty_done = done;
        }
        return true;
    }

    // publish() at time t, remembering when room was given (for the lead samples).
    void publish_at(std::uint32_t done, std::uint32_t lim, std::uint64_t t) noexcept {
        publish(done, lim);
        if (t != c_.published_time) {
            // The first gift of room at this time: remember the previous one, so a batch
            // reported item by item is measured from the same start as one reported at once.
            c_.batch_published_time = c_.published_time;
            c_.batch_done = done - c_.batch_run;
        }
        c_.published_time = t;
    }

    // Give the producer room up to limit units past what is completed.
    void publish(std::uint32_t done, std::uint32_t lim) noexcept {
        c_.published_at = done;
        c_.settle_at = done + c_.refresh;
        if (done + lim == c_.adj_pub) return; // the same room: leave the producer's line alone
        c_.adj_pub = done + lim;
        // Release, after the completed count's store: a producer admitted on this room
        // (acquire in available()) reads a completed count at least `done` (as dql).
        p_.adj_limit.store(c_.adj_pub, std::memory_order_release);
    }

    // A lead sample: from giving room to a held producer to seeing its next post, in ticks and
    // in units completed meanwhile. The limit uses the smaller of the two conversions: units
    // measured while items were cheap overstate the lead once they are costly, and ticks
    // measured between costly completions overstate it once they are cheap.
    void lead_sample(std::uint64_t ticks, std::uint32_t units) noexcept {
        if (static_cast<std::int64_t>(ticks) < 0) ticks = 0; // a clock that went backwards
        if (ticks > c_.lead_cur) c_.lead_cur = ticks;
        if (units > c_.lead_units_cur) c_.lead_units_cur = units;
        c_.inputs_changed = true;
    }

    // A stop -> wake cycle ended after `ticks` (or `units` completed meanwhile, if `counted`):
    // the time the producer took from being given room to posting again, resolved to about one
    // completion interval. The policy sees no CPU time; this wait is what it can see of a
    // wake-up's cost: the waker's system call, the scheduler switching the producer in and its
    // return from the wait all lie inside it (a producer that spins instead of sleeping shows
    // a wait shorter than one completion interval). Where the ring ran dry before the post was
    // seen, the wait also holds the consumer's own wake-up: an overestimate, counted as such.
    // The cost in force is the larger of this estimate and the prior (wake_cost_in_force()).
    // The estimate starts at the configured prior and moves 1/8 of the way to each sample,
    // the gain of TCP's smoothed round-trip time (RFC 6298): a wake-up happens thousands of
    // times a second, so it follows a change within a few dozen wake-ups and one preempted
    // producer moves it by an eighth. Samples count at most one budget: a wait longer than an
    // item may wait is a scheduler pause, and no step could make up for it.
    void wake_sample(std::uint64_t ticks, std::uint32_t units, bool counted) noexcept {
        if (!c_.learn_wake) return;
        if (static_cast<std::int64_t>(ticks) < 0) ticks = 0; // a clock that went backwards
        double x = static_cast<double>(ticks);
        // The smaller of ticks and units at the planning rate, as for the lead (ticks counted
        // from a look that did not read the time overstate the wait).
        if (const std::uint64_t r = planning_rate(); r != 0 && counted) {
            const double one = static_cast<double>(std::uint64_t{1} << drain_meter::rate_shift);
            const double by_units = static_cast<double>(units) * one / static_cast<double>(r);
            if (by_units < x) x = by_units;
        }
        smooth_toward(c_.wake_est, x);
    }
    // Move a smoothed cost (ticks) 1/8 of the way to sample x, x counted at most one budget (a
    // wait or a call longer than an item may wait is a preemption, and no step could make up
    // for it), and publish the cost in force. For the learned wait and the timed wake call.
    void smooth_toward(double& est, double x) noexcept {
        const double cap = static_cast<double>(c_.budget);
        if (x > cap) x = cap;
        est += (x - est) / 8.0;
        if (est < 1e-9) est = 0; // a decay to zero stays out of denormals
        c_.wake_est_seen.store(wake_cost_in_force() * ns_per_tick(), std::memory_order_relaxed);
    }
    // The prior is a floor: learning only raises the cost (a prior of 0 learns freely). Without
    // learning wake_est stays at the prior. A timed wake call (on_wake_call()) is a part of the
    // cycle's cost that is known, so the cost is at least that.
    [[nodiscard]] double wake_cost_in_force() const noexcept {
        const double prior = static_cast<double>(c_.wake_cost);
        const double seen = c_.wake_est > prior ? c_.wake_est : prior;
        return c_.call_est > seen ? c_.call_est : seen;
    }
    // Add a told wake call or idle wait to the consumer's time away from its work (a negative
    // one counts as 0); returns it in ticks. The sum wraps: it is only read as a difference
    // over one sample (less_away()), exact while what is told within one sample stays below
    // 2^64 ticks. (It saturated until 2026-12-05: once pinned at 2^64 - 1 by absurd durations,
    // or by 2^64 ticks told over a process's life, every later difference read 0 and no idle
    // was left out of the rate again.)
    std::uint64_t count_away(duration spent) noexcept {
        const auto d = spent.count();
        const std::uint64_t ticks = d <= 0 ? 0 : static_cast<std::uint64_t>(d);
        c_.away_ticks += ticks;
        return ticks;
    }
    // Ticks of `ticks` that the consumer spent at its work: less the wake calls and idle waits
    // told since `away_then` (the away_ticks reading at the interval's start); 0 if they fill it.
    [[nodiscard]] std::uint64_t less_away(std::uint64_t ticks,
                                          std::uint64_t away_then) const noexcept {
        const std::uint64_t away = c_.away_ticks - away_then;
        return static_cast<std::int64_t>(ticks) < 0 ? ticks : (away >= ticks ? 0 : ticks - away);
    }

    // The probe finished: the backlog seen at arming took `sojourn` ticks to drain.
    void on_sample(std::uint32_t done) noexcept {
        const sojourn_sample& smp = c_.probe.last();
        count(c_.samples);
        c_.sojourn_last.store(smp.sojourn, std::memory_order_relaxed);
        const std::uint32_t worked = worked_since_arm(smp.drained);
        if (worked == 0) return; // within one take (0 ticks): nothing about a rate
        rate_sample(worked, less_away(smp.sojourn, c_.probe_away));
        if (smp.sojourn > c_.budget && !c_.probe_cut) cut_to_budget(done, worked, smp.sojourn);
    }

    // Units the consumer worked off since the probe was armed, of `drained` completed since.
    // Takes (on_taken()) are reported before the work: the take that armed the probe was still
    // to be worked off then, and the take that ends it is not yet. Counting completions instead
    // took a small backlog behind a big take (a take of 8 leaving 1) for a slow consumer (1
    // unit in the time of 8): the rate too low, the limit down to the cache floor, the consumer
    // idle while the producer wakes, and the idle confirms the low rate (docs/software_limit.md,
    // "A take's drain rate"). Same-time completions (on_completed()) count as reported after
    // the work, as far as the policy can tell: no correction when the passing call is one.
    [[nodiscard]] std::uint32_t worked_since_arm(std::uint32_t drained) const noexcept {
        if (!c_.takes) return drained;
        const std::int64_t w = std::int64_t{drained} + c_.probe_in_hand - c_.batch_run;
        return w <= 0 ? 0 : static_cast<std::uint32_t>(std::min<std::int64_t>(w, 0xffffffff));
    }

    // The meter averages over the budget's time scale (the cap is rate x budget); its first
    // reading, after a start or reset, over no more than one estimate window: with a budget
    // of seconds it would give no rate for seconds, and the limit would sit at the floor all
    // that time (review, 2026-12-04: a 1 s budget held it at 8 for the whole first second, at
    // 3-7x fewer items than 100 us). Only the first: every reading over one window let the
    // sojourn p99 overrun budgets of 1.5-5 ms by 7-29 % (review, 2026-12-05, veth-bql sw-poll).
    [[nodiscard]] std::uint64_t meter_window() const noexcept {
        return std::min(c_.budget, c_.window);
    }

    // Units drained in ticks, into the meter; each meter reading (an average over at least a
    // budget of backlogged time; the first over meter_window()) also updates the slowest
    // reading of this window. A sample within one tick is dropped: units completed at the
    // same time were taken at once (or stamped with one clock reading) and say nothing about
    // a rate.
    void rate_sample(std::uint32_t units, std::uint64_t ticks) noexcept {
        // None from a clock that stepped backwards (a wrapped difference, above 2^63): added to
        // the meter's open window it would wrap its tick sum and read as a rate near 0.
        if (ticks == 0 || static_cast<std::int64_t>(ticks) < 0) return;
        if (c_.meter.add(units, ticks)) {
            c_.meter.set_window(c_.budget); // the first reading may have been over less
            const std::uint64_t r = c_.meter.rate_fp();
            c_.rate_fp.store(r, std::memory_order_relaxed);
            if (c_.rate_min_cur == 0 || r < c_.rate_min_cur) c_.rate_min_cur = r;
            c_.inputs_changed = true;
        }
    }

    // The armed probe has been running longer than the budget: its sample will exceed it. Cut
    // now to what drained so far in the budget, rather than after the backlog has drained.
    void over_budget_early(std::uint32_t done, std::uint64_t t) noexcept {
        // Units worked off so far; none (a 0-unit take armed the probe, and nothing since) is
        // no figure to cut to: a later look, or the sample at the pass, cuts.
        const std::uint32_t worked = worked_since_arm(c_.probe.drained(done));
        if (worked == 0) return;
        c_.probe_cut = true;
        cut_to_budget(done, worked, c_.probe.elapsed(t));
    }

    // Limit to what drains within the budget at the rate `drained` per `ticks`, if lower.
    void cut_to_budget(std::uint32_t done, std::uint32_t drained, std::uint64_t ticks) noexcept {
        const double fit = static_cast<double>(drained) * static_cast<double>(c_.budget) /
                           static_cast<double>(ticks);
        const std::uint32_t cut = clamp(static_cast<std::uint64_t>(fit), c_.min_limit,
                                        c_.max_limit);
        if (cut >= c_.limit.load(std::memory_order_relaxed)) return;
        count(c_.budget_cuts);
        c_.inputs_changed = true; // the next look recomputes from the estimates, as always
        c_.lead_cur = c_.lead_prev = 0;
        c_.lead_units_cur = c_.lead_units_prev = 0;
        c_.gap_cur = c_.gap_prev = 0;
        set_limit(cut, cut < c_.step ? cut : c_.step);
        c_.cap.store(cut, std::memory_order_relaxed);
        // The floor in force is within the cap, as recompute() sets it.
        if (c_.floor.load(std::memory_order_relaxed) > cut)
            c_.floor.store(cut, std::memory_order_relaxed);
        // Less room from here on: the producer sees the smaller adj_limit at once.
        if (static_cast<std::int32_t>(done + cut - c_.adj_pub) < 0) publish(done, cut);
    }

    void set_limit(std::uint32_t lim, std::uint32_t step) noexcept {
        c_.limit.store(lim, std::memory_order_relaxed);
        // on_taken() reads the time every limit / 8 takes (see there).
        c_.check_every = lim / 8 == 0 ? 1 : lim / 8;
        if (c_.until_time_check > c_.check_every) c_.until_time_check = c_.check_every;
        c_.step = step == 0 ? 1 : step;
        c_.step_seen.store(c_.step, std::memory_order_relaxed);
        // A running producer's room is refreshed at least every limit / 8 completions: refreshed
        // only every step, it ran out of a room given up to step completions ago and was held
        // with as little as limit + 1 - step in flight, then given room at once (it was due): a
        // stop -> wake cycle that moved nothing, once per step, for a producer barely faster
        // than the consumer, and those stops kept the step (and the limit) high. Measured in
        // docs/software_limit.md ("Room for a running producer").
        if (c_.calm && c_.peak_cur > lim / 2) c_.calm = false;
        set_refresh();
    }

    // The refresh of a running producer's room: min(step, limit / 8) completions, or limit / 8
    // while the producer is calm: no stop in the last window and never more than half the
    // limit in flight at a look since it began. Refreshed every step, a producer that is never
    // stopped (step 1) had its room written into its cache line at every completion, and
    // read it back at its next post: two line transfers per item where the ring has one
    // (docs/software_limit.md, "A calm producer's room"). A calm producer held by a room up
    // to limit / 8 completions old still has more than 7/8 of the limit in flight, and any
    // look that finds it held, or past half the limit, ends the calm at once.
    void set_refresh() noexcept {
        c_.refresh = c_.calm ? c_.check_every : std::min(c_.step, c_.check_every);
        const std::uint32_t at = c_.published_at + c_.refresh;
        // A smaller refresh makes room due sooner: look again by then (looking early is
        // harmless). A larger one (calm) moves the look out, unless a held producer is due
        // sooner (it is not calm then).
        if (static_cast<std::int32_t>(at - c_.settle_at) < 0 || c_.calm) c_.settle_at = at;
    }
    // A look saw `inflight` units in flight: the peak of the window, and the end of the calm
    // past half the limit.
    void saw_inflight(std::uint32_t inflight) noexcept {
        if (inflight <= c_.peak_cur) return;
        c_.peak_cur = inflight;
        if (c_.calm && inflight > c_.limit.load(std::memory_order_relaxed) / 2) {
            c_.calm = false;
            set_refresh();
        }
    }

    // The slow path: read the producer's count, follow a woken producer, roll the window,
    // recompute the limit, give room.
    void settle(std::uint32_t done, std::uint64_t t) noexcept {
        const std::uint32_t q = p_.queued.load(std::memory_order_relaxed);
        c_.queued_seen = q;
        const std::uint32_t inflight = q - done;
        // The producer went past the room it was given: it is stopped (or stops at its next
        // look at available()); the limit, not the producer, is holding work back.
        const bool held = static_cast<std::int32_t>(q - c_.adj_pub) > 0;
        if (held) c_.held_in_busy = true;
        saw_inflight(held ? c_.max_limit : inflight); // held: no longer calm
        if (c_.gap_pending) gap_sample(done, t);

        if (c_.wake_pending) {
            if (q != c_.wake_queued) {
                // The woken producer has posted, at some time since the last look that did not
                // see it: the wait is a lead sample, both in ticks and in units completed
                // meanwhile. The midpoint between that last look and this one, unless the ring
                // ran dry meanwhile: then all of it (the consumer idled, the lead was short).
                if (c_.wake_starved) {
                    // In units, those completed plus what would have drained in the idle since
                    // the ring ran dry: the completed count alone is at most what was in flight
                    // when room was given, about the limit itself, and would hold the limit
                    // where it is however long the producer took (a limit too small for a slow
                    // wake-up then stays too small). The cap (the sojourn budget) bounds what a
                    // long stall makes of it. (None if the clock went backwards, or the ring is
                    // not dry yet: a dry wait started when room was given at an empty ring.)
                    const std::uint64_t idle_units =
                        !reached(c_.wake_dry_time, t)
                            ? units_at(planning_rate(), t - c_.wake_dry_time, false)
                            : 0;
                    const std::uint64_t units = (done - c_.wake_done) + idle_units;
                    lead_sample(t - c_.wake_time, clamp(units, 0, c_.max_limit));
                    // No rate sample over this idle (below).
                    if (idle_units != 0) c_.idled_since_empty = true;
                    // The consumer idled meanwhile: the units completed undercount the wait.
                    wake_sample(t - c_.wake_time, 0, false);
                } else {
                    // In units only those completed before that last look: units reported at
                    // once (a batch taken together) say nothing about when the post came.
                    // Signed: a clock that went backwards gives a negative sample (taken as 0
                    // by both samplers), not a halved wrap-around.
                    const auto lo = static_cast<std::int64_t>(c_.wake_checked - c_.wake_time);
                    const auto since = static_cast<std::int64_t>(t - c_.wake_checked);
                    const auto ticks = static_cast<std::uint64_t>(sat_add_signed(lo, since / 2));
                    const std::uint32_t units =
                        c_.wake_checked_done - c_.wake_done + (done - c_.wake_checked_done) / 2;
                    lead_sample(ticks, units);
                    wake_sample(ticks, units, true);
                    // Completions still to come at this same time belong to this look (a batch
                    // reported item by item): on_completed() extends the sample with them.
                    c_.resolve_time = t;
                }
                c_.wake_pending = false;
            } else if (held) {
                // The room was taken back (a budget cut, a lower limit) before the woken
                // producer posted: it is held again, and this wake-up can give no lead sample.
                // It gets room by the rule every held producer does, and is timed afresh then.
                c_.wake_pending = false;
            } else {
                // Completions at the very time room was given belong to the batch that gave
                // it (reported item by item), not to the wait: move the start past them.
                if (t == c_.wake_time) c_.wake_done = done;
                c_.wake_checked = t;
                c_.wake_checked_done = done;
                if (inflight == 0 && t == c_.wake_time) {
                    // The batch that gave room (reported item by item at one time) took
                    // everything: as a batch reported at once would (below), the lead must
                    // cover such a batch.
                    lead_sample(t - c_.batch_published_time, 2 * (done - c_.batch_done));
                } else if (inflight == 0) {
                    // Dry, later than room was given, before the woken producer posted: the
                    // consumer idles (within the batch that gave room, a consumer that takes
                    // everything at once is still busy with what it took). Keep waiting.
                    if (!c_.wake_starved) {
                        count(c_.starvations);
                        c_.wake_dry_time = t;
                    }
                    c_.wake_starved = true;
                } else if (done - c_.published_at < c_.step) {
                    return; // still waiting for it
                }
            }
        }
        if (inflight == 0 && !held && !c_.wake_pending &&
            (c_.held_in_busy || c_.gap_phase == gap_stage::measuring ||
             c_.gap_phase == gap_stage::trying)) {
            // Dry with the producer free to post (within its room, not awaited after a wake):
            // it paused on its own after a busy period in which the limit held it back (or, while
            // the gap term is measured or tried, after any busy period). Time the consumer's idle until
            // the next completion (gap_sample()).
            c_.gap_after_held = c_.held_in_busy;
            c_.held_in_busy = false;
            c_.gap_pending = true;
            c_.gap_time = t;
            c_.gap_done = done;
            c_.gap_limit = c_.limit.load(std::memory_order_relaxed);
        }
        if (inflight == 0 && held) {
            // Dry while the producer was held back: room comes only with completions, and this
            // batch of them took everything in flight (per poll, or coalesced). The lead must
            // cover a whole such batch: as a sample, twice the units it reported.
            lead_sample(t - c_.published_time, 2 * (done - c_.published_at));
            count(c_.starvations);
        }

        if (t - c_.window_start >= c_.window) roll_window(done, t);
        if (c_.inputs_changed) recompute(); // otherwise it would give the same answer

        const std::uint32_t lim = c_.limit.load(std::memory_order_relaxed);
        // Room is given in steps: a held producer gets it once `step` units fit (inflight <=
        // limit + 1 - step), a running one every `refresh` completions; at once when the ring ran
        // dry or the limit went down, and, for a running producer, when the limit grew since
        // room was last given (it would otherwise meet the old room and be held early, with no
        // more than limit + 1 - refresh in flight, unseen until the next look; a held one
        // waits for its step as always, with the new limit).
        const bool due = held ? std::int64_t{inflight} <= std::int64_t{lim} + 1 - c_.step
                              : done - c_.published_at >= c_.refresh;
        if (due || inflight == 0 || static_cast<std::int32_t>(done + lim - c_.adj_pub) < 0 ||
            (!held && static_cast<std::int32_t>(c_.published_at + lim - c_.adj_pub) > 0)) {
            publish_at(done, lim, t);
            // Room for a held producer: it is woken now (the adapters wake it when available()
            // turns >= 0), so time how long until its next post shows.
            if (held && !c_.wake_pending && static_cast<std::int32_t>(c_.adj_pub - q) >= 0) {
                count(c_.stops);
                c_.window_stop_steps += c_.step;
                c_.wake_pending = true;
                c_.wake_starved = false;
                if (const std::uint64_t r = planning_rate(); inflight == 0 && r != 0) {
                    // Room given with the ring empty: the consumer has at most the units it
                    // reported now to work off (a consumer that takes, then works), then idles
                    // until the post. Dry from then on, as if a look had seen it (unknown rate:
                    // left to the looks, so a first rate can still come from such cycles).
                    c_.wake_starved = true;
                    c_.wake_dry_time = deadline_after(
                        t, (std::uint64_t{c_.batch_run} << drain_meter::rate_shift) / r);
                }
                c_.wake_time = t;
                c_.wake_checked = t;
                c_.wake_done = done;
                c_.wake_checked_done = done;
                c_.wake_queued = q;
            }
        }
        // When to look again (on_completed's fast path): a producer still held back is due
        // room once inflight <= limit + 1 - step, i.e. at completed count q - limit - 1 + step;
        // until then only a change of the limit's inputs (which forces a look) can give it room
        // sooner. Otherwise every refresh completions, as publish() set.
        if (static_cast<std::int32_t>(q - c_.adj_pub) > 0) c_.settle_at = q - lim - 1 + c_.step;
        c_.settle_by = earlier(deadline_after(t, c_.budget), c_.window_end);
        if (inflight != 0) {
            if (!c_.probe.armed() && c_.probe.arm(q, done, t)) {
                c_.probe_cut = false;
                c_.probe_away = c_.away_ticks;
                c_.probe_in_hand = c_.takes ? c_.batch_run : 0;
            }
            return;
        }
        // An empty ring has no backlog to time (completions that always empty it: per poll, a
        // consumer that takes everything at once, or one faster than the producer). Between two
        // such moments the consumer worked off, with takes (on_taken(): reported before the
        // work), the take in hand at the first and those reported in between, not the one in
        // hand now; otherwise either the units it completed up to the first (take all, then
        // work) or those it reports at the second (work, then report), the larger of the two. Over
        // the time between, that is a rate sample. (Counting all units completed before the
        // first moment as in hand there read a take-all consumer at up to 10x its rate when
        // several takes came between two empty moments: docs/software_limit.md, "An empty
        // moment's units".) Only when the producer was held back
        // at the first moment (or just given room): it then had work ready, and the time between
        // is the consumer's, not a pause of the producer's.
        // Not across a wait for a woken producer that ran the ring dry: the time between then
        // holds the consumer's idle while the producer woke, and would read as a slow consumer
        // (a cap too low, a smaller limit, more stops: a spiral down to a few units).
        const bool held_now = held || c_.wake_pending;
        const std::uint32_t units = done - c_.empty_done;
        const bool idled = c_.idled_since_empty;
        c_.idled_since_empty = false;
        c_.empty_done = done;
        // Neither this moment nor the last one had the producer held back: no sample to close,
        // and of this moment a later one needs only the completed count.
        if (!held_now && !c_.empty_held) return;
        const std::uint32_t in_hand = c_.batch_run;
        // The units are a 32-bit difference: between two empty moments 2^32 units or more may
        // have drained (a backlog that never ran dry for minutes), and the count wrapped. A
        // sample whose time holds 2^31 units or more at the planning rate is dropped.
        const std::uint64_t since = t - c_.empty_time;
        const bool wrapped = units_at(planning_rate(), since, false) >= (std::uint64_t{1} << 31);
        if (c_.empty_valid && c_.empty_held && units != 0 && !idled && !wrapped) {
            const std::uint32_t worked =
                c_.takes ? (units > in_hand ? units - in_hand : 0) + c_.empty_units
                         : (units > c_.empty_units ? units : c_.empty_units);
            if (worked != 0) rate_sample(worked, less_away(since, c_.empty_away));
        }
        c_.empty_valid = true;
        c_.empty_held = held_now;
        c_.empty_units = c_.takes ? in_hand : units;
        c_.empty_time = t;
        c_.empty_away = c_.away_ticks;
    }

    // The first completion after the ring ran dry behind a producer that paused on its own
    // (after a busy period in which the limit held it back): the consumer idled for the time
    // since, less the service of what it now reports. If the producer's pause begins when it has
    // posted its work (a thread that sends a burst, then sleeps or does other work), a limit
    // larger by what drains in that idle time would have let it finish that much earlier with
    // that much more queued, and the consumer would not have idled: a gap sample asks for the
    // limit then plus those units (capped by the budget in recompute()).
    // If instead its pauses end on a schedule of their own (arrivals paced by a timer or a
    // network), a larger limit only moves the wait from the producer into the ring. The two are
    // told apart by trying (gap_phase). While measuring or trying, a pause after any busy
    // period is timed, not only after one in which the limit held the producer back.
    //  - measuring: for one window the samples are collected, not applied: the largest idle, the
    //    largest limit asked for, and the units and ticks of each pause-to-pause cycle;
    //  - trying: for two windows the gap term asks for that limit (in force until judged).
    //    The first pause is skipped (its busy period ran at the old limit); the others count
    //    once the limit has grown by at least half of what was asked (or as far as the cap now
    //    allows). Kept if the largest idle among them is shorter than the largest measured by at
    //    least a quarter of what the growth drains (a quarter, not all: the ring's own size may
    //    bound the growth that takes effect, and idles spread; the largest against the largest,
    //    so short idles of another kind, a producer slow to get going after a wake-up, do not
    //    stand for the pause the samples were about), or if the cycles moved gap_gain more units
    //    per tick. Failed otherwise, or if pauses came only at a limit that had not grown. Void
    //    (measured again) if the drain rate moved by more than a quarter, or by enough to make
    //    the idle shrink alone; a second void in a row fails. No counted pause at all extends the
    //    trial, for at most gap_trust windows, then keeps it;
    //  - trusted: the gap term follows the samples at once (a dry moment at a limit it raised
    //    renews it: that limit is not too large), for gap_trust windows (about a second at the
    //    default window); then it is measured and tried again, in case the producer changed.
    // A failed trial turns gap samples off for a while (8 windows, doubling at each failed trial
    // up to gap_trust: the back-off of a retransmission timer, RFC 6298 5.5), so an open-loop
    // producer costs two windows at a larger limit per back-off.
    void gap_sample(std::uint32_t done, std::uint64_t t) noexcept {
        c_.gap_pending = false;
        const std::uint64_t rate = planning_rate();
        if (rate == 0 || static_cast<std::int64_t>(t - c_.gap_time) <= 0) {
            if (c_.gap_after_held) c_.held_in_busy = true; // no idle seen (below)
            return;
        }
        const double per_tick = per_tick_of(rate);
        const double service = static_cast<double>(done - c_.gap_done) / per_tick;
        const double since = static_cast<double>(t - c_.gap_time);
        const double idle = since > service ? since - service : 0.0;
        const std::uint32_t lim = c_.gap_limit;
        const double deficit = std::floor(idle * per_tick);
        // A dry moment the consumer did not idle through (the producer's next item came within
        // the service of what it had) did not end the busy period: a later pause in it still
        // follows one in which the limit held the producer back.
        if (deficit < 1.0 && c_.gap_after_held) c_.held_in_busy = true;
        const double want = static_cast<double>(lim) + deficit;
        const std::uint32_t u = want >= 4.0e9 ? ~std::uint32_t{0} : static_cast<std::uint32_t>(want);
        // The cycle since the last gap ended: a busy period and its gap, and the units it moved.
        const bool cycle = c_.gap_last_valid && static_cast<std::int64_t>(t - c_.gap_last_time) > 0;
        const double cycle_ticks = static_cast<double>(t - c_.gap_last_time);
        const double cycle_units = static_cast<double>(done - c_.gap_last_done);
        c_.gap_last_valid = true;
        c_.gap_last_time = t;
        c_.gap_last_done = done;
        if (c_.gap_phase == gap_stage::measuring || c_.gap_phase == gap_stage::trying) {
            // The consumer's speed over the measuring and trying windows, and the largest cycle:
            // what a change of speed alone could do to an idle (gap_judge()).
            if (per_tick < c_.gap_rate_min) c_.gap_rate_min = per_tick;
            if (per_tick > c_.gap_rate_max) c_.gap_rate_max = per_tick;
            if (cycle && cycle_units > c_.gap_cycle_units_max)
                c_.gap_cycle_units_max = cycle_units;
        }
        switch (c_.gap_phase) {
        case gap_stage::none:
            if (!reached(t, c_.gap_off_until) || deficit < 1.0) return;
            set_gap_stage(gap_stage::measuring);
            c_.gap_ref_idle = idle;
            c_.gap_ref_need = u;
            c_.gap_ref_limit = lim;
            c_.gap_rate_min = c_.gap_rate_max = per_tick;
            c_.gap_cycle_units_max = 0.0;
            c_.gap_ref_units = c_.gap_ref_ticks = 0.0;
            c_.gap_phase_end = deadline_after(t, c_.window);
            return;
        case gap_stage::measuring:
            if (idle > c_.gap_ref_idle) c_.gap_ref_idle = idle;
            if (u > c_.gap_ref_need) c_.gap_ref_need = u;
            if (cycle) {
                c_.gap_ref_units += cycle_units;
                c_.gap_ref_ticks += cycle_ticks;
            }
            if (reached(t, c_.gap_phase_end)) gap_try(t);
            return;
        case gap_stage::trying: {
            // A pause counts once the limit has grown by half of what was asked, or as far as
            // the cap now allows (the drain rate may have fallen since).
            const std::uint32_t cap = c_.cap.load(std::memory_order_relaxed);
            const std::uint32_t bar = c_.gap_trial_limit < cap ? c_.gap_trial_limit : cap;
            if (!c_.gap_trial_begun) {
                // The first pause of a trial ends a busy period that ran mostly at the old
                // limit: it says nothing about the new one.
                c_.gap_trial_begun = true;
            } else if (lim >= bar && lim > c_.gap_ref_limit) {
                if (idle > c_.gap_trial_max) c_.gap_trial_max = idle;
                c_.gap_trial_growth += static_cast<double>(lim - c_.gap_ref_limit);
                if (c_.gap_trial_n++ != 0 && cycle) { // a whole cycle at the grown limit
                    c_.gap_trial_units += cycle_units;
                    c_.gap_trial_ticks += cycle_ticks;
                }
            } else {
                ++c_.gap_trial_low;
            }
            gap_ask(c_.gap_ref_need, true); // the ask on trial stays in force until judged
            gap_ask(u, deficit >= 1.0);
            if (reached(t, c_.gap_phase_end)) gap_judge(t);
            return;
        }
        case gap_stage::trusted:
            gap_ask(u, deficit >= 1.0 || (c_.gap_cur | c_.gap_prev) != 0);
            return;
        }
    }
    void set_gap_stage(gap_stage g) noexcept {
        c_.gap_phase = g;
        c_.gap_stage_seen.store(g, std::memory_order_relaxed);
    }
    // A gap sample asks for limit u (ok: it may).
    void gap_ask(std::uint32_t u, bool ok) noexcept {
        if (!ok || u <= c_.gap_cur) return;
        c_.gap_cur = u;
        c_.inputs_changed = true;
    }
    // The measuring window is over: ask for the largest limit measured, if the cap allows growth.
    void gap_try(std::uint64_t t) noexcept {
        const std::uint32_t cap = c_.cap.load(std::memory_order_relaxed);
        const std::uint32_t reach = c_.gap_ref_need < cap ? c_.gap_ref_need : cap;
        if (reach <= c_.gap_ref_limit) { // no room to grow: nothing to try
            set_gap_stage(gap_stage::none);
            return;
        }
        set_gap_stage(gap_stage::trying);
        c_.gap_trial_limit = c_.gap_ref_limit + (reach - c_.gap_ref_limit + 1) / 2;
        c_.gap_trial_max = 0.0;
        c_.gap_trial_growth = 0.0;
        c_.gap_trial_units = c_.gap_trial_ticks = 0.0;
        c_.gap_trial_n = c_.gap_trial_low = 0;
        c_.gap_trial_begun = false;
        // One window for the limit to grow and a pause to come, one to judge by.
        c_.gap_phase_end = deadline_after(t, sat_mul(c_.window, 2));
        c_.gap_trial_until = deadline_after(t, sat_mul(c_.window, gap_trust));
        gap_ask(c_.gap_ref_need, true);
    }
    // The trying windows are over: trusted if the idle shrank with the limit, or the cycles
    // quickened; failed if not, or if pauses came only at a limit that had not grown enough;
    // void (measured again) when the consumer's speed changed enough to explain the idles
    // alone. No pause at all at the grown limit is no verdict yet: the trial goes on, until
    // gap_trust windows after it began (an idle that vanished, or a burst that outlasts them:
    // kept either way, and tried again when the trust ends).
    void gap_judge(std::uint64_t t) noexcept {
        if (c_.gap_trial_n == 0 && c_.gap_trial_low == 0 && !reached(t, c_.gap_trial_until)) {
            c_.gap_phase_end = deadline_after(t, sat_mul(c_.window, 2));
            return;
        }
        const double r_min = c_.gap_rate_min, r_max = c_.gap_rate_max;
        bool kept = false, voided = false;
        if (c_.gap_trial_n == 0) {
            kept = c_.gap_trial_low == 0;
        } else {
            double expected = c_.gap_ref_idle;
            const double grown = c_.gap_trial_growth / static_cast<double>(c_.gap_trial_n) / r_max;
            if (grown < expected) expected = grown;
            const double shrink = c_.gap_ref_idle - c_.gap_trial_max;
            // The cycles moved more units per tick than measured (a producer whose own sends
            // got cheaper with fewer stops: a ring smaller than the limit asked may keep the
            // idle). A producer on a schedule keeps its cycles whatever the consumer's speed.
            const bool faster = c_.gap_ref_ticks > 0.0 && c_.gap_trial_ticks > 0.0 &&
                                c_.gap_trial_units * c_.gap_ref_ticks >
                                    gap_gain * c_.gap_ref_units * c_.gap_trial_ticks;
            // Or the idle shrank; but a busy period of the largest cycle's units drains this
            // much faster or slower between the slowest and the fastest rate seen, so an idle
            // can move that much with no help from the limit: such a shrink (or any, when the
            // rate moved by more than a quarter) is no verdict.
            const double by_speed = c_.gap_cycle_units_max * (1.0 / r_min - 1.0 / r_max);
            const bool shrank = shrink >= expected / 4.0;
            voided = !faster && shrank && (r_max > 1.25 * r_min || shrink <= by_speed);
            kept = faster || shrank;
        }
        // A second void in a row counts as a failure: a consumer whose speed keeps changing
        // would otherwise keep a term on trial in force most of the time.
        if (voided && c_.gap_voids++ == 0) {
            set_gap_stage(gap_stage::none);
            c_.gap_cur = c_.gap_prev = 0;
            c_.inputs_changed = true;
            return;
        }
        c_.gap_voids = 0;
        if (kept && !voided) {
            set_gap_stage(gap_stage::trusted);
            c_.gap_phase_end = deadline_after(t, sat_mul(c_.window, gap_trust));
            c_.gap_backoff = 8;
            return;
        }
        set_gap_stage(gap_stage::none);
        c_.gap_off_until = deadline_after(t, sat_mul(c_.window, c_.gap_backoff));
        if (c_.gap_backoff < gap_trust) c_.gap_backoff *= 2;
        c_.gap_cur = c_.gap_prev = 0;
        c_.inputs_changed = true;
    }

    void roll_window(std::uint32_t done, std::uint64_t t) noexcept {
        c_.gap_prev = c_.gap_cur;
        c_.gap_cur = 0;
        // The gap stages move on with time even when no pause comes to move them.
        if (c_.gap_phase == gap_stage::trying) {
            gap_ask(c_.gap_ref_need, true); // in force until judged
            if (reached(t, c_.gap_phase_end)) gap_judge(t);
        } else if (c_.gap_phase == gap_stage::trusted && reached(t, c_.gap_phase_end)) {
            set_gap_stage(gap_stage::none); // trusted long enough: measure and try again
        } else if (c_.gap_phase == gap_stage::measuring && reached(t, c_.gap_phase_end)) {
            gap_try(t);
        }
        const std::uint32_t units = done - c_.window_completed;
        // Calm for the next window if this one had no stop and no look saw more than half the
        // limit in flight (the refresh then follows at once; see set_refresh()).
        c_.calm = c_.window_stop_steps == 0 && units != 0 &&
                  c_.peak_cur <= c_.limit.load(std::memory_order_relaxed) / 2;
        c_.peak_cur = 0;
        set_refresh();
        c_.stop_freq = units == 0 ? 0.0
                                  : static_cast<double>(c_.window_stop_steps) /
                                        static_cast<double>(units);
        c_.stop_freq_seen.store(c_.stop_freq, std::memory_order_relaxed);
        c_.window_stop_steps = 0;
        c_.window_completed = done;
        // The lead carried into the next window: this window's largest sample, or half of what
        // was carried, whichever is larger. A sample taken while the consumer starved is the
        // one that says how long a wake-up takes; the samples after it are taken at the limit
        // it raised, where nothing starves, and are shorter. Forgotten after two windows, it
        // let the limit fall back below a wake-up's worth and the consumer starve again
        // (thread-ring floods at 0.94-0.95x none: docs/software_limit.md, "A lead that
        // halves"); halved, a lead too big still shrinks at the end of every window.
        c_.lead_prev = c_.lead_cur > c_.lead_prev / 2 ? c_.lead_cur : c_.lead_prev / 2;
        c_.lead_cur = 0;
        c_.lead_units_prev = c_.lead_units_cur > c_.lead_units_prev / 2 ? c_.lead_units_cur
                                                                         : c_.lead_units_prev / 2;
        c_.lead_units_cur = 0;
        c_.batch_prev = c_.batch_cur;
        c_.batch_cur = 0;
        c_.rate_min_prev = c_.rate_min_cur;
        c_.rate_min_cur = 0;
        c_.window_start = t;
        c_.window_end = deadline_after(t, c_.window);
        c_.inputs_changed = true;
    }

    // The drain rate to plan with, units per tick << rate_shift (0: unknown): the slowest meter
    // reading (each an average over at least a budget of backlogged time, the first over
    // meter_window()) of this and the last window. Room is given for the costliest items seen
    // lately, so room given while items were cheap does not become a long wait when they turn
    // costly again; averaging over a budget keeps a preempted sample shorter than it (a
    // scheduler pause) from collapsing the limit.
    [[nodiscard]] std::uint64_t planning_rate() const noexcept {
        std::uint64_t r = c_.meter.rate_fp();
        for (const std::uint64_t s : {c_.rate_min_cur, c_.rate_min_prev})
            if (s != 0 && (r == 0 || s < r)) r = s;
        return r;
    }
    // A meter rate (units per tick << rate_shift) as units per tick.
    static double per_tick_of(std::uint64_t rate_fp) noexcept {
        return static_cast<double>(rate_fp) /
               static_cast<double>(std::uint64_t{1} << drain_meter::rate_shift);
    }
    // Units drained in `ticks` at rate_fp: rounded up for what must be covered (the lead),
    // down for what must not be exceeded (the budget), saturating at 2^32.
    static std::uint64_t units_at(std::uint64_t rate_fp, std::uint64_t ticks, bool up) noexcept {
        const double u = static_cast<double>(rate_fp) * static_cast<double>(ticks) /
                         static_cast<double>(std::uint64_t{1} << drain_meter::rate_shift);
        if (u >= 4.0e9) return std::uint64_t{1} << 32;
        return static_cast<std::uint64_t>(up ? std::ceil(u) : std::floor(u));
    }

    // The cap when the consumer's wake calls are timed (on_wake_call()): the drain rate leaves
    // them out, but an item waiting in the ring also waits through the calls made meanwhile.
    // The producer stops stop_freq / S times per unit at a step of S units (stop_freq does not
    // depend on the step), each stop costing a call of W ticks: at a rate of r units per tick
    // the units that drain within the budget B are r B / (1 + r W stop_freq / S). When that is
    // below the step, a wait holds at most one call: r (B - W min(stop_freq, 1)). S is `want`
    // within [1, r B], as recompute() sizes it. Rounded down, saturating at 2^32.
    [[nodiscard]] std::uint64_t units_with_calls(double r, double want) const noexcept {
        const double b = static_cast<double>(c_.budget);
        const double plain = r * b;
        const double step = want < 1.0 ? 1.0 : (want < plain ? std::ceil(want) : plain);
        const double calls = c_.stop_freq < 1.0 ? c_.stop_freq : 1.0; // per step drained
        double fit = plain / (1.0 + r * c_.call_est * calls / step);
        if (step > fit) fit = r * (b - c_.call_est * calls);
        if (fit >= 4.0e9) return std::uint64_t{1} << 32;
        return fit < 0.0 ? 0 : static_cast<std::uint64_t>(std::floor(fit));
    }

    // limit = clamp(lead + step, floor, cap) (see the file comment).
    void recompute() noexcept {
        c_.inputs_changed = false;
        const std::uint64_t rate = planning_rate();
        if (rate == 0) return; // nothing measured yet: keep the starting limit
        const double per_tick = per_tick_of(rate);
        // Units of consumer work one wake-up costs, times the stops per unit (x step).
        const double want =
            c_.stop_freq * wake_cost_in_force() * per_tick / c_.share;
        const std::uint32_t cap = clamp(c_.call_est > 0 ? units_with_calls(per_tick, want)
                                                        : units_at(rate, c_.budget, false),
                                        c_.min_limit, c_.max_limit);
        // The cache floor pays while bouncing a line costs more than the share of an item.
        const bool floor_pays = static_cast<double>(c_.line_cost) * per_tick > c_.share;
        const std::uint32_t floor = clamp(
            floor_pays ? (c_.cache_floor < cap ? c_.cache_floor : cap) : 0U, c_.min_limit,
            c_.max_limit);
        const std::uint64_t lead_ticks = c_.lead_cur > c_.lead_prev ? c_.lead_cur : c_.lead_prev;
        const std::uint32_t lead_counted =
            c_.lead_units_cur > c_.lead_units_prev ? c_.lead_units_cur : c_.lead_units_prev;
        double lead_units = static_cast<double>(lead_ticks) * per_tick;
        if (static_cast<double>(lead_counted) < lead_units)
            lead_units = static_cast<double>(lead_counted);
        // Compared before the cast: a huge wake cost makes `want` exceed any integer.
        std::uint64_t step = cap;
        if (want < 1.0)
            step = 1;
        else if (want < static_cast<double>(cap))
            step = static_cast<std::uint64_t>(std::ceil(want));
        // Room is given when `step` units have completed since the producer stopped at limit + 1,
        // or more when completions come in bigger batches: limit + 1 - max(step, batch) are then
        // in flight, and must outlast the wake-up (the lead) by at most the item in service, so
        // limit = lead + max(step, batch) - 1 (rounded up) suffices.
        const std::uint32_t batch = c_.batch_cur > c_.batch_prev ? c_.batch_cur : c_.batch_prev;
        // Takes (on_taken()) are reported before the work: a take is work in hand while the
        // woken producer gets going, so it covers the lead instead of adding to it, and the
        // limit need only let a take that big happen: max(lead + step - 1, batch).
        const double need =
            c_.takes ? std::max(std::ceil(lead_units + static_cast<double>(step) - 1.0),
                                static_cast<double>(batch))
                     : std::ceil(lead_units + static_cast<double>(step > batch ? step : batch) - 1.0);
        const std::uint64_t want_lim = need >= 4.0e9 ? std::uint64_t{1} << 32
                                       : need < 1.0  ? 1
                                                     : static_cast<std::uint64_t>(need);
        const std::uint32_t gap = c_.gap_cur > c_.gap_prev ? c_.gap_cur : c_.gap_prev;
        c_.gap_seen.store(gap, std::memory_order_relaxed);
        const std::uint32_t lim = clamp(want_lim > gap ? want_lim : gap, floor, cap);
        set_limit(lim, static_cast<std::uint32_t>(step > lim ? lim : step));
        const double lead_shown = std::ceil(lead_units);
        c_.lead.store(lead_shown >= static_cast<double>(c_.max_limit)
                          ? c_.max_limit
                          : static_cast<std::uint32_t>(lead_shown),
                      std::memory_order_relaxed);
        c_.floor.store(floor_pays ? floor : 0, std::memory_order_relaxed);
        c_.cap.store(cap, std::memory_order_relaxed);
    }

    static void count(std::atomic<std::uint64_t>& c) noexcept {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

    // What on_queued()/available() touch, in one line; adj_limit is written by the completion
    // side once per refresh (min(step, limit / 8) completions).
    struct alignas(cache_line_size) producer_line {
        std::atomic<std::uint32_t> queued{0};
        std::atomic<std::uint32_t> adj_limit{0};
        std::atomic<std::uint64_t> rejected{0};
    };
    // The completion side's own state: the per-item fields first.
    struct alignas(cache_line_size) completion_line {
        std::atomic<std::uint32_t> completed{0};
        std::uint32_t queued_seen = 0;  // last reading of producer_line::queued (a lower bound)
        std::uint32_t published_at = 0; // completed count when room was last given
        std::uint32_t step = 1;         // units of room a held producer gets at once
        std::uint32_t refresh = 1;      // completions between two gifts of room to a running
                                        // producer: min(step, limit / 8), at least 1; limit / 8
                                        // while calm (set_refresh())
        bool wake_pending = false;      // room given to a held producer; its next post awaited
        bool gap_pending = false;       // dry behind a producer that paused on its own: its idle
                                        // is timed at the next completion (gap_sample())
        sojourn_probe probe;
        std::uint32_t adj_pub = 0;      // the adj_limit last published
        std::uint32_t wake_queued = 0; // the producer's count when room was given to it
        bool wake_starved = false;     // the ring ran dry while that producer was awaited
        bool probe_cut = false;        // the armed probe already cut the limit
        bool inputs_changed = true;     // an input of recompute() changed since it last ran
        std::uint32_t settle_at = 1;    // completed count at which the slow path is next due
        std::uint64_t settle_by = 0;    // ... and the time (a budget on, or the window's end)
        std::uint64_t batch_published_time = 0; // the gift of room before this time's first
        std::uint32_t batch_done = 0;           // completed count when this time's batch began
        std::uint64_t wake_time = 0, wake_checked = 0, published_time = 0;
        std::uint64_t wake_dry_time = 0; // when the ring ran dry while that producer was awaited
        std::uint64_t last_time = 0; // the latest time on_taken() read: stamps its untimed gifts
        std::uint64_t take_time = 0; // the time of the current take, once read (on_taken())
        bool take_timed = false;     // ... read
        // This window's largest lead sample (ticks), and the lead carried from the last (its
        // largest sample, or half of what it was carried: roll_window()); ... and in units.
        std::uint64_t lead_cur = 0, lead_prev = 0;
        std::uint32_t lead_units_cur = 0, lead_units_prev = 0;
        std::uint32_t wake_done = 0, wake_checked_done = 0; // completed counts at those times
        std::uint64_t resolve_time = ~std::uint64_t{0}; // when the last wake was seen to end
        std::uint32_t batch_cur = 0, batch_prev = 0; // largest completion batch per window
        std::uint32_t batch_run = 0; // units completed at batch_time so far (takes: this take's)
        bool takes = false;              // the last call was on_taken(): before the work
        // Takes: units of the arming take reported up to the arming call (batch_run then);
        // its later parts are in the probe's drained count.
        std::uint32_t probe_in_hand = 0;
        std::uint32_t check_every = 1;      // on_taken(): takes between two readings of the time
        std::uint32_t until_time_check = 1; // ... and takes left until the next one
        std::uint64_t batch_time = 0;                // time of the last completion
        std::uint64_t rate_min_cur = 0, rate_min_prev = 0; // slowest meter reading per window
        bool empty_valid = false;                   // an empty-ring moment is remembered
        bool empty_held = false;                    // ... the producer was held back then
        std::uint32_t empty_done = 0;               // ... its completed count
        std::uint32_t empty_units = 0;              // ... take in hand (takes), or units before
        std::uint64_t empty_time = 0;               // ... and its time
        bool idled_since_empty = false; // a wait for a woken producer ran dry since that moment
        std::uint32_t window_completed = 0;
        std::uint64_t window_start = 0, window_stop_steps = 0;
        std::uint64_t window_end = 0; // window_start + window (deadline_after())
        double stop_freq = 0;
        bool calm = false;          // the producer kept well below the limit (set_refresh())
        std::uint32_t peak_cur = 0; // most seen in flight at a look this window
        drain_meter meter;
        // Configuration, in ticks.
        std::uint32_t min_limit = 1, max_limit = 1, cache_floor = 0;
        std::uint64_t budget = 1, wake_cost = 0, line_cost = 0, window = 1;
        double share = 0.1;
        bool learn_wake = false;
        bool weigh_calls = true;
        bool held_in_busy = false;   // the limit held the producer back since the ring last ran dry
        bool gap_after_held = false; // the pause being timed followed such a busy period
        std::uint64_t gap_time = 0;  // ... since this time
        std::uint32_t gap_done = 0;  // ... and completed count
        std::uint32_t gap_limit = 0; // ... and the limit then
        std::uint32_t gap_cur = 0, gap_prev = 0; // largest gap sample (units) per window
        gap_stage gap_phase = gap_stage::none; // see gap_sample()
        std::uint64_t gap_phase_end = 0;       // when the measuring or trying window ends
        double gap_ref_idle = 0;               // measured: the largest idle (ticks)
        std::uint32_t gap_ref_need = 0;        // ... the largest limit asked for
        std::uint32_t gap_ref_limit = 0;       // ... the limit at the first sample
        double gap_rate_min = 0, gap_rate_max = 0; // planning rate range, measuring and trying
        double gap_cycle_units_max = 0;        // ... and the largest cycle's units
        bool gap_trial_begun = false;          // the trial's first pause (skipped) was seen
        std::uint64_t gap_trial_until = 0;     // a trial with no pause at all ends by then
        std::uint32_t gap_voids = 0;           // voided trials in a row
        std::uint32_t gap_trial_limit = 0;     // tried: idles count from this limit on
        double gap_trial_max = 0;              // ... the largest of them
        double gap_trial_growth = 0;           // ... the sum of the limit's growth at them
        std::uint32_t gap_trial_n = 0;         // ... and their count
        std::uint32_t gap_trial_low = 0;       // pauses at a limit that had not grown enough
        bool gap_last_valid = false;           // a gap ended before: a cycle runs since
        std::uint64_t gap_last_time = 0;       // ... its end
        std::uint32_t gap_last_done = 0;       // ... and completed count then
        double gap_ref_units = 0, gap_ref_ticks = 0;     // measured: whole cycles' units, ticks
        double gap_trial_units = 0, gap_trial_ticks = 0; // tried: the same at the grown limit
        std::uint64_t gap_off_until = 0; // gaps ignored until then (refuted: open loop)
        std::uint64_t gap_backoff = 8;   // windows to ignore them after the next refutation
        double wake_est = 0; // learned stop -> wake cost (ticks), from the prior; may sit below it
        double call_est = 0; // smoothed wake call (ticks), on_wake_call()
        // The consumer's time away from its work as told so far (ticks, saturating): wake
        // calls (on_wake_call()) and waits for work (on_consumer_idle()).
        std::uint64_t away_ticks = 0;
        std::uint64_t probe_away = 0; // ... when the probe was armed
        std::uint64_t empty_away = 0; // ... at the remembered empty-ring moment
        // Read by stats() from any thread.
        std::atomic<std::uint32_t> limit{0}, lead{0}, step_seen{1}, floor{0}, cap{0};
        std::atomic<std::uint64_t> rate_fp{0}, sojourn_last{0}, samples{0};
        std::atomic<double> stop_freq_seen{0};
        std::atomic<std::uint64_t> stops{0}, starvations{0}, budget_cuts{0};
        std::atomic<double> wake_est_seen{0};
        std::atomic<std::uint32_t> gap_seen{0};
        std::atomic<gap_stage> gap_stage_seen{gap_stage::none};
    };

    producer_line p_;
    completion_line c_;
};

static_assert(limit_policy<software_limit<>>);
static_assert(accepts_lazy_time<software_limit<>>);
static_assert(accepts_take_parts<software_limit<>>);
static_assert(accepts_wake_call<software_limit<>>);
static_assert(limit_policy<software_limit<manual_clock<>>>);

} // namespace v0
} // namespace qlimits
