// Test aid: a small deterministic producer -> ring -> consumer loop that drives a limit policy
// the way tx_gate and channel do (the producer stops when available() < 0 and is woken, after a
// latency, by the completion that makes it >= 0), with the consumer reporting completions per
// item, per poll, or coalesced over a time window. Or the consumer takes up to a poll's worth at
// once and then works them off (take_all, as channel::receive_batch), reporting what it took
// per item or per batch, with the time read at any grain. Used by the software_limit unit and
// property tests to check behaviour, never timings.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"

namespace test {

enum class report : std::uint8_t { per_item, per_poll, coalesced };

struct workload {
    std::uint64_t producer_ns = 400;   ///< per item while running
    std::uint64_t consumer_ns = 450;   ///< per item
    std::uint64_t wake_ns = 1000;      ///< stopped producer: wake-up latency
    std::uint64_t consumer_wake_ns = 2000;
    std::uint32_t poll_budget = 64;
    std::uint32_t ring = 256;
    std::uint64_t coalesce_ns = 100'000; ///< report at least this often when coalesced
    report mode = report::per_item;
    std::uint64_t duration_ns = 20'000'000;
    std::uint64_t burst_every_ns = 0;  ///< 0: flood; else bursts start on this schedule (open loop)
    std::uint64_t burst_gap_ns = 0;    ///< else: the producer pauses this long after each burst's
                                       ///< last post (closed loop: a held burst ends later)
    std::uint32_t burst_items = 64;
    bool take_all = false;             ///< take up to poll_budget at once, then work them off
    std::uint64_t clock_grain_ns = 1;  ///< the policy sees now rounded down to this
    bool lazy_time = false;            ///< report through on_taken() (the time read on demand)
    bool timed_takes = false;          ///< report through on_taken() with the time given
    /// take_all, per item, on_taken(): report the items after a take's first as parts of that
    /// take (same_take, as channel's receive_batch does), or each as a take of its own.
    bool parts_as_take = true;
    std::uint64_t pop_ns = 0;          ///< take_all: time per item taken (the pops of a take)
    /// Not take_all: the consumer goes to sleep only if the ring is still empty when it has
    /// worked off its last item (as NAPI does: an item posted meanwhile is taken without a
    /// wake-up), not as it takes that item.
    bool naps_after_work = false;
    /// The consumer's own time for each wake-up it makes of a stopped producer (the system
    /// call): it works on after it. Told to a policy that takes it (on_wake_call()) when
    /// tell_wake_calls, as channel does.
    std::uint64_t wake_call_ns = 0;
    bool tell_wake_calls = true;
    /// Tell a policy that takes it (on_consumer_idle()) how long the consumer slept on an empty
    /// ring (from the end of its work to the end of its wake-up), before the take that follows,
    /// as channel does.
    bool tell_consumer_idle = false;
};

struct outcome {
    std::uint64_t taken = 0;
    double limit_mean = 0;        ///< time-weighted over the second half
    std::uint32_t limit_min = ~0U, limit_max = 0;
    std::uint64_t sojourn_max_ns = 0;
    std::uint64_t stops = 0;
    std::uint64_t reports = 0;     ///< completion calls
    std::uint64_t clock_reads = 0; ///< times the policy asked for the time (lazy_time)
    std::uint64_t takes = 0;       ///< take_all: takes (each reported at once or in parts)
    /// Second half: stops that came with fewer than limit + 1 - max(1, limit / 8) in flight
    /// (the producer held back by room given long ago, not by the limit).
    std::uint64_t early_stops = 0;
    /// The run ended early with the producer held by the policy and no completion left to
    /// give it room (nothing can happen any more): a deadlock of the policy.
    bool held_for_good = false;
};

/// Run `w` through policy `p` (any limit_policy on a nanosecond manual clock); `observe` is
/// called after every completion with (policy, now).
template <class Policy, class Observe>
outcome drive(Policy& p, const workload& w, Observe&& observe) {
    using tp = typename Policy::time_point;
    using dur = typename tp::duration;
    const auto at = [&w](std::uint64_t ns) {
        ns -= ns % (w.clock_grain_ns == 0 ? 1 : w.clock_grain_ns);
        return tp{std::chrono::duration_cast<dur>(std::chrono::nanoseconds{ns})};
    };
    outcome o;
    std::deque<std::uint64_t> ring; // post times
    std::uint64_t t = 0, next_post = 0, consumer_free = 0, wake_at = 0, burst_start = 0;
    std::uint64_t burst_left = w.burst_items;
    bool stopped = false, woken = false, consumer_asleep = true;
    std::uint32_t polled = 0, pending = 0;
    std::uint64_t pending_since = 0, limit_t = w.duration_ns / 2;
    std::uint64_t calls_ns = 0; // wake calls made by the completions of the current step
    std::uint64_t slept_ns = 0; // the consumer's last sleep, told before its next take
    double limit_area = 0;
    std::uint32_t last_limit = p.limit();
    // Wake a stopped producer that now has room: its wake-up latency starts here, and the
    // consumer's call (wake_call_ns) is told to the policy.
    const auto wake_if_due = [&] {
        if (stopped && !woken && p.available() >= 0) {
            woken = true;
            wake_at = t + w.wake_call_ns + w.wake_ns;
            calls_ns += w.wake_call_ns;
            if constexpr (qlimits::accepts_wake_call<Policy>)
                if (w.wake_call_ns != 0 && w.tell_wake_calls)
                    p.on_wake_call(std::chrono::duration_cast<dur>(
                        std::chrono::nanoseconds{w.wake_call_ns}));
        }
    };
    // Set while a take_all take is reported in parts: as channel::receive_batch, the consumer
    // decides about waking the producer once the whole take is reported, not between parts (a
    // call told between parts would fall inside a rate sample that ends at a later part, while
    // its time comes after the take).
    bool in_take = false;
    // same_take: a later part of the previous report's take.
    const auto complete = [&](std::uint32_t n, bool same_take = false) {
        if (n == 0) return;
        ++o.reports;
        if constexpr (qlimits::accepts_lazy_time<Policy>) {
            const auto now = [&]() noexcept {
                ++o.clock_reads;
                return at(t);
            };
            bool timed_take = false;
            if constexpr (requires { p.on_taken(n, at(t), same_take); }) {
                if (w.timed_takes) {
                    p.on_taken(n, at(t), same_take);
                    timed_take = true;
                }
            }
            if (!timed_take && w.lazy_time) {
                if constexpr (qlimits::accepts_take_parts<Policy>)
                    p.on_taken(n, now, same_take);
                else
                    p.on_taken(n, now);
            } else if (!timed_take) {
                p.on_completed(n, at(t));
            }
        } else {
            p.on_completed(n, at(t));
        }
        observe(p, t);
        if (t >= w.duration_ns / 2) {
            limit_area += static_cast<double>(last_limit) * static_cast<double>(t - limit_t);
            limit_t = t;
        }
        last_limit = p.limit();
        if (t >= w.duration_ns / 2) {
            o.limit_min = std::min(o.limit_min, last_limit);
            o.limit_max = std::max(o.limit_max, last_limit);
        }
        if (!in_take) wake_if_due();
    };
    while (t < w.duration_ns) {
        // The next event: a post, a take, a wake-up, a coalescing deadline.
        std::uint64_t next = ~std::uint64_t{0};
        int what = -1;
        const bool can_post = !stopped && ring.size() < w.ring;
        if (can_post && next_post < next) next = next_post, what = 0;
        if (!ring.empty() && !consumer_asleep && consumer_free < next) next = consumer_free, what = 1;
        if (stopped && woken && wake_at < next) next = wake_at, what = 2;
        if (w.mode == report::coalesced && pending > 0 && pending_since + w.coalesce_ns < next)
            next = pending_since + w.coalesce_ns, what = 3;
        if (what < 0) { // nothing can happen: the consumer sleeps and the producer waits
            if (ring.empty() && pending > 0) { // a coalescer must not sit on the last units
                complete(pending);
                pending = 0;
                continue;
            }
            o.held_for_good = stopped && !woken;
            break;
        }
        t = std::max(t, next);
        if constexpr (qlimits::accepts_consumer_idle<Policy>) {
            if (what == 1 && slept_ns != 0 && w.tell_consumer_idle)
                p.on_consumer_idle(
                    std::chrono::duration_cast<dur>(std::chrono::nanoseconds{slept_ns}));
        }
        if (what == 1) slept_ns = 0;
        if (what == 0) {
            // A take-all consumer that found the ring empty after its work went to sleep.
            // So did one that naps after its work (naps_after_work).
            const bool asleep = consumer_asleep || ((w.take_all || w.naps_after_work) &&
                                                    ring.empty() && t > consumer_free);
            ring.push_back(t);
            p.on_queued(1);
            if (asleep) {
                consumer_asleep = false;
                // It slept from the end of its work until it is back.
                const std::uint64_t back = t + w.consumer_wake_ns;
                slept_ns = back > consumer_free ? back - consumer_free : 0;
                consumer_free = back;
                polled = 0;
            }
            if (p.available() < 0) {
                stopped = true;
                woken = false;
                ++o.stops;
                const std::uint64_t lim = p.limit();
                if (t >= w.duration_ns / 2 && p.inflight() + std::max<std::uint64_t>(1, lim / 8) <
                                                  lim + 1)
                    ++o.early_stops;
            }
            next_post = t + w.producer_ns;
            if (w.burst_every_ns != 0 && --burst_left == 0) {
                burst_start += w.burst_every_ns;
                next_post = std::max(next_post, burst_start);
                burst_left = w.burst_items;
            } else if (w.burst_every_ns == 0 && w.burst_gap_ns != 0 && --burst_left == 0) {
                next_post = t + w.burst_gap_ns;
                burst_left = w.burst_items;
            }
        } else if (what == 1 && w.take_all) {
            const auto n = static_cast<std::uint32_t>(
                std::min<std::size_t>(ring.size(), w.poll_budget));
            ++o.takes;
            in_take = true;
            for (std::uint32_t i = 0; i < n; ++i) {
                if (i != 0) t += w.pop_ns;
                o.sojourn_max_ns = std::max(o.sojourn_max_ns, t - ring.front());
                ring.pop_front();
                if (w.mode == report::per_item) complete(1, i != 0 && w.parts_as_take);
            }
            o.taken += n;
            if (w.mode != report::per_item) complete(n);
            in_take = false;
            wake_if_due();
            consumer_free = t + n * w.consumer_ns + calls_ns;
            calls_ns = 0;
            // It looks again at consumer_free; an empty ring then puts it to sleep (below).
        } else if (what == 1) {
            o.sojourn_max_ns = std::max(o.sojourn_max_ns, t - ring.front());
            ring.pop_front();
            ++o.taken;
            ++polled;
            if (w.mode == report::per_item) {
                complete(1);
            } else {
                if (pending == 0) pending_since = t;
                ++pending;
                if (w.mode == report::coalesced && pending > p.limit()) {
                    complete(pending);
                    pending = 0;
                }
            }
            consumer_free = t + w.consumer_ns;
            if (ring.empty() || polled == w.poll_budget) { // the poll ends
                if (w.mode == report::per_poll) {
                    complete(pending);
                    pending = 0;
                }
            }
            consumer_free += calls_ns;
            calls_ns = 0;
            if (ring.empty() || polled == w.poll_budget) {
                polled = 0;
                if (ring.empty() && !w.naps_after_work) consumer_asleep = true;
            }
        } else if (what == 2) {
            woken = false;
            if (p.available() >= 0) stopped = false;
            next_post = std::max(next_post, t);
        } else {
            complete(pending);
            pending = 0;
            consumer_free = std::max(consumer_free, t) + calls_ns;
            calls_ns = 0;
        }
    }
    if (t > limit_t)
        limit_area += static_cast<double>(last_limit) * static_cast<double>(t - limit_t);
    const double span = static_cast<double>(std::max<std::uint64_t>(1, t - w.duration_ns / 2));
    o.limit_mean = limit_area / span;
    return o;
}

template <class Policy>
outcome drive(Policy& p, const workload& w) {
    return drive(p, w, [](const Policy&, std::uint64_t) {});
}

} // namespace test
