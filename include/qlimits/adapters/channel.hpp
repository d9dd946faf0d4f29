// SPDX-License-Identifier: MIT
// qlimits/adapters/channel.hpp: a limit policy around a software ring between two threads, where
// taking an item out of the ring is its completion (veth's ptr_ring, a tun queue, a thread queue).
//
// Model: one producer thread sends items into the user's ring; one consumer thread receives them.
// Each item counts for units_of<Ring>(item) units (1 by default: packet-counted). Before an item
// enters the ring the channel asks the policy: with available() < 0 the producer is stopped, as
// BQL stops a netdev queue; a completion that brings available() back to >= 0 wakes it. The
// consumer reports what it took as a completion, per item or once per batch (its choice), and
// sleeps when the ring is empty; the producer wakes it. A blocked side sleeps on a futex
// (detail/futex.hpp), so it costs no CPU, with or without a deadline.
//
// API (all noexcept; nothing allocates; the ring is the user's and must outlive the channel):
//   channel<Ring, Policy[, Clock]> ch{ring, policy_config[, consumer_wait::sleep|spin
//                                     [, doorbell_barrier::membarrier|fences]]};
//   producer:  ch.try_send(item[, more])  -> send_status::{ok, ring_full, over_limit, too_large,
//                                             closed, refused}; item untouched unless ok
//              ch.send(item[, deadline])   -> waits while full or over the limit; ok, too_large,
//                                             closed, refused, timeout (deadline given)
//              ch.flush()                  -> wake the consumer for items sent with more = true
//   consumer:  ch.try_receive(out) / ch.receive(out[, deadline])            -> bool
//              ch.try_receive_batch(span, completion::per_item|per_batch)   -> count
//              ch.receive_batch(span, mode[, deadline])                     -> count (>= 1 unless
//                                                      closed, timed out, or the span is empty)
//              ch.policy()                 -> the policy, for its completion-side setters
//   any thread: ch.close(), ch.closed(), ch.stats(), ch.stopped(), ch.limit(), ch.inflight()
//
// The handshakes. Each sleep/wake decision is a store-buffering (Dekker) pattern: each side
// stores its own flag, runs a barrier, then loads the other's; with a full barrier on both sides
// at least one of the two loads sees the other's store, so no wake-up is lost:
//   producer stops (limit):   store state=stopped   -> F1 -> re-read available() and the books
//   producer waits (full):    store state=waiting   -> F1 -> retry the push, read items popped
//   consumer finds it empty:  completions and pops  -> F3 -> read producer state, wake if due
//   consumer sleeps (empty):  store asleep          -> F4 -> retry the pop, read items pushed
//   producer after a push:    count, push, pushed   -> F2 -> read asleep, wake the consumer
//                             (push, pushed, count where the policy counts after the push;
//                             see "Accounting order": either way all three precede F2)
//   close():                  store closed          -> F5 -> read both states, wake both
// After each successful take the consumer also reads the producer's state without a fence and
// wakes it early if due; the fenced decision F3 is taken at the first poll that finds the ring
// empty, which must come, since a stopped producer adds nothing. (A take that runs the ring dry
// does not fence; until the consumer polls again, a producer that announced a wait for room
// in that instant may sleep with room in the ring. Its few retries after F1 make that unlikely;
// the consumer's next empty poll wakes it.) F3 runs only when something happened since the
// last F3 (a pop or a completion): if nothing did, the producer's re-check after its own F1
// sees everything the consumer did, so an idle consumer polls an empty ring without fences.
// The producer has no such point of its own: it may go idle right after a send, so F2 runs on
// every send, unless the caller says more items follow (more = true; the kernel's xmit_more)
// and flushes at the end of the burst. F1 runs only when the producer is refused (over the
// limit, or waiting for room after a short spin); F4 only on the consumer's way to sleep, after
// about 5 us of spaced polls, so its cost is paid only where a sleep is likely to follow.
//
// Back-off. A side that fails retries spaced: a send refused by a full ring, and a poll of an
// empty ring, pause before returning (stats().producer_backoff_pauses / consumer_backoff_pauses
// count the pauses): 4 pauses after the first failure in a row, doubling to 16, and 32 more when
// the failure ends a run of at least 32 successes (the side has caught up with a streaming other
// side; a batch builds up while it waits). A batched take of 8 or more items that empties the
// ring while the producer is running makes the next take pause first (its next poll would
// otherwise end the run before it reaches 32): 32 pauses at first, then doubled (up to 128)
// when the take after a pause is larger than the one that emptied the ring, halved (down to
// 4) when not (judge_slip()). Retried at once, each failure would pull the other side's cache
// lines (the ring's index and slots) across while that side is writing them. The waits of
// send() and receive() spend about 256 pauses this way before they sleep.
//
// The policy's cheaper forms. Where the policy has it (fixed_limit, dql), the producer asks
// may_post() instead of available() >= 0 (it reads the consumer's line only when its last
// reading of it shows no room), and the consumer reports units it knows counted
// (see "Accounting order") with on_completed(n, now, known_counted) (fixed_limit, unlimited),
// which does not read the producer's line to check them again.
//
// F2/F4, the doorbell barrier, per channel (doorbell_barrier):
//   membarrier (default on Linux): F2 is a compiler barrier and F4 a membarrier system call
//     (MEMBARRIER_CMD_PRIVATE_EXPEDITED) that fences the producer's CPU too. Cheapest per send,
//     but every consumer sleep interrupts every CPU running a thread of the process (a
//     busy-polling core in the same process sees a stall), and registration, on the first such
//     channel, can block the constructor for milliseconds. Where membarrier is unavailable the
//     channel starts with fences.
//   fences: F2 and F4 are full fences. No system call, no interrupt of other CPUs; one full
//     fence per send (per burst with more = true).
// If membarrier fails after construction (a seccomp filter installed later), the failed F4
// falls back to a local fence and the channel switches to fences for good: the consumer asks
// the producer to switch, and until the producer has acknowledged (on its next doorbell) every
// sleep is bounded (1 ms), since the producer may still have used only a compiler barrier.
// stats().barrier says which is in use. Building with QLIMITS_FORCE_SYMMETRIC_BARRIER=1 makes
// every channel use fences (CI runs the stress tests both ways).
//
// Rings that fail without being full or empty. A ring's try_push may fail while the ring has
// room, and try_pop while it holds items (an MPMC ring under contention, an allocating ring).
// The channel counts items pushed and popped and sleeps only when the ring is known to be full
// (at least one item in it, whose pop will wake the producer) or known to be empty (no item
// pushed and not popped); otherwise it backs off and retries.
//
// Accounting order. A completion must never exceed what is counted in flight. Where the policy
// can take a count back (on_unqueued(): fixed_limit, unlimited), the producer counts an item
// (on_queued) before it pushes it and takes the count back if the ring refuses the push; every
// item the consumer pops is then counted, and it reports all it took at once, without reading
// the producer's count (inflight() may include, for an instant, an item whose push then fails).
// Otherwise (dql, software_limit: their on_queued() cannot be undone exactly) the producer
// pushes first and counts second, so a refused push leaves nothing to undo. The consumer may
// then pop an item whose units are not counted yet; it reports only what has been counted and
// owes the rest to its next call (a receive, or the re-check before it sleeps), so the
// consumer never waits for the producer. (So a consumer that stops calling receive
// altogether may leave the units of its last item or batch owed; any later call, even one
// that finds the ring empty, reports them.)
//
// The books. Policies count in 32 bits and compare within 2^31 (a signed available()). The
// channel keeps its own 64-bit count of units sent and completed and never lets more than
// max_inflight_units (2^31 - 1) be in flight: a send that would cross it is refused with
// over_limit and the producer is stopped until completions make room, as if the policy's limit
// had been reached. dql and fixed_limit never get there (their limit plus one object stays below
// 2^31); only unlimited with very large items does. An item that alone would cross it is
// too_large (max_item_units), as one over Policy::max_object is.
//
// A policy's on_queued() may refuse (concepts.hpp). Counted first, a refusal is a send_status
// (refused: nothing counted, nothing sent). Counted after the push, the item is in the ring
// already and cannot be taken back: such a policy must refuse only items over max_object,
// which the channel has turned away before (all shipped policies do); a refusal of a smaller
// one goes to the contract handler, and if the handler returns, the item stays sent and
// uncounted (the books are then wrong, as with two producers).
//
// Time: the policy's on_completed(n, now) gets `now` from the Clock, read once per completion
// (once per batch with completion::per_batch); not read at all for policies with
// `uses_time = false`. A policy with on_taken(n, now_fn) (accepts_lazy_time: software_limit)
// is called with that instead and reads the Clock itself when it needs the time; with
// on_taken(n, now_fn, same_take) (accepts_take_parts) the items of one receive_batch() completed
// per item are reported as parts of one take (one batch, one time). For clocks
// with ticks of a millisecond or more (jiffy_clock, dql's default) the channel reads
// CLOCK_MONOTONIC_COARSE instead (detail/coarse_clock.hpp): `now` is then up to one kernel
// tick (1-4 ms) old, and never goes backwards. A policy with on_completed(n, seen, now_fn)
// (accepts_seen_time: dql) gets one such reading as `seen` for up to 16 completions (about an
// eighth of a tick's worth in a steady stream; read anew after each empty poll, and after a
// slow-down from the next reading on) and reads the clock through now_fn where it keeps the
// time: only the end of dql's hold window is judged by the older reading, so it can come late
// by up to 15 completions (after a pause of the consumer's own with items in the ring, by as
// much as the pause), never early; every time it keeps (a window's start, the stall
// detector's last completion) comes from a reading of its own. Two more readings frame each
// system call where the policy takes them: the futex wake of a producer the limit stopped
// (accepts_wake_call) and the consumer's futex wait on an empty ring (accepts_consumer_idle),
// then told to it.
// Deadlines are std::chrono::steady_clock time points; a wait with a deadline sleeps on the
// futex with that deadline and returns after it by the timer slack (50 us by default) plus the
// scheduler's wake-up delay (docs/design.md has the measured lateness).
//
// Threading: exactly one producer thread (try_send, send, flush) and one consumer thread
// (try_receive*, receive*, policy() setters) at a time; close() and the observers from any
// thread. Builds without NDEBUG (or with QLIMITS_CHECK_SPSC=1) detect two threads inside the
// same side at once and report it through the contract handler, naming the method; if the
// handler returns, the call goes on (the rule is broken; the books may then be wrong).
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
#include "qlimits/detail/coarse_clock.hpp"
#include "qlimits/detail/futex.hpp"
#include "qlimits/detail/observed_inflight.hpp"

