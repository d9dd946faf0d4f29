// SPDX-License-Identifier: MIT
// qlimits/adapters/channel.hpp: a limit policy around a software ring between two threads, where
// taking an item out of the ring is its completion (veth's ptr_ring, a tun queue, a thread queue).
//
// Model: one producer thread sends items into the user's ring; one consumer thread receives them.
// Each item counts for units_of<Ring>(item) units (1 by default: packet-counted). Before an item
// enters the ring the channel asks the policy: with available() < 0 the producer is stopped, as
// BQL stops a netdev queue; a completion that brings available() back to >= 0 wakes it. The
// consumer reports what it took as a completion, per item or once per batch (its choice), and
// sleeps when the ring is empty; the producer wakes it. Waiting uses std::atomic wait/notify
// (a futex on Linux), so a blocked side costs no CPU.
//
// API (all noexcept; nothing allocates; the ring is the user's and must outlive the channel):
//   channel<Ring, Policy[, Clock]> ch{ring, policy_config[, consumer_wait::sleep|spin]};
//   producer:  ch.try_send(item[, more])  -> send_status::{ok, ring_full, over_limit, too_large,
//                                             closed}; item untouched unless ok
//              ch.send(item[, deadline])   -> waits while full or over the limit; ok, too_large,
//                                             closed, timeout (deadline given)
//              ch.flush()                  -> wake the consumer for items sent with more = true
//   consumer:  ch.try_receive(out) / ch.receive(out[, deadline])            -> bool
//              ch.try_receive_batch(span, completion::per_item|per_batch)   -> count
//              ch.receive_batch(span, mode[, deadline])                     -> count (>= 1 unless
//                                                                          closed or timed out)
//   any thread: ch.close(), ch.closed(), ch.stats(), ch.stopped(), ch.limit(), ch.inflight()
//
// The handshakes. Each sleep/wake decision is a store-buffering (Dekker) pattern, closed with a
// seq_cst fence on both sides, as in tx_gate:
//   producer stops (limit):   store state=stopped   -> F1 -> re-read available()
//   producer waits (full):    store state=waiting   -> F1 -> retry the push
//   consumer finds it empty:  completions and pops  -> F3 -> read producer state, wake if due
//   consumer sleeps (empty):  store asleep          -> F4 -> retry the pop (F3 again)
//   producer after a push:    push and count        -> F2 -> read asleep, wake the consumer
//   close():                  store closed          -> F5 -> read both states, wake both
// After each successful take the consumer also reads the producer's state without a fence and
// wakes it early if due; the fenced decision F3 is taken when the ring runs empty, which it
// must, since a stopped producer adds nothing. The producer has no such point of its own: it
// may go idle right after a send, so F2 runs on every send, unless the caller says more items
// follow (more = true; the kernel's xmit_more) and flushes at the end of the burst.
// Costs: F2 per send (or per burst with more = true), no fence per receive while the ring is
// not empty; F1 and F4 only on the way to sleep. On Linux with membarrier(2), F2/F4 are an
// asymmetric pair: F2 is a compiler barrier and F4 (before the consumer sleeps) a membarrier
// system call that fences the producer's CPU too; elsewhere both are full fences. A consumer
// that never sleeps (built with consumer_wait::spin: its receive() polls) needs no F2 at all.
//
// Accounting order. The producer pushes first and counts (on_queued) second, so a ring that
// refuses a push leaves nothing to undo. The consumer may therefore pop an item whose units are
// not counted yet; it reports only what has been counted and owes the rest to its next call
// (a receive, or the re-check before it sleeps), so a completion never exceeds what is in
// flight and the consumer never waits for the producer. (So a consumer that stops calling
// receive altogether may leave the units of its last item or batch owed; any later call,
// even one that finds the ring empty, reports them.)
//
// Time: the policy's on_completed(n, now) gets Clock::now(), read once per completion (so once
// per batch with completion::per_batch); not read at all for policies with `uses_time = false`.
// Deadlines are std::chrono::steady_clock time points. C++20 has no timed atomic wait, so a
// wait with a deadline polls (yield, then sleeps of at most 50 us) instead of blocking.
//
// Threading: exactly one producer thread (try_send, send, flush) and one consumer thread
// (try_receive*, receive*) at a time; close() and the observers from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>

#include "qlimits/adapters/ring_traits.hpp"
#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/detail/asymmetric_barrier.hpp"