#ifndef QLIMITS_CHECK_SPSC
#ifdef NDEBUG
#define QLIMITS_CHECK_SPSC 0
#else
#define QLIMITS_CHECK_SPSC 1
#endif
#endif
#ifndef QLIMITS_FORCE_SYMMETRIC_BARRIER
#define QLIMITS_FORCE_SYMMETRIC_BARRIER 0
#endif

namespace qlimits {
inline namespace v0 {

/// Why try_send()/send() did or did not take an item.
enum class send_status : std::uint8_t {
    ok,         ///< in the ring and counted
    ring_full,  ///< the ring refused it (the policy would have admitted it); nothing counted
    over_limit, ///< the policy is over its limit, or the item would put more than
                ///< max_inflight_units in flight; the producer is stopped until a completion
    too_large,  ///< the item counts for more than max_item_units (Policy::max_object, and
                ///< never over max_inflight_units); never admissible
    closed,     ///< close() was called
    timeout,    ///< send(item, deadline): the deadline passed first
    refused,    ///< the policy's on_queued() refused an item of at most max_item_units (a
                ///< user policy's own rule; the shipped ones refuse only too_large items);
                ///< nothing counted. Only for policies with on_unqueued() (file comment)
};

/// How the consumer waits on an empty ring. Chosen once, at construction.
enum class consumer_wait : std::uint8_t {
    sleep, ///< receive() sleeps (futex); every send pays the doorbell barrier F2 to wake it
    spin,  ///< receive() polls (yield); sends pay no barrier: nobody is ever asleep to be woken
};

/// The doorbell barrier pair F2 (every send) / F4 (before the consumer sleeps). See the file
/// comment for when to pick which.
enum class doorbell_barrier : std::uint8_t {
    membarrier, ///< F2 a compiler barrier, F4 membarrier(2) (fences where unavailable)
    fences,     ///< F2 and F4 full fences: no system call, no interrupt of other CPUs
};

/// Which barrier a channel uses right now (channel_stats::barrier).
enum class barrier_in_use : std::uint8_t {
    membarrier,              ///< the asymmetric pair
    fences,                  ///< full fences, as chosen (or membarrier was never available);
                             ///< also with consumer_wait::spin, where no doorbell runs at all
    fences_after_failure,    ///< membarrier failed after construction; switched for good
};

/// How the consumer reports what it took.
enum class completion : std::uint8_t {
    per_item,  ///< one on_completed() per item (the policy sees every item)
    per_batch, ///< one on_completed() per receive_batch() call (one clock read)
};

/// Most units a channel lets be in flight: the range a policy's 32-bit books compare (its
/// signed 32-bit available()). Sends beyond it are refused with over_limit.
inline constexpr std::uint32_t channel_max_inflight_units = 0x7FFF'FFFFU;

/// What a channel has done, plus the policy's own snapshot.
template <class PolicyStats>
struct channel_stats {
    std::uint64_t stops;            ///< producer stopped by the limit (transitions into stopped)
    std::uint64_t restarts;         ///< stops undone at once by the producer's re-check
    std::uint64_t ring_full;        ///< sends refused because the ring was full
    std::uint64_t producer_waits;   ///< times send() went to sleep (the futex may return at
                                    ///< once if the wake-up came first)
    std::uint64_t producer_wakeups; ///< times the consumer set a stopped or waiting producer
                                    ///< running (asleep, about to sleep, or, after try_send,
                                    ///< only marked stopped)
    std::uint64_t consumer_sleeps;  ///< times receive() went to sleep on an empty ring (the
                                    ///< futex may return at once if the wake-up came first)
    std::uint64_t consumer_wakeups; ///< times the producer woke a consumer asleep or about to
                                    ///< sleep (one that then found an item did not sleep)
    std::uint64_t membarrier_failures; ///< F4 system calls that failed (then: fences for good)
    std::uint64_t producer_backoff_pauses; ///< pauses after refusals by a full ring
    std::uint64_t consumer_backoff_pauses; ///< pauses after polls of an empty ring, and slips
                                           ///< before a take (after a take emptied the ring)
    std::uint32_t limit;            ///< the policy's current limit
    std::uint32_t inflight;         ///< counted and not yet completed
    bool stopped;                   ///< the producer is stopped by the limit right now
    bool waiting_for_room;          ///< the producer waits in send() for a slot in the ring
    bool consumer_asleep;           ///< the consumer is (about to be) asleep right now
    barrier_in_use barrier;         ///< the doorbell barrier in use right now
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

// Debug check of the one-producer / one-consumer rule: a side's methods mark the side busy
// while they run; a second thread that finds it busy reports the violation. Build a program
// one way: translation units that differ in NDEBUG or QLIMITS_CHECK_SPSC define channel's
// methods two ways (as assert() does), and the linker keeps one of them, so the check may be
// silently absent from the units that asked for it.
template <bool Check>
class side_guard {
public:
    side_guard(std::atomic<std::uint32_t>&, const char*) noexcept {}
    side_guard(const side_guard&) = delete;
    side_guard& operator=(const side_guard&) = delete;
};
template <>
class side_guard<true> {
public:
    side_guard(std::atomic<std::uint32_t>& busy, const char* where) noexcept
        : busy_(busy), owner_(busy_.exchange(1, std::memory_order_acquire) == 0) {
        if (!owner_) [[unlikely]]
            contract_failed(where, "two threads on one side of a channel at once (it allows one "
                                   "producer thread and one consumer thread)");
    }
    // Only the call that took the flag frees it: an intruder whose report returned must not
    // clear it while the owner is still inside, or later overlaps would go unreported.
    ~side_guard() {
        if (owner_) busy_.store(0, std::memory_order_release);
    }
    side_guard(const side_guard&) = delete;
    side_guard& operator=(const side_guard&) = delete;

private:
    std::atomic<std::uint32_t>& busy_;
    bool owner_;
};
} // namespace detail

/// The clock a channel uses by default: the policy's clock_type (steady_clock_source if none).
template <class Policy>
using policy_clock_t = typename detail::policy_clock<Policy>::type;

/// A limit policy around a single-producer single-consumer software ring (see the file comment).
template <channel_ring Ring, limit_policy Policy, clock_source Clock = policy_clock_t<Policy>>
class channel {
    using traits = ring_traits<Ring>;
    using read_clock = detail::adapter_clock<Clock>;
    using guard = detail::side_guard<QLIMITS_CHECK_SPSC != 0>;
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

    /// Most units in flight at once (see "The books" in the file comment).
    static constexpr std::uint32_t max_inflight_units = channel_max_inflight_units;
    /// Largest item a send admits: Policy::max_object, but no item alone may cross
    /// max_inflight_units (it would wait for room that no completion can make).
    static constexpr std::uint32_t max_item_units =
        std::cmp_less(Policy::max_object, max_inflight_units)
            ? static_cast<std::uint32_t>(Policy::max_object)
            : max_inflight_units;

    /// Wrap `ring` (empty, and outliving the channel); the policy is built in place at the
    /// clock's now. `wait` says whether the consumer's receive() may sleep (see consumer_wait);
    /// `barrier` picks the doorbell barrier (see doorbell_barrier; the first membarrier channel
    /// of a process registers it, which can take milliseconds).
    explicit channel(Ring& ring, const config_type& cfg = config_type{},
                     consumer_wait wait = consumer_wait::sleep,
                     doorbell_barrier barrier = doorbell_barrier::membarrier) noexcept
        : f_{&ring, wait == consumer_wait::sleep, initial_barrier(wait, barrier)},
          policy_(cfg, read_clock::now()) {}
    /// The policy built in place from any arguments (a wrapper with state of its own, e.g.
    /// `channel<R, recording<dql<>, file_sink>>`'s sink, or a policy whose
    /// constructor takes more than a config): `channel ch(ring, std::in_place, args...)`, or
    /// with the consumer's wait and the barrier first.
    template <class... Args>
        requires std::is_nothrow_constructible_v<Policy, Args...>
    channel(Ring& ring, std::in_place_t, Args&&... policy_args) noexcept
        : channel(ring, consumer_wait::sleep, doorbell_barrier::membarrier, std::in_place,
                  std::forward<Args>(policy_args)...) {}
    template <class... Args>
        requires std::is_nothrow_constructible_v<Policy, Args...>
    channel(Ring& ring, consumer_wait wait, doorbell_barrier barrier, std::in_place_t,
            Args&&... policy_args) noexcept
        : f_{&ring, wait == consumer_wait::sleep, initial_barrier(wait, barrier)},
          policy_(std::forward<Args>(policy_args)...) {}
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;

    // ---- producer --------------------------------------------------------------------------

    /// Try to send one item without waiting. On anything but ok the item is left untouched.
    /// With more == true the consumer is not woken yet (one barrier saved per item): the caller
    /// promises a later send with more == false, or flush(). A refusal flushes by itself.
    [[nodiscard]] send_status try_send(value_type&& item, bool more = false) noexcept {
        guard g(p_.busy, "channel::try_send");
        return push(item, more);
    }
    /// As try_send(value_type&&), sending a copy.
    [[nodiscard]] send_status try_send(const value_type& item, bool more = false) noexcept
        requires std::is_nothrow_copy_constructible_v<value_type>
    {
        guard g(p_.busy, "channel::try_send");
        value_type copy(item);
        return push(copy, more);
    }

    /// Send one item, waiting while the ring is full or the policy is over its limit.
    /// Returns ok, too_large, closed or refused; on anything but ok the item is left untouched.
    send_status send(value_type&& item) noexcept {
        guard g(p_.busy, "channel::send");
        return blocking_push(item, nullptr);
    }
    send_status send(const value_type& item) noexcept
        requires std::is_nothrow_copy_constructible_v<value_type>
    {
        guard g(p_.busy, "channel::send");
        value_type copy(item);
        return blocking_push(copy, nullptr);
    }
    /// As send(item), giving up at `deadline` (timeout).
    send_status send(value_type&& item, deadline_type deadline) noexcept {
        guard g(p_.busy, "channel::send");
        return blocking_push(item, &deadline);
    }
    send_status send(const value_type& item, deadline_type deadline) noexcept
        requires std::is_nothrow_copy_constructible_v<value_type>
    {
        guard g(p_.busy, "channel::send");
        value_type copy(item);
        return blocking_push(copy, &deadline);
    }

    /// Wake the consumer for items sent with more == true (no-op if none are pending).
    void flush() noexcept {
        guard g(p_.busy, "channel::flush");
        flush_pending();
    }

    // ---- consumer --------------------------------------------------------------------------

    /// Take one item if there is one, completing it at once (per item).
    [[nodiscard]] bool try_receive(value_type& out) noexcept {
        guard g(c_.busy, "channel::try_receive");
        return take_one(out);
    }
    /// Take one item, sleeping while the ring is empty. False only when closed and empty.
    bool receive(value_type& out) noexcept {
        guard g(c_.busy, "channel::receive");
        return consumer_wait_for([&]() noexcept { return take_one(out); }, nullptr);
    }
    /// As receive(out), giving up at `deadline` (false).
    bool receive(value_type& out, deadline_type deadline) noexcept {
        guard g(c_.busy, "channel::receive");
        return consumer_wait_for([&]() noexcept { return take_one(out); }, &deadline);
    }

    /// Take up to out.size() items without waiting; complete them per item or once for the
    /// batch. Returns how many were taken.
    [[nodiscard]] std::size_t try_receive_batch(std::span<value_type> out,
                                                completion mode = completion::per_batch) noexcept {
        guard g(c_.busy, "channel::try_receive_batch");
        return take_batch(out, mode);
    }
    /// As try_receive_batch(), sleeping while the ring is empty. Returns at least 1, or 0 when
    /// closed and empty. An empty span receives nothing: 0 at once, without waiting.
    std::size_t receive_batch(std::span<value_type> out,
                              completion mode = completion::per_batch) noexcept {
        guard g(c_.busy, "channel::receive_batch");
        return wait_batch(out, mode, nullptr);
    }
    /// As receive_batch(out, mode), giving up at `deadline` (0).
    std::size_t receive_batch(std::span<value_type> out, completion mode,
                              deadline_type deadline) noexcept {
        guard g(c_.busy, "channel::receive_batch");
        return wait_batch(out, mode, &deadline);
    }

    // ---- either side / any thread ----------------------------------------------------------

    /// Refuse further sends (send_status::closed) and wake both sides. receive() still returns
    /// the items already in the ring, then false. Called from the producer thread (after its
    /// last send), no item is ever left behind. Called from a third thread, it races with a
    /// send already past its closed check: that item may land after receive() returned false;
    /// a consumer that must not lose it drains with try_receive() once the producer is done.
    void close() noexcept {
        // Release: a consumer that finds `closed` by polling (acquire) also finds every item
        // pushed before close() on this thread (the futex's wake only orders a sleeping one).
        f_.closed.store(1, std::memory_order_release);
        // F5. Pairs with F1 and F4: a side that re-checks after its fence sees `closed`, or we
        // see its waiting state here and wake it.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        // seq_cst: pairs with the waits (detail/futex.hpp: no wake-up skipped; what happened
        // before close is visible there).
        if (f_.consumer_asleep.exchange(0, std::memory_order_seq_cst) != 0)
            detail::wake(f_.consumer_asleep, f_.consumer_sleepers, true);
        if (f_.producer_state.exchange(running, std::memory_order_seq_cst) != running)
            detail::wake(f_.producer_state, f_.producer_sleepers, true);
    }
    [[nodiscard]] bool closed() const noexcept {
        return f_.closed.load(std::memory_order_acquire) != 0;
    }

    /// The producer is stopped by the limit (a completion with room will wake it).
    [[nodiscard]] bool stopped() const noexcept {
        return f_.producer_state.load(std::memory_order_relaxed) == stopped_by_limit;
    }
    [[nodiscard]] std::uint32_t limit() const noexcept { return policy_.limit(); }
    /// Units counted and not yet completed; from any thread, never above max_inflight_units and
    /// never wrapped (detail/observed_inflight.hpp).
    [[nodiscard]] std::uint32_t inflight() const noexcept {
        return detail::observed_inflight(policy_, c_.units_completed, max_inflight_units);
    }
    [[nodiscard]] const Policy& policy() const noexcept { return policy_; }
    /// The policy itself, for its completion-side setters (e.g. dql::set_max_limit,
    /// fixed_limit::set_limit): call them from the consumer thread. A raised limit wakes a
    /// stopped producer at the consumer's next completion or empty poll. Its reset() writes
    /// both sides' counters: only with the channel empty and neither side running (an empty
    /// channel then takes the next send even where the policy's room is stale, as dql's is).
    [[nodiscard]] Policy& policy() noexcept { return policy_; }
    /// Counters are read one by one (relaxed): each is exact, the set is not one snapshot.
    /// `inflight` and `policy.inflight` are one reading of inflight(): from a third thread never
    /// above max_inflight_units and never wrapped, but off by what moved during the read.
    [[nodiscard]] stats_type stats() const noexcept {
        stats_type s{p_.stops.load(std::memory_order_relaxed),
                p_.restarts.load(std::memory_order_relaxed),
                p_.full.load(std::memory_order_relaxed),
                p_.waits.load(std::memory_order_relaxed),
                c_.producer_wakeups.load(std::memory_order_relaxed),
                c_.sleeps.load(std::memory_order_relaxed),
                p_.consumer_wakeups.load(std::memory_order_relaxed),
                c_.membarrier_failures.load(std::memory_order_relaxed),
                p_.backoff_pauses.load(std::memory_order_relaxed),
                c_.backoff_pauses.load(std::memory_order_relaxed),
                policy_.limit(),
                inflight(),
                stopped(),
                f_.producer_state.load(std::memory_order_relaxed) == waiting_for_room,
                f_.consumer_asleep.load(std::memory_order_relaxed) != 0,
                barrier_now(),
                policy_.stats()};
        detail::set_inflight(s.policy, s.inflight);
        return s;
    }

private:
    // Producer states (f_.producer_state): what would let a waiting producer go on.
    static constexpr std::uint32_t running = 0;
    static constexpr std::uint32_t stopped_by_limit = 1; // a completion leaving room
    static constexpr std::uint32_t waiting_for_room = 2; // any pop

    // Doorbell barrier states (f_.barrier). Only the consumer moves asymmetric -> switching
    // (its membarrier failed); only the producer moves switching -> symmetric (it now fences).
    static constexpr std::uint32_t asymmetric = 0;
    static constexpr std::uint32_t switching = 1;
    static constexpr std::uint32_t symmetric = 2;
    static constexpr std::uint32_t fell_back = 4; // flag: symmetric because membarrier failed

    // Back-off after a refusal by a full ring (producer) or an empty poll (consumer). A side
    // that retried at once would pull the other side's cache lines (the ring's index and
    // slots) across on every try and slow the very side it waits for.
    // - Failures in a row pause 4 times, doubling with each one to 16 (about 80 to 320 ns at
    //   the 20 ns a `pause` took on the development VM's AMD EPYC; other x86 cores take from a
    //   few to about 40 ns). The cap is the latency a waiting side adds when the other side
    //   answers: inside send()/receive*() the doubling went on to 128 pauses (2.5 us) until
    //   2026-12-02, and a one-item ping-pong then took 2.7-3.3x as long per round trip; of
    //   the streaming rows one was faster with it, by 5-13 % (docs/benchmarks.md "Back-off
    //   cap").
    // - The slip: a first failure that ends a run of at least slip_min_run (32) successes
    //   pauses slip_pauses (32, about 0.6 us) more. The other side was streaming and this side
    //   has caught up with it; waiting lets a batch of items (or of free slots) build up, so the
    //   two sides stop taking the ring's lines from each other item by item (FastForward's
    //   "temporal slipping", docs/references.md [FF]). After a short run (a request/response,
    //   a limit of a few items) a batch cannot build up and the pause would only add latency.
    // - A slip before the next take when a take_batch() of at least slip_min_take (8,
    //   a cache line of 8-byte items) ran the ring dry while the producer was running: a
    //   batched consumer that has caught up finds the ring empty at the end of every take, and
    //   its next poll (an empty poll that resets the run) comes before a run of 32 can form.
    //   A take of fewer items (a request/response) does not slip, nor one that found the
    //   producer stopped by the limit or waiting (it is not streaming). The slip ends early,
    //   checked every 8 pauses, once the producer stops or waits: it then waits for this side.
    //   Its length learns, from take_slip_min (4) to take_slip_max (128), starting at 32: a
    //   batched take after a full slip (an empty one included) that is no larger than the dry
    //   take before it gained nothing (a small ring filled and its producer, still `running`,
    //   spun on it), so the next slip is halved; a larger one doubles it (judge_slip()). A
    //   slip cut short, or before try_receive(), is not judged. A bang-bang rule: with a
    //   steady producer the length goes to one bound or swings near it, not to a value in
    //   between. A fixed 128 made the batched rows 12-50 % faster with a 1024-slot ring but
    //   3-4x slower with 16 slots; a fixed 32 left a 16-slot ring 2.2x slower batched than per
    //   item where a pause is short (0.99x where it is long, and there the learned length is
    //   23-31 % slower: docs/benchmarks.md "A slip that learns its length").
    // The numbers are design choices; what they changed is measured in docs/benchmarks.md
    // ("Counting first and the slip", "The slip of a batched take").
    static constexpr unsigned slip_pauses = 32;
    static constexpr unsigned slip_check_every = 8;
    static constexpr std::uint32_t take_slip_min = 4;
    static constexpr std::uint32_t take_slip_max = 128;
    static constexpr std::uint32_t slip_min_run = 32;
    static constexpr std::size_t slip_min_take = 8;
    static constexpr unsigned backoff_first_pauses = 4;
    static constexpr std::uint32_t backoff_doublings = 2;
    // Pauses a side spends retrying before it announces that it will sleep (its polls spaced by
    // the back-off above; about 5 us at 20 ns a pause, the budget the earlier 128 polls of one
    // pause each had, and the order of a futex wake-up and the context switch it causes): a
    // sleep, and F4's system call, only when the other side is idle.
    static constexpr unsigned pauses_before_sleep = 256;
    // Polls of the policy by a producer stopped by the limit before it sleeps (each with one
    // pause: the stop reads only the policy's lines, which the consumer writes anyway).
    static constexpr unsigned over_limit_polls = 128;
    // Retries of a full ring after the producer announced its wait and fenced, before it
    // sleeps (each with ring_refused()'s back-off, by then at its cap of 16 pauses, and each
    // counted in stats().ring_full; a design choice).
    static constexpr unsigned rechecks_before_sleep = 4;
    // How long a consumer sleeps at most while its handshake may not have been made (the
    // producer has not acknowledged the switch to fences): an upper bound on the delay of a
    // wake-up lost in that window, not a promise of latency.
    static constexpr std::chrono::milliseconds unconfirmed_sleep{1};

    // The producer counts an item before pushing it, and takes the count back if the ring
    // refuses it (policies with on_unqueued(); see "Accounting order").
    static constexpr bool counts_first = accepts_unqueue<Policy>;

    static std::uint32_t initial_barrier(consumer_wait wait, doorbell_barrier b) noexcept {
        if (QLIMITS_FORCE_SYMMETRIC_BARRIER || wait == consumer_wait::spin ||
            b == doorbell_barrier::fences || !detail::asymmetric_barrier::available())
            return symmetric;
        return asymmetric;
    }
    barrier_in_use barrier_now() const noexcept {
        const std::uint32_t b = f_.barrier.load(std::memory_order_relaxed);
        if (b == asymmetric)
            return barrier_in_use::membarrier;
        return b == symmetric ? barrier_in_use::fences : barrier_in_use::fences_after_failure;
    }

    // Pause for the back-off of a failure after `streak` others in a row, which ends a run of
    // `run` successes (capped at slip_min_run); counts the pauses in `total` (stats(), and the
    // waits' budget before they sleep).
    static void back_off(std::uint32_t& streak, std::uint32_t& run,
                         std::atomic<std::uint64_t>& total) noexcept {
        unsigned pauses = backoff_first_pauses << std::min(streak, backoff_doublings);
        if (streak == 0 && run >= slip_min_run)
            pauses += slip_pauses;
        run = 0;
        if (streak < backoff_doublings)
            ++streak;
        pause(pauses, total);
    }
    // `n` pauses, counted in `total` (stats(), and the waits' budget before they sleep).
    static void pause(unsigned n, std::atomic<std::uint64_t>& total) noexcept {
        for (unsigned k = 0; k < n; ++k)
            detail::cpu_relax();
        total.store(total.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    // A side's own pause count (it is the only writer).
    static std::uint64_t pauses(const std::atomic<std::uint64_t>& total) noexcept {
        return total.load(std::memory_order_relaxed);
    }

    static void bump(std::atomic<std::uint64_t>& c) noexcept {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

    // ---- producer internals ----------------------------------------------------------------

    // Every send, inlined into the caller's loop: GCC 12 at -O3 kept it out of line, and forcing
    // it in took channel per item from 35-45 to 22-39 ns in interleaved A/B runs (raw ring
    // 26-35; docs/benchmarks.md "Inlining the send"). The refusals stay out of line
    // (refused(), held_back(), ring_refused()), so the inlined part is small.
    [[gnu::always_inline]] send_status push(value_type& item, bool more) noexcept {
        const std::uint32_t units = qlimits::units_of<Ring>(item);
        if (units > max_item_units || f_.closed.load(std::memory_order_relaxed) != 0)
            [[unlikely]]
            return refused(units);
        if (!admit(units)) [[unlikely]]
            return held_back();
        // Counted before the consumer can see the item where the policy can take the count
        // back (see "Accounting order").
        if constexpr (counts_first) {
            if (!count_post(units)) [[unlikely]]
                return policy_refused();
        }
        if (!traits::try_push(*f_.ring, std::move(item))) [[unlikely]]
            return ring_refused(units);
        // Stores only where a field changes, and one counter of pushes (the atomic itself):
        // three stores fewer per item, and the doorbell's fast path inlined, took unlimited per
        // item from 5.1 to 4.4 ns in an interleaved A/B (docs/benchmarks.md, stop 50).
        if (p_.full_streak != 0) [[unlikely]]
            p_.full_streak = 0;
        if (p_.run < slip_min_run) [[unlikely]]
            ++p_.run;
        p_.pushed.store(p_.pushed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        if constexpr (!counts_first) {
            if (!count_post(units)) [[unlikely]]
                uncounted_post();
        }
        p_.units_sent += units;
        if (!f_.consumer_sleeps) // a spinning consumer needs no doorbell
            return send_status::ok;
        if (more) {
            p_.doorbell_pending = true;
            return send_status::ok;
        }
        doorbell();
        return send_status::ok;
    }

    // on_queued(), with the time where the policy records when units are posted (dql's stall
    // detector, asks_post_time): only then is the clock read. False: the policy refused
    // (units <= max_object: only a user policy's own rule does that).
    bool count_post(std::uint32_t units) noexcept {
        if constexpr (asks_post_time<Policy>) {
            if (policy_.wants_post_time()) [[unlikely]]
                return policy_.on_queued(units, read_clock::now());
        }
        return policy_.on_queued(units);
    }
    // The policy refused before the push (counts_first): nothing counted, nothing sent.
    [[gnu::noinline]] send_status policy_refused() noexcept {
        flush_pending();
        return send_status::refused;
    }
    // The policy refused after the push: the item is in the ring and cannot be taken back.
    [[gnu::cold, gnu::noinline]] static void uncounted_post() noexcept {
        detail::contract_failed("channel::try_send or channel::send",
                                "the policy refused an item of at most max_object units after "
                                "it was sent; a policy without on_unqueued() may refuse only "
                                "larger items");
    }

    // A send refused before anything was counted: too large, or the channel is closed. Rings
    // the pending doorbells as every refusal does ("a refusal flushes by itself"): a refused
    // last send of a more == true run would otherwise leave the consumer asleep beside the
    // items sent before it.
    [[gnu::noinline]] send_status refused(std::uint32_t units) noexcept {
        flush_pending();
        return units > max_item_units ? send_status::too_large : send_status::closed;
    }
    // Over the limit (admit() has stopped the producer): ring the pending doorbells, so the
    // consumer can make room.
    [[gnu::noinline]] send_status held_back() noexcept {
        flush_pending();
        return send_status::over_limit;
    }
    // The ring refused the push: take a count made first back, and space the caller's retries
    // (one that retries at once would re-read the consumer's lines in a tight loop and slow the
    // consumer down; see backoff_first_pauses).
    [[gnu::noinline]] send_status ring_refused(std::uint32_t units) noexcept {
        if constexpr (counts_first)
            policy_.on_unqueued(units);
        else
            (void)units;
        bump(p_.full);
        flush_pending();
        back_off(p_.full_streak, p_.run, p_.backoff_pauses);
        return send_status::ring_full;
    }

    send_status blocking_push(value_type& item, const deadline_type* deadline) noexcept {
        std::uint64_t paused_from = pauses(p_.backoff_pauses); // pauses before the last sleep
        for (unsigned spins = 0;;) {
            send_status r = push(item, false);
            if (r != send_status::ring_full && r != send_status::over_limit)
                return r;
            if (deadline != nullptr && std::chrono::steady_clock::now() >= *deadline)
                return send_status::timeout;
            const bool keep_polling =
                r == send_status::ring_full
                    ? pauses(p_.backoff_pauses) - paused_from < pauses_before_sleep
                    : spins < over_limit_polls;
            if (keep_polling) {
                // push() backed off already after a full ring; a stopped producer polls with a
                // pause (it reads only its own line and the policy's until woken)
                if (r == send_status::over_limit) {
                    ++spins;
                    detail::cpu_relax();
                }
                continue;
            }
            spins = 0;
            paused_from = pauses(p_.backoff_pauses);
            if (r == send_status::ring_full) {
                // Announce the wait, then retry once: the consumer may have freed a slot after
                // our push failed and before it could see us waiting.
                f_.producer_state.store(waiting_for_room, std::memory_order_relaxed);
                // F1. Pairs with F3 in on_empty(): either the consumer sees us waiting and wakes
                // us, or this retry sees the slot its pop freed (and the pops it counted).
                std::atomic_thread_fence(std::memory_order_seq_cst);
                r = push(item, false);
                // A consumer that popped without a fence after its take (it fences only on an
                // empty poll) may have missed our state and we its pops: it would wake us only
                // at its next poll. Its pops reach us once its store buffer drains, which takes
                // far less than a few more retries (16 pauses each, the back-off's cap: about
                // 1.5 us in all); a heuristic for latency, not the guarantee, which remains the
                // consumer's fenced decision at its next empty poll.
                for (unsigned k = 0; r == send_status::ring_full && k < rechecks_before_sleep; ++k)
                    r = push(item, false);
                if (r == send_status::ring_full) {
                    // Sleep only if an item is in the ring: its pop will wake us. With none, the
                    // ring failed while not full: back off and retry instead.
                    if (p_.pushed.load(std::memory_order_relaxed) ==
                        c_.popped.load(std::memory_order_relaxed)) {
                        clear_state(waiting_for_room);
                        std::this_thread::yield();
                        continue;
                    }
                    bump(p_.waits);
                    if (!detail::wait_until(f_.producer_state, f_.producer_sleepers, waiting_for_room, deadline))
                        clear_state(waiting_for_room); // timed out; the loop returns timeout
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
                // Pairs with the seq_cst exchange in wake_producer() or close().
                (void)detail::wait_until(f_.producer_state, f_.producer_sleepers, stopped_by_limit, deadline);
                continue;
            }
            return r;
        }
    }

    // Units in flight by the channel's 64-bit books would stay within max_inflight_units.
    // `fresh`: read the consumer's count now (after F1); otherwise only if the cached reading
    // (a lower bound: completions only grow) does not show room.
    bool books_fit(std::uint32_t units, bool fresh) noexcept {
        if (!fresh && p_.units_sent + units - p_.completed_seen <= max_inflight_units) [[likely]]
            return true;
        p_.completed_seen = c_.units_completed.load(std::memory_order_relaxed);
        return p_.units_sent + units - p_.completed_seen <= max_inflight_units;
    }

    // The producer's admission test, with the BQL stop and re-check. The common case (room)
    // inline in every send; the stop out of line.
    bool admit(std::uint32_t units) noexcept {
        if (detail::first_look(policy_) && books_fit(units, false)) [[likely]] {
            // A stop whose send was refused (try_send) and that nobody has undone since: room
            // came without a wake-up (a raised limit, or a wake the consumer decided without a
            // fence). The state is on the line just read for `closed`.
            clear_state(stopped_by_limit);
            return true;
        }
        return stop_and_recheck(units);
    }
    [[gnu::noinline]] bool stop_and_recheck(std::uint32_t units) noexcept {
        if (f_.producer_state.load(std::memory_order_relaxed) != stopped_by_limit) {
            f_.producer_state.store(stopped_by_limit, std::memory_order_relaxed);
            bump(p_.stops);
        }
        // F1. Pairs with F3 in on_empty(): either the consumer sees the stop and wakes us once
        // it has made room, or we see that room now.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!books_fit(units, true))
            return false;
        // An empty channel (every unit sent has been completed) takes the send whatever the
        // policy says. Linux counts a post before it checks the limit, so its queue always takes
        // the first item and stops after it, and that item's completion brings fresh room;
        // checked first, as here, a policy whose room is stale with nothing in flight would
        // refuse every send for good, no completion coming to renew it: dql after reset()
        // (it keeps adj_limit, as Linux does; past 2^31 units sent that reads as no room).
        if (policy_.available() < 0 && p_.units_sent != p_.completed_seen)
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

    void flush_pending() noexcept {
        if (p_.doorbell_pending)
            doorbell();
    }

    // Wake the consumer if it is asleep (or about to be) on an empty ring. The common path is a
    // few loads; the switch of barriers and the wake-up are out of line.
    [[gnu::always_inline]] void doorbell() noexcept {
        p_.doorbell_pending = false;
        // F2. Pairs with F4 in consumer_wait_for(): either the consumer's re-check after its
        // barrier finds what we pushed, or we see its flag here. With membarrier the consumer's
        // F4 does the hardware barrier for both sides (detail/asymmetric_barrier.hpp), so this
        // one, paid on every send, is a compiler barrier only.
        const std::uint32_t b = f_.barrier.load(std::memory_order_relaxed);
        if (b == asymmetric) [[likely]]
            detail::asymmetric_barrier::light();
        else
            std::atomic_thread_fence(std::memory_order_seq_cst);
        if (b == switching) [[unlikely]]
            acknowledge_fences();
        if (f_.consumer_asleep.load(std::memory_order_relaxed) == 0) [[likely]]
            return;
        wake_consumer();
    }
    // The consumer's membarrier failed: from now on every F2 is a fence (coherence: we can
    // never read `asymmetric` again). Release: a consumer that reads the acknowledgment
    // (acquire) sees every push made before it.
    [[gnu::noinline]] void acknowledge_fences() noexcept {
        f_.barrier.store(symmetric | fell_back, std::memory_order_release);
    }
    [[gnu::noinline]] void wake_consumer() noexcept {
        // seq_cst: pairs with the wait in consumer_wait_for() (detail/futex.hpp), so the woken
        // consumer's next pop sees our push.
        if (f_.consumer_asleep.exchange(0, std::memory_order_seq_cst) != 0) {
            bump(p_.consumer_wakeups);
            detail::wake(f_.consumer_asleep, f_.consumer_sleepers, false);
        }
    }

    // ---- consumer internals ----------------------------------------------------------------

    void count_pops(std::size_t n) noexcept {
        c_.empty_streak = 0;
        c_.run = static_cast<std::uint32_t>(std::min<std::size_t>(c_.run + n, slip_min_run));
        c_.popped_local += n;
        c_.popped.store(c_.popped_local, std::memory_order_relaxed);
        c_.progress = true;
    }

    bool take_one(value_type& out) noexcept {
        if (c_.slip_due) [[unlikely]]
            (void)slip(); // judged by batched takes only
        if (!traits::try_pop(*f_.ring, out)) {
            on_empty_poll();
            return false;
        }
        count_pops(1);
        c_.owed += qlimits::units_of<Ring>(out);
        (void)settle();
        wake_producer();
        return true;
    }

    std::size_t take_batch(std::span<value_type> out, completion mode) noexcept {
        // A slip that ran its length is judged by this take (judge_slip()).
        bool slipped = false;
        if (c_.slip_due && !out.empty()) [[unlikely]]
            slipped = slip();
        // Units still owed from an earlier take (popped before the producer counted them):
        // reported as theirs, not as the start of this take.
        (void)settle();
        std::size_t n = 0;
        bool reported = false; // a part of this take was reported (later parts say same_take)
        for (; n < out.size(); ++n) {
            if (!traits::try_pop(*f_.ring, out[n]))
                break;
            const std::uint32_t units = qlimits::units_of<Ring>(out[n]);
            // A batch is one completion unless its units would leave the range a policy's
            // 32-bit counters can compare (2^31); then it is reported in parts.
            if (mode == completion::per_item || c_.owed + units > max_inflight_units)
                reported |= settle(reported);
            c_.owed += units;
        }
        if (n == 0) {
            if (!out.empty()) {
                if (slipped) [[unlikely]]
                    judge_slip(0);
                on_empty_poll();
            }
            return 0;
        }
        count_pops(n);
        (void)settle(reported);
        if (slipped) [[unlikely]]
            judge_slip(n);
        // A take of a cache line of items or more that ran the ring dry while the producer was
        // running: it streams and this side has caught up with it. The next take slips first
        // (see judge_slip()), so a batch builds up; the items taken now are not held back by it.
        // A producer stopped by the limit or waiting (or a ring whose pop failed spuriously
        // while it was stopped) is not streaming: no slip.
        const bool streaming = f_.producer_state.load(std::memory_order_relaxed) == running;
        wake_producer();
        if (n < out.size() && n >= slip_min_take && streaming) {
            c_.slip_due = true;
            c_.slip_from = n;
        }
        return n;
    }
    // After a slip that ran its length: a take no larger than the one that ran the ring dry
    // before it gained nothing from the wait (a small ring was full and its producer spun on
    // it), so the next slip is half as long, down to take_slip_min; a larger take doubles it,
    // up to take_slip_max. Consumer-local, so it costs no read of the producer's lines.
    void judge_slip(std::size_t n) noexcept {
        if (n > c_.slip_from)
            c_.take_slip = std::min(c_.take_slip * 2, take_slip_max);
        else
            c_.take_slip = std::max(c_.take_slip / 2, take_slip_min);
    }

    // The slip of a take that ran the ring dry (take_batch()), before the next take; cut short
    // once the producer is no longer running (it waits for this side). True: it ran its length.
    bool slip() noexcept {
        c_.slip_due = false;
        c_.run = 0;
        unsigned k = 0;
        for (; k < c_.take_slip; ++k) {
            if (k % slip_check_every == 0 &&
                f_.producer_state.load(std::memory_order_relaxed) != running)
                break;
            detail::cpu_relax();
        }
        c_.backoff_pauses.store(pauses(c_.backoff_pauses) + k, std::memory_order_relaxed);
        return k == c_.take_slip;
    }

    std::size_t wait_batch(std::span<value_type> out, completion mode,
                           const deadline_type* deadline) noexcept {
        if (out.empty())
            return 0;
        std::size_t n = 0;
        (void)consumer_wait_for([&]() noexcept { return (n = take_batch(out, mode)) != 0; },
                                deadline);
        return n;
    }

    // The `now` of a completion: not read for policies that do not use the time.
    static time_point completion_time() noexcept {
        if constexpr (detail::policy_uses_time<Policy>)
            return read_clock::now();
        else
            return time_point{};
    }

    // Report what the consumer took: everything owed that the producer has counted by now.
    // Returns whether anything was reported. The producer pushes first and counts second, so the
    // consumer may hold an item whose units are not counted yet (see the file comment); those
    // stay owed until a later call instead of making the consumer wait for the producer.
    // same_take: a later part of a take already partly reported (take_batch() per item).
    bool settle(bool same_take = false) noexcept {
        std::uint64_t units = c_.owed;
        if (units == 0)
            return false;
        // Counted before they were pushed: everything taken is counted.
        if (!counts_first && c_.credit < units) [[unlikely]] {
            // Read the policy's count (the producer's line) only when the credit left from the
            // last reading does not cover what is owed. The channel's books keep inflight below
            // 2^31, so the 32-bit count is exact; what it shows was counted (counts only grow).
            c_.credit = policy_.inflight();
            if (c_.credit < units)
                units = c_.credit;
            if (units == 0)
                return false;
        }
        bool ok;
        const auto now = []() noexcept { return read_clock::now(); };
        if constexpr (accepts_take_parts<Policy>) {
            // The policy reads the clock itself, only when it needs the time, and counts the
            // parts of one take as one batch at one time.
            ok = policy_.on_taken(static_cast<std::uint32_t>(units), now, same_take);
        } else if constexpr (accepts_lazy_time<Policy>) {
            ok = policy_.on_taken(static_cast<std::uint32_t>(units), now);
        } else if constexpr (read_clock::coarse && accepts_seen_time<Policy>) {
            // One coarse reading for up to 16 completions; the policy reads anew where it
            // keeps the time (detail/coarse_clock.hpp).
            ok = policy_.on_completed(static_cast<std::uint32_t>(units), c_.reading.now(),
                                      [this]() noexcept { return c_.reading.current(); });
        } else if constexpr (accepts_known_counted<Policy>) {
            // The credit (or counting first) proves the units counted: the policy need not read
            // the producer's line again to check them (one line transfer less per reading).
            ok = policy_.on_completed(static_cast<std::uint32_t>(units), completion_time(),
                                      known_counted);
        } else {
            ok = policy_.on_completed(static_cast<std::uint32_t>(units), completion_time());
        }
        if (!ok) [[unlikely]]
            return false;
        if constexpr (!counts_first)
            c_.credit -= units;
        c_.owed -= units;
        c_.completed_local += units;
        c_.units_completed.store(c_.completed_local, std::memory_order_relaxed);
        c_.progress = true;
        return true;
    }

    // The ring looked empty: the producer has run out of items, or it is stopped or waiting and
    // everything it sent has been taken. Report what is owed, then decide about waking it with
    // a fence, so the decision cannot be lost.
    void on_empty() noexcept {
        (void)settle();
        if (!c_.progress) {
            // Nothing popped or completed since the last F3: a producer that stopped after it
            // re-checks after its F1 and sees all we did; no fence needed to decide again.
            wake_producer();
            return;
        }
        c_.progress = false;
        // F3. Pairs with F1 (admit() and blocking_push()): either the producer's re-check after
        // its fence sees our completions and pops, or we see its state here.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        wake_producer();
    }
    // An empty poll: decide about the producer (on_empty), then back off before the caller
    // polls again, so it does not pull the ring's index away from the producer on every try.
    void on_empty_poll() noexcept {
        on_empty();
        // The consumer may now wait: the next completion reads the clock.
        if constexpr (read_clock::coarse && accepts_seen_time<Policy>)
            c_.reading.forget();
        back_off(c_.empty_streak, c_.run, c_.backoff_pauses);
    }

    // Wake the producer if it is stopped or waiting and what it waits for has happened. After a
    // successful take this runs without a fence (one per item would cost a full barrier on the
    // hot path): the load may miss a state stored an instant ago, but a stopped producer sends
    // nothing more, so the ring runs empty and on_empty() decides again behind F3.
    void wake_producer() noexcept {
        const std::uint32_t s = f_.producer_state.load(std::memory_order_relaxed);
        if (s == running) [[likely]]
            return;
        // Stopped by the limit and still over it: stay stopped, as BQL does (a wake-up now
        // would only find the producer over the limit again).
        if (s == stopped_by_limit && policy_.available() < 0)
            return;
        // seq_cst: pairs with the wait in blocking_push() (detail/futex.hpp), so the woken
        // producer sees our completion and pop.
        if (f_.producer_state.exchange(running, std::memory_order_seq_cst) != running) {
            bump(c_.producer_wakeups);
            if constexpr (accepts_wake_call<Policy>) {
                // The policy weighs what a wake-up costs this side: time the system call (two
                // clock reads, only when one is made; a spinning producer costs nothing).
                if (detail::has_sleepers(f_.producer_sleepers)) {
                    const time_point before = read_clock::now();
                    detail::wake_call(f_.producer_state, false);
                    policy_.on_wake_call(read_clock::now() - before);
                }
            } else {
                detail::wake(f_.producer_state, f_.producer_sleepers, false);
            }
        }
    }

    // F4, the consumer's barrier before it sleeps. True when the handshake with the producer's
    // F2 is made (a sleep without a deadline is then safe); false when it may not be.
    bool sleep_barrier() noexcept {
        const std::uint32_t b = f_.barrier.load(std::memory_order_relaxed);
        if (b == asymmetric) {
            if (detail::asymmetric_barrier::heavy())
                return true;
            // membarrier failed (it ran a local fence): the producer's last F2 may have been a
            // compiler barrier only. Ask it to fence from now on; until it says so, sleep
            // bounded.
            bump(c_.membarrier_failures);
            f_.barrier.store(switching, std::memory_order_relaxed);
            return false;
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (b != switching)
            return true;
        // Acquire: pairs with the producer's release acknowledgment; pushes before it are
        // visible to our re-check, pushes after it were fenced.
        return f_.barrier.load(std::memory_order_acquire) != switching;
    }

    // Closed: take what is left; false once every item pushed so far has been popped (a ring
    // that fails spuriously is retried while it still holds items).
    template <class Take>
    bool drain_closed(Take& take) noexcept {
        for (;;) {
            if (take())
                return true;
            if (p_.pushed.load(std::memory_order_acquire) == c_.popped_local)
                return false;
            std::this_thread::yield();
        }
    }

    // Poll until `take` succeeds, sleeping on an empty ring. False when closed and empty, or at
    // the deadline.
    template <class Take>
    bool consumer_wait_for(Take&& take, const deadline_type* deadline) noexcept {
        std::uint64_t paused_from = pauses(c_.backoff_pauses); // pauses before the last sleep
        for (;;) {
            if (take())
                return true;
            if (f_.closed.load(std::memory_order_acquire) != 0) // pairs with close()'s release
                return drain_closed(take);
            if (deadline != nullptr && std::chrono::steady_clock::now() >= *deadline)
                return false;
            if (pauses(c_.backoff_pauses) - paused_from < pauses_before_sleep) // polls back off
                continue;
            if (!f_.consumer_sleeps) {
                std::this_thread::yield();
                continue;
            }
            paused_from = pauses(c_.backoff_pauses);
            f_.consumer_asleep.store(1, std::memory_order_relaxed);
            // F4. Pairs with F2 in doorbell() and F5 in close(): either our re-check below sees
            // the push (or `closed`), or the producer (or close) sees our flag and wakes us.
            const bool handshake = sleep_barrier();
            const bool known_empty =
                p_.pushed.load(std::memory_order_relaxed) == c_.popped_local;
            if (take()) {
                f_.consumer_asleep.store(0, std::memory_order_relaxed);
                return true;
            }
            if (f_.closed.load(std::memory_order_acquire) != 0) {
                f_.consumer_asleep.store(0, std::memory_order_relaxed);
                return drain_closed(take);
            }
            if (!known_empty) {
                // An item is in the ring but the ring's try_pop failed: retry, do not sleep.
                f_.consumer_asleep.store(0, std::memory_order_relaxed);
                std::this_thread::yield();
                continue;
            }
            bump(c_.sleeps);
            if (handshake) {
                if (!consumer_sleep(deadline))
                    f_.consumer_asleep.store(0, std::memory_order_relaxed);
                continue;
            }
            auto until = std::chrono::steady_clock::now() + unconfirmed_sleep;
            if (deadline != nullptr && *deadline < until)
                until = *deadline;
            if (!consumer_sleep(&until))
                f_.consumer_asleep.store(0, std::memory_order_relaxed);
        }
    }

    // The consumer's futex wait (false at `until`). A policy that weighs the consumer's idle
    // (accepts_consumer_idle: software_limit leaves it out of its drain rate) is told how long
    // it slept: two clock reads beside a system call; the spin before it is not timed.
    bool consumer_sleep(const deadline_type* until) noexcept {
        if constexpr (accepts_consumer_idle<Policy>) {
            const time_point before = read_clock::now();
            const bool woken =
                detail::wait_until(f_.consumer_asleep, f_.consumer_sleepers, 1, until);
            policy_.on_consumer_idle(read_clock::now() - before);
            return woken;
        } else {
            return detail::wait_until(f_.consumer_asleep, f_.consumer_sleepers, 1, until);
        }
    }

    // Read by both sides on every item, written only on the way to sleep or wake, so the line
    // stays shared in both caches.
    struct alignas(cache_line_size) shared_line {
        Ring* ring;
        bool consumer_sleeps; // consumer_wait::sleep; fixed at construction
        std::atomic<std::uint32_t> barrier;
        std::atomic<std::uint32_t> producer_state{running};
        std::atomic<std::uint32_t> consumer_asleep{0};
        std::atomic<std::uint32_t> closed{0};
        std::atomic<std::uint32_t> producer_sleepers{0}; // inside a futex wait (detail/futex.hpp)
        std::atomic<std::uint32_t> consumer_sleepers{0};
    };
    // Written by the producer only (pushed is read by the consumer on its way to sleep).
    struct alignas(cache_line_size) producer_line {
        bool doorbell_pending = false;
        std::uint64_t units_sent = 0;     // units counted (the channel's 64-bit books)
        std::uint64_t completed_seen = 0; // last reading of c_.units_completed
        std::uint32_t full_streak = 0;    // refusals by a full ring in a row (back_off)
        std::uint32_t run = 0;            // pushes since the last refusal (the slip)
        std::atomic<std::uint64_t> pushed{0};
        std::atomic<std::uint32_t> busy{0}; // QLIMITS_CHECK_SPSC
        std::atomic<std::uint64_t> stops{0};
        std::atomic<std::uint64_t> restarts{0};
        std::atomic<std::uint64_t> full{0};
        std::atomic<std::uint64_t> waits{0};
        std::atomic<std::uint64_t> consumer_wakeups{0};
        std::atomic<std::uint64_t> backoff_pauses{0};
    };
    // Written by the consumer only (popped and units_completed are read by the producer only
    // when it is refused).
    struct alignas(cache_line_size) consumer_line {
        std::uint64_t owed = 0;   // units taken but not yet reported
        std::uint64_t credit = 0; // units known counted and not yet reported (a lower bound)
        std::uint64_t popped_local = 0;
        std::uint64_t completed_local = 0;
        bool progress = false; // popped or completed since the last F3
        bool slip_due = false;  // the last take ran the ring dry (take_batch(), slip_min_take)
        std::uint32_t empty_streak = 0; // empty polls in a row (back_off)
        std::uint32_t run = 0;          // items taken since the last empty poll (the slip)
        std::atomic<std::uint64_t> popped{0};
        std::atomic<std::uint64_t> units_completed{0};
        std::atomic<std::uint32_t> busy{0}; // QLIMITS_CHECK_SPSC
        std::atomic<std::uint64_t> producer_wakeups{0};
        std::atomic<std::uint64_t> sleeps{0};
        std::atomic<std::uint64_t> membarrier_failures{0};
        std::atomic<std::uint64_t> backoff_pauses{0};
        // Last, so the fields before them keep their places (judge_slip()).
        std::size_t slip_from = 0;             // the dry take that made the next slip due
        std::uint32_t take_slip = slip_pauses; // the next slip's length, in pauses
        detail::reused_reading<read_clock> reading; // settle(), accepts_seen_time
    };

    shared_line f_;
    Policy policy_;
    producer_line p_;
    consumer_line c_;
};

} // namespace v0
} // namespace qlimits