namespace qlimits {
inline namespace v0 {

/// Why try_send()/send() did or did not take an item.
enum class send_status : std::uint8_t {
    ok,         ///< in the ring and counted
    ring_full,  ///< the ring refused it (the policy would have admitted it); nothing counted
    over_limit, ///< the policy is over its limit; the producer is stopped until a completion
    too_large,  ///< the item counts for more than Policy::max_object units; never admissible
    closed,     ///< close() was called
    timeout,    ///< send(item, deadline): the deadline passed first
};

/// How the consumer waits on an empty ring. Chosen once, at construction.
enum class consumer_wait : std::uint8_t {
    sleep, ///< receive() sleeps (futex); every send pays one full fence to know whether to wake it
    spin,  ///< receive() polls (yield); sends pay no fence: nobody is ever asleep to be woken
};

/// How the consumer reports what it took.
enum class completion : std::uint8_t {
    per_item,  ///< one on_completed() per item (the policy sees every item)
    per_batch, ///< one on_completed() per receive_batch() call (one clock read)
};

/// What a channel has done, plus the policy's own snapshot.
template <class PolicyStats>
struct channel_stats {
    std::uint64_t stops;            ///< producer stopped by the limit (transitions into stopped)
    std::uint64_t restarts;         ///< stops undone at once by the producer's re-check
    std::uint64_t ring_full;        ///< sends refused because the ring was full
    std::uint64_t producer_waits;   ///< times send() blocked
    std::uint64_t producer_wakeups; ///< times the consumer woke a stopped or waiting producer
    std::uint64_t consumer_sleeps;  ///< times receive() blocked on an empty ring
    std::uint64_t consumer_wakeups; ///< times the producer woke a sleeping consumer
    std::uint32_t limit;            ///< the policy's current limit
    std::uint32_t inflight;         ///< counted and not yet completed
    bool stopped;                   ///< the producer is stopped by the limit right now
    bool waiting_for_room;          ///< the producer waits in send() for a slot in the ring
    bool consumer_asleep;           ///< the consumer is (about to be) asleep right now
    PolicyStats policy;             ///< the policy's stats()
};

namespace detail {
template <class P>
struct policy_clock {
    using type = steady_clock_source;
};
template <class P>
    requires requires { typename P::clock_type; }
struct policy_clock<P> {
    using type = typename P::clock_type;
};

template <class P>
inline constexpr bool policy_uses_time = true;
template <class P>
    requires requires {
        { P::uses_time } -> std::convertible_to<bool>;
    }
inline constexpr bool policy_uses_time<P> = P::uses_time;

// Waiting with a deadline: a few yields, then short sleeps, never past the deadline.
class deadline_backoff {
public:
    void pause(std::chrono::steady_clock::time_point deadline) noexcept {
        if (spins_ < 64) {
            ++spins_;
            std::this_thread::yield();
            return;
        }
        const auto left = deadline - std::chrono::steady_clock::now();
        const auto cap = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::microseconds{50});
        if (left > left.zero())
            std::this_thread::sleep_for(std::min(left, cap));
    }

private:
    unsigned spins_ = 0;
};
} // namespace detail

/// The clock a channel uses by default: the policy's clock_type (steady_clock_source if none).
template <class Policy>
using policy_clock_t = typename detail::policy_clock<Policy>::type;

/// A limit policy around a single-producer single-consumer software ring (see the file comment).
template <channel_ring Ring, limit_policy Policy, clock_source Clock = policy_clock_t<Policy>>
class channel {
    using traits = ring_traits<Ring>;
    static_assert(std::same_as<typename Clock::time_point, typename Policy::time_point>,
                  "channel: Clock must tell time in the policy's time_point type");

public:
    using ring_type = Ring;
    using policy_type = Policy;
    using clock_type = Clock;
    using value_type = ring_value_t<Ring>;
    using config_type = typename Policy::config_type;
    using time_point = typename Policy::time_point;
    using deadline_type = std::chrono::steady_clock::time_point;
    using stats_type = channel_stats<typename Policy::stats_type>;

    /// Wrap `ring` (empty, and outliving the channel); the policy is built in place at
    /// Clock::now().
    /// `wait` says whether the consumer's receive() may sleep (see consumer_wait).
    explicit channel(Ring& ring, const config_type& cfg = config_type{},
                     consumer_wait wait = consumer_wait::sleep) noexcept
        : f_{&ring, wait == consumer_wait::sleep,
             wait == consumer_wait::sleep && detail::asymmetric_barrier::available()},
          policy_(cfg, Clock::now()) {}
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;

    // ---- producer --------------------------------------------------------------------------

    /// Try to send one item without waiting. On anything but ok the item is left untouched.
    /// With more == true the consumer is not woken yet (one fence saved per item): the caller
    /// promises a later send with more == false, or flush(). A refusal flushes by itself.
    [[nodiscard]] send_status try_send(value_type&& item, bool more = false) noexcept {
        const std::uint32_t units = units_of<Ring>(item);
        if (units > Policy::max_object) [[unlikely]]
            return send_status::too_large;
        if (f_.closed.load(std::memory_order_relaxed) != 0) [[unlikely]]
            return send_status::closed;
        if (!admit()) [[unlikely]] {
            flush();
            return send_status::over_limit;
        }
        if (!traits::try_push(*f_.ring, std::move(item))) [[unlikely]] {
            bump(p_.full);
            flush();
            return send_status::ring_full;
        }
        (void)policy_.on_queued(units); // cannot refuse: units <= max_object
        if (!f_.consumer_sleeps) // a spinning consumer needs no doorbell
            return send_status::ok;
        if (more) {
            p_.doorbell_pending = true;
            return send_status::ok;
        }
        doorbell();
        return send_status::ok;
    }
    /// As try_send(value_type&&), sending a copy.
    [[nodiscard]] send_status try_send(const value_type& item, bool more = false) noexcept
        requires std::is_nothrow_copy_constructible_v<value_type>
    {
        value_type copy(item);
        return try_send(std::move(copy), more);
    }

    /// Send one item, waiting while the ring is full or the policy is over its limit.
    /// Returns ok, too_large or closed; on anything but ok the item is left untouched.
    send_status send(value_type&& item) noexcept {
        for (;;) {
            send_status r = try_send(std::move(item));
            if (r == send_status::ring_full) {
                // Announce the wait, then retry once: the consumer may have freed a slot after
                // our push failed and before it could see us waiting.
                f_.producer_state.store(waiting_for_room, std::memory_order_relaxed);
                // F1. Pairs with F3 in on_empty(): either the consumer sees us waiting and wakes
                // us, or this retry sees the slot its pop freed.
                std::atomic_thread_fence(std::memory_order_seq_cst);
                r = try_send(std::move(item));
                if (r == send_status::ring_full) {
                    bump(p_.waits);
                    // Acquire: pairs with the acq_rel exchange that woke us.
                    f_.producer_state.wait(waiting_for_room, std::memory_order_acquire);
                    continue;
                }
                if (r != send_status::over_limit)
                    clear_state(waiting_for_room);
            }
            if (r == send_status::over_limit) {
                // admit() stored `stopped` and ran F1 before its re-check; close() after that is
                // seen here (pairs with F5), before that it sees our state and wakes us.
                if (f_.closed.load(std::memory_order_relaxed) != 0)
                    return send_status::closed;
                bump(p_.waits);
                // Acquire: pairs with the acq_rel exchange in wake_producer() or close().
                f_.producer_state.wait(stopped_by_limit, std::memory_order_acquire);
                continue;
            }
            return r;
        }
    }
    send_status send(const value_type& item) noexcept
        requires std::is_nothrow_copy_constructible_v<value_type>
    {
        value_type copy(item);
        return send(std::move(copy));
    }
    send_status send(const value_type& item, deadline_type deadline) noexcept
        requires std::is_nothrow_copy_constructible_v<value_type>
    {
        value_type copy(item);
        return send(std::move(copy), deadline);
    }
    /// As send(item), giving up at `deadline` (timeout). Polls while it waits.
    send_status send(value_type&& item, deadline_type deadline) noexcept {
        detail::deadline_backoff backoff;
        for (;;) {
            const send_status r = try_send(std::move(item));
            if (r != send_status::ring_full && r != send_status::over_limit)
                return r;
            if (std::chrono::steady_clock::now() >= deadline)
                return send_status::timeout;
            backoff.pause(deadline);
        }
    }

    /// Wake the consumer for items sent with more == true (no-op if none are pending).
    void flush() noexcept {
        if (p_.doorbell_pending)
            doorbell();
    }

    // ---- consumer --------------------------------------------------------------------------

    /// Take one item if there is one, completing it at once (per item).
    [[nodiscard]] bool try_receive(value_type& out) noexcept {
        if (!traits::try_pop(*f_.ring, out)) {
            on_empty();
            return false;
        }
        c_.owed += units_of<Ring>(out);
        (void)settle();
        wake_producer();
        return true;
    }
    /// Take one item, sleeping while the ring is empty. False only when closed and empty.
    bool receive(value_type& out) noexcept {
        return consumer_wait([&]() noexcept { return try_receive(out); });
    }
    /// As receive(out), giving up at `deadline` (false). Polls while it waits.
    bool receive(value_type& out, deadline_type deadline) noexcept {
        return consumer_poll([&]() noexcept { return try_receive(out); }, deadline);
    }

    /// Take up to out.size() items without waiting; complete them per item or once for the
    /// batch. Returns how many were taken.
    [[nodiscard]] std::size_t try_receive_batch(std::span<value_type> out,
                                                completion mode = completion::per_batch) noexcept {
        std::size_t n = 0;
        for (; n < out.size(); ++n) {
            if (!traits::try_pop(*f_.ring, out[n]))
                break;
            const std::uint32_t units = units_of<Ring>(out[n]);
            // A batch is one completion unless its units would leave the range a policy's
            // 32-bit counters can compare (2^31); then it is reported in parts.
            if (mode == completion::per_item || std::uint64_t{c_.owed} + units >= 0x8000'0000U)
                (void)settle();
            c_.owed += units;
        }
        if (n == 0) {
            on_empty();
            return 0;
        }
        (void)settle();
        wake_producer();
        return n;
    }
    /// As try_receive_batch(), sleeping while the ring is empty. Returns at least 1, or 0 when
    /// closed and empty.
    std::size_t receive_batch(std::span<value_type> out,
                              completion mode = completion::per_batch) noexcept {
        std::size_t n = 0;
        consumer_wait([&]() noexcept { return (n = try_receive_batch(out, mode)) != 0; });
        return n;
    }
    /// As receive_batch(out, mode), giving up at `deadline` (0). Polls while it waits.
    std::size_t receive_batch(std::span<value_type> out, completion mode,
                              deadline_type deadline) noexcept {
        std::size_t n = 0;
        consumer_poll([&]() noexcept { return (n = try_receive_batch(out, mode)) != 0; }, deadline);
        return n;
    }

    // ---- either side / any thread ----------------------------------------------------------

    /// Refuse further sends (send_status::closed) and wake both sides. receive() still returns
    /// the items already in the ring, then false. An item whose try_send was already past its
    /// closed check may still land after receive() returned false; try_receive() finds it.
    void close() noexcept {
        f_.closed.store(1, std::memory_order_relaxed);
        // F5. Pairs with F1 and F4: a side that re-checks after its fence sees `closed`, or we
        // see its waiting state here and wake it.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        // acq_rel: pairs with the acquire waits (what happened before close is visible there).
        if (f_.consumer_asleep.exchange(0, std::memory_order_acq_rel) != 0)
            f_.consumer_asleep.notify_all();
        if (f_.producer_state.exchange(running, std::memory_order_acq_rel) != running)
            f_.producer_state.notify_all();
    }
    [[nodiscard]] bool closed() const noexcept {
        return f_.closed.load(std::memory_order_relaxed) != 0;
    }

    /// The producer is stopped by the limit (a completion with room will wake it).
    [[nodiscard]] bool stopped() const noexcept {
        return f_.producer_state.load(std::memory_order_relaxed) == stopped_by_limit;
    }
    [[nodiscard]] std::uint32_t limit() const noexcept { return policy_.limit(); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return policy_.inflight(); }
    [[nodiscard]] const Policy& policy() const noexcept { return policy_; }
    /// Counters are read one by one (relaxed): each is exact, the set is not one snapshot.
    [[nodiscard]] stats_type stats() const noexcept {
        return {p_.stops.load(std::memory_order_relaxed),
                p_.restarts.load(std::memory_order_relaxed),
                p_.full.load(std::memory_order_relaxed),
                p_.waits.load(std::memory_order_relaxed),
                c_.producer_wakeups.load(std::memory_order_relaxed),
                c_.sleeps.load(std::memory_order_relaxed),
                p_.consumer_wakeups.load(std::memory_order_relaxed),
                policy_.limit(),
                policy_.inflight(),
                stopped(),
                f_.producer_state.load(std::memory_order_relaxed) == waiting_for_room,
                f_.consumer_asleep.load(std::memory_order_relaxed) != 0,
                policy_.stats()};
    }

private:
    // Producer states (f_.producer_state): what would let a waiting producer go on.
    static constexpr std::uint32_t running = 0;
    static constexpr std::uint32_t stopped_by_limit = 1; // a completion leaving available() >= 0
    static constexpr std::uint32_t waiting_for_room = 2; // any pop

    static void bump(std::atomic<std::uint64_t>& c) noexcept {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

    // The producer's admission test, with the BQL stop and re-check.
    bool admit() noexcept {
        if (policy_.available() >= 0) [[likely]]
            return true;
        if (f_.producer_state.load(std::memory_order_relaxed) != stopped_by_limit) {
            f_.producer_state.store(stopped_by_limit, std::memory_order_relaxed);
            bump(p_.stops);
        }
        // F1. Pairs with F3 in on_empty(): either the consumer sees the stop and wakes us once
        // it has made room, or we see that room now.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (policy_.available() < 0)
            return false;
        // Room appeared between the first look and the stop; whoever cleared it, go on.
        clear_state(stopped_by_limit);
        bump(p_.restarts);
        return true;
    }
    // Only the producer sets a non-running state, so a compare-exchange is not needed: if the
    // consumer cleared it meanwhile, storing `running` again changes nothing.
    void clear_state(std::uint32_t expected) noexcept {
        if (f_.producer_state.load(std::memory_order_relaxed) == expected)
            f_.producer_state.store(running, std::memory_order_relaxed);
    }

    // Wake the consumer if it is asleep (or about to be) on an empty ring.
    void doorbell() noexcept {
        p_.doorbell_pending = false;
        // F2. Pairs with F4 in consumer_wait(): either the consumer's re-check after its fence
        // finds what we pushed, or we see its flag here. With membarrier the consumer's F4 does
        // the hardware barrier for both sides (detail/asymmetric_barrier.hpp), so this one,
        // paid on every send, is a compiler barrier only.
        if (f_.asymmetric)
            detail::asymmetric_barrier::light();
        else
            std::atomic_thread_fence(std::memory_order_seq_cst);
        if (f_.consumer_asleep.load(std::memory_order_relaxed) == 0) [[likely]]
            return;
        // acq_rel: release pairs with the acquire wait in consumer_wait(), so the woken
        // consumer's next pop sees our push.
        if (f_.consumer_asleep.exchange(0, std::memory_order_acq_rel) != 0) {
            bump(p_.consumer_wakeups);
            f_.consumer_asleep.notify_one();
        }
    }

    // Report what the consumer took: everything owed that the producer has counted by now.
    // Returns whether anything was reported. The producer pushes first and counts second, so the
    // consumer may hold an item whose units are not counted yet (see the file comment); those
    // stay owed until a later call instead of making the consumer wait for the producer.
    bool settle() noexcept {
        std::uint32_t units = c_.owed;
        if (units == 0)
            return false;
        if (c_.credit < units) [[unlikely]] {
            // Read the policy's count (the producer's line) only when the credit left from the
            // last reading does not cover what is owed. No ordering is needed: on_completed()
            // reads the same counter again and cannot see an older value than we saw here.
            c_.credit = policy_.inflight();
            if (c_.credit < units)
                units = c_.credit;
            if (units == 0)
                return false;
        }
        time_point now{};
        if constexpr (detail::policy_uses_time<Policy>)
            now = Clock::now();
        if (!policy_.on_completed(units, now)) [[unlikely]]
            return false;
        c_.credit -= units;
        c_.owed -= units;
        return true;
    }

    // The ring looked empty: the producer has run out of items, or it is stopped or waiting and
    // everything it sent has been taken. Report what is owed, then decide about waking it with
    // a fence, so the decision cannot be lost.
    void on_empty() noexcept {
        (void)settle();
        // F3. Pairs with F1 (admit() and send()): either the producer's re-check after its
        // fence sees our completions and pops, or we see its state here.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        wake_producer();
    }

    // Wake the producer if it is stopped or waiting and what it waits for has happened. After a
    // successful take this runs without a fence (one per item would cost a full barrier on the
    // hot path): the load may miss a state stored an instant ago, but a stopped producer sends
    // nothing more, so the ring runs empty and on_empty() decides again behind F3. In practice
    // the store is visible long before that (the producer fences right after storing it).
    void wake_producer() noexcept {
        const std::uint32_t s = f_.producer_state.load(std::memory_order_relaxed);
        if (s == running) [[likely]]
            return;
        // Stopped by the limit and still over it: stay stopped, as BQL does (a wake-up now
        // would only find the producer over the limit again).
        if (s == stopped_by_limit && policy_.available() < 0)
            return;
        // acq_rel: release pairs with the acquire wait in send(), so the woken producer sees
        // our completion and pop.
        if (f_.producer_state.exchange(running, std::memory_order_acq_rel) != running) {
            bump(c_.producer_wakeups);
            f_.producer_state.notify_one();
        }
    }

    // Poll until `take` succeeds, sleeping on an empty ring. False only when closed and empty.
    template <class Take>
    bool consumer_wait(Take&& take) noexcept {
        if (!f_.consumer_sleeps) {
            for (unsigned spins = 0;; ++spins) {
                if (take())
                    return true;
                if (f_.closed.load(std::memory_order_relaxed) != 0)
                    return take();
                if (spins >= 64)
                    std::this_thread::yield();
            }
        }
        for (;;) {
            if (take())
                return true;
            f_.consumer_asleep.store(1, std::memory_order_relaxed);
            // F4. Pairs with F2 in doorbell() and F5 in close(): either our re-check below sees
            // the push (or `closed`), or the producer (or close) sees our flag and wakes us.
            // With membarrier this is the heavy side of the pair: it runs a full barrier on the
            // producer's CPU too, so F2 can be a compiler barrier (only on the way to sleep).
            if (f_.asymmetric)
                detail::asymmetric_barrier::heavy();
            else
                std::atomic_thread_fence(std::memory_order_seq_cst);
            if (take()) {
                f_.consumer_asleep.store(0, std::memory_order_relaxed);
                return true;
            }
            if (f_.closed.load(std::memory_order_relaxed) != 0) {
                f_.consumer_asleep.store(0, std::memory_order_relaxed);
                return false;
            }
            bump(c_.sleeps);
            // Acquire: pairs with the acq_rel exchange in doorbell() or close().
            f_.consumer_asleep.wait(1, std::memory_order_acquire);
        }
    }
    template <class Take>
    bool consumer_poll(Take&& take, deadline_type deadline) noexcept {
        detail::deadline_backoff backoff;
        for (;;) {
            if (take())
                return true;
            if (f_.closed.load(std::memory_order_relaxed) != 0)
                return take();
            if (std::chrono::steady_clock::now() >= deadline)
                return false;
            backoff.pause(deadline);
        }
    }

    // Read by both sides on every item, written only on the way to sleep or wake, so the line
    // stays shared in both caches.
    struct alignas(cache_line_size) shared_line {
        Ring* ring;
        bool consumer_sleeps; // consumer_wait::sleep; fixed at construction
        bool asymmetric;      // F2/F4 as a light/heavy (membarrier) pair; fixed at construction
        std::atomic<std::uint32_t> producer_state{running};
        std::atomic<std::uint32_t> consumer_asleep{0};
        std::atomic<std::uint32_t> closed{0};
    };
    // Written by the producer only.
    struct alignas(cache_line_size) producer_line {
        bool doorbell_pending = false;
        std::atomic<std::uint64_t> stops{0};
        std::atomic<std::uint64_t> restarts{0};
        std::atomic<std::uint64_t> full{0};
        std::atomic<std::uint64_t> waits{0};
        std::atomic<std::uint64_t> consumer_wakeups{0};
    };
    // Written by the consumer only.
    struct alignas(cache_line_size) consumer_line {
        std::uint32_t owed = 0;   // units taken but not yet reported
        std::uint32_t credit = 0; // units known counted and not yet reported (a lower bound)
        std::atomic<std::uint64_t> producer_wakeups{0};
        std::atomic<std::uint64_t> sleeps{0};
    };

    shared_line f_;
    Policy policy_;
    producer_line p_;
    consumer_line c_;
};

} // namespace v0
} // namespace qlimits
