// SPDX-License-Identifier: MIT
// qlimits/adapters/tx_gate.hpp: a limit policy in front of a NIC-style ring, with the stop /
// re-check / wake protocol of Linux BQL (the netdev_tx_sent_queue / netdev_tx_completed_queue
// helpers, as described in docs/design.md §3; written from that description).
//
// Model: the producer posts units to a ring the device drains on its own; the device reports
// completions later, once per completion round. The gate tells the policy about both and owns
// the ring's stop flag (through ring_traits): it stops the ring when the policy is over its
// limit and wakes it when a completion brings the policy back to available() >= 0.
//
// Why the fences. Stopping and waking is a store-buffering (Dekker) pattern:
//   producer:   stop the ring (store)        -> fence -> re-read available() (load)
//   completion: on_completed (store limits)  -> fence -> read stopped()      (load)
// Without a full fence between store and load on both sides, each side can miss the other's
// store: the producer stops after the completion has already looked at the flag, and its re-check
// still sees the old limit. With nothing left in flight no later completion comes, and the ring
// stays stopped forever. With both fences, at least one side sees the other: either the
// completion sees the stop and wakes, or the producer's re-check sees the room and wakes itself.
//
// Overshoot. In flight may exceed the limit by the item that crosses it (the DQL rule), and, as
// with the Linux helpers, by one more item in a rare race: a completion finds room, the producer
// fills it and stops the ring, and then that completion's wake lands; the next item goes out
// although the policy is over its limit, and its sent() stops the ring again (with xmit_more,
// the extra is the whole next batch). A producer that also checks available() >= 0 before
// posting (as channel does) never sends that extra item.
//
// The books. Policies count in 32 bits and compare within 2^31. The gate keeps its own 64-bit
// count of units sent and completed and refuses (sent() returns false, nothing counted) units
// that would put more than max_inflight_units (2^31 - 1) in flight; with xmit_more batches
// (which skip the stop check) this is the only thing that keeps the policy's books exact.
// dql and fixed_limit stop the ring long before; only unlimited with huge batches gets there.
//
// Threading: sent() belongs to the producer, completed() to the completion path; each side must
// be serialised on its own (the kernel's TX lock and NAPI context); the two may run concurrently.
// reset() only while neither side runs. stats() and stopped() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "qlimits/adapters/ring_traits.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/detail/observed_inflight.hpp"

namespace qlimits {
inline namespace v0 {

/// What a gate has done, plus the policy's own snapshot.
template <class PolicyStats>
struct gate_stats {
    std::uint64_t stops;    ///< times sent() stopped a running ring (over the limit)
    std::uint64_t restarts; ///< stops undone at once by the producer's re-check (a race won)
    std::uint64_t wakeups;  ///< times completed() woke a stopped ring
    std::uint64_t refused;  ///< sent() calls refused: over max_object or max_inflight_units
    PolicyStats policy;     ///< limit, inflight, ... as the policy reports them
};

/// What sent(ring, units, more) tells the caller.
struct gate_batch_step {
    bool doorbell; ///< ring the doorbell now: the last item, the ring is stopped, or refused
    bool counted;  ///< the units were counted; false: refused, do not report them as completed
    /// As `doorbell`.
    [[nodiscard]] explicit constexpr operator bool() const noexcept { return doorbell; }
};

/// Most units a tx_gate lets be in flight (see "The books" in tx_gate.hpp).
inline constexpr std::uint32_t gate_max_inflight_units = 0x7FFF'FFFFU;

/// Byte (or packet) queue limits in front of a ring the producer posts to and a device drains.
template <limit_policy Policy, adaptable_ring Ring>
class tx_gate {
    using traits = ring_traits<Ring>;

public:
    using policy_type = Policy;
    using ring_type = Ring;
    using config_type = typename Policy::config_type;
    using time_point = typename Policy::time_point;
    using stats_type = gate_stats<typename Policy::stats_type>;
    static constexpr std::uint32_t max_inflight_units = gate_max_inflight_units;

    /// The policy is built in place (policies hold atomics and cannot move).
    tx_gate(const config_type& cfg, time_point now) noexcept : policy_(cfg, now) {}
    /// The policy built in place from any arguments: a policy wrapper with state of its own,
    /// e.g. `tx_gate<recording<dql<>, file_sink>, R> g(std::in_place, file_sink{f}, cfg, now)`.
    template <class... Args>
        requires std::is_nothrow_constructible_v<Policy, Args...>
    explicit tx_gate(std::in_place_t, Args&&... policy_args) noexcept
        : policy_(std::forward<Args>(policy_args)...) {}
    tx_gate(const tx_gate&) = delete;
    tx_gate& operator=(const tx_gate&) = delete;

    // ---- producer side ---------------------------------------------------------------------

    /// Report `units` just posted to `ring` (call before the device can see them, e.g. before
    /// the doorbell, so their completion cannot overtake this call). Stops the ring if the
    /// policy is now over its limit. Returns false when the units were refused (more than
    /// Policy::max_object, or more than max_inflight_units would be in flight): nothing was
    /// counted, the ring is stopped only if the policy was over its limit already (an earlier
    /// xmit_more batch), and the caller must not report those units in completed() either.
    /// Zero units are counted as nothing but still run the stop check, as the kernel does.
    /// Unlike the kernel, a gate with nothing in flight never stops the ring (no completion
    /// would come to wake it; a policy's room can be stale after reset()).
    bool sent(Ring& ring, std::uint32_t units) noexcept {
        return post(ring, units, false, [&]() noexcept { return policy_.on_queued(units); })
            .counted;
    }
    /// As sent(ring, units), also telling the policy the time (its stall detector needs it).
    bool sent(Ring& ring, std::uint32_t units, time_point now) noexcept {
        return post(ring, units, false, [&]() noexcept { return policy_.on_queued(units, now); })
            .counted;
    }
    /// Batched posting (the kernel's xmit_more). With more == true the units are counted but the
    /// stop check is skipped: a batch may overshoot the limit by its whole size, and the decision
    /// is taken on the batch's last item (more == false). `doorbell` says the caller must ring
    /// the doorbell now: always for the last item, and for an earlier one if the ring is
    /// already stopped or the units were refused (`counted` false, as sent(ring, units) refuses;
    /// a refusal also takes the stop decision, so a batch whose last item is refused is not
    /// left running over the limit).
    [[nodiscard]] gate_batch_step sent(Ring& ring, std::uint32_t units, bool more) noexcept {
        return post(ring, units, more, [&]() noexcept { return policy_.on_queued(units); });
    }
    /// As sent(ring, units, more), also telling the policy the time (dql's stall detector sees
    /// only posts reported with one).
    [[nodiscard]] gate_batch_step sent(Ring& ring, std::uint32_t units, bool more,
                                       time_point now) noexcept {
        return post(ring, units, more, [&]() noexcept { return policy_.on_queued(units, now); });
    }

    /// Units the policy would still admit (< 0: over the limit). Producer side.
    [[nodiscard]] std::int64_t available() const noexcept { return policy_.available(); }

    // ---- completion side -------------------------------------------------------------------

    /// Report `units` retired in this completion round (call once per round, not per packet, so
    /// the policy can learn). Wakes the ring if it was stopped and the policy has room again.
    /// Zero units do nothing at all. More than is in flight is a contract violation; if the
    /// handler returns, the call is refused (false) and neither the policy nor the ring changes.
    bool completed(Ring& ring, std::uint32_t units, time_point now) noexcept {
        if (units == 0)
            return true;
        if (!policy_.on_completed(units, now)) [[unlikely]]
            return false;
        c_.completed_local += units;
        c_.units_completed.store(c_.completed_local, std::memory_order_relaxed);
        // Pairs with the fence in maybe_stop(): our new limit (stored by on_completed) is
        // visible to the producer's re-check, or its stop is visible to the load below.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (policy_.available() < 0)
            return true; // still over the limit: stay stopped
        if (traits::stopped(ring)) {
            traits::wake(ring);
            bump(c_.wakeups);
        }
        return true;
    }

    /// Forget everything in flight and wake the ring, as netdev_tx_reset_queue does. Call after
    /// any flush of the ring that is not reported through completed(), and only while neither
    /// side runs (resetting with completions still pending makes them over-complete). Reset
    /// through this, not through policy().reset(), which leaves the gate's books behind.
    void reset(Ring& ring, time_point now) noexcept {
        traits::wake(ring);
        policy_.reset(now);
        p_.units_sent = p_.completed_seen = c_.completed_local = 0;
        c_.units_completed.store(0, std::memory_order_relaxed);
    }

    // ---- observation -----------------------------------------------------------------------

    [[nodiscard]] bool stopped(const Ring& ring) const noexcept { return traits::stopped(ring); }
    [[nodiscard]] const Policy& policy() const noexcept { return policy_; }
    /// The policy itself, for its completion-side setters (e.g. dql::set_max_limit).
    [[nodiscard]] Policy& policy() noexcept { return policy_; }
    /// Counters are read one by one (relaxed): each is exact, the set is not one snapshot.
    /// `policy.inflight`, where the policy's stats have it, is read as the adapters read it for
    /// any thread: never above max_inflight_units and never wrapped
    /// (detail/observed_inflight.hpp), but off by what moved during the read.
    [[nodiscard]] stats_type stats() const noexcept {
        stats_type s{p_.stops.load(std::memory_order_relaxed),
                     p_.restarts.load(std::memory_order_relaxed),
                     c_.wakeups.load(std::memory_order_relaxed),
                     p_.refused.load(std::memory_order_relaxed), policy_.stats()};
        detail::set_inflight(s.policy, detail::observed_inflight(policy_, c_.units_completed,
                                                                 max_inflight_units));
        return s;
    }

private:
    static void bump(std::atomic<std::uint64_t>& c) noexcept {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

    // The 64-bit books keep units in flight within max_inflight_units. The completion side's
    // count is read only when the cached reading (a lower bound) shows no room.
    bool books_fit(std::uint32_t units) noexcept {
        if (p_.units_sent + units - p_.completed_seen <= max_inflight_units) [[likely]]
            return true;
        p_.completed_seen = c_.units_completed.load(std::memory_order_relaxed);
        return p_.units_sent + units - p_.completed_seen <= max_inflight_units;
    }
    // Every sent(): count (`count` calls on_queued), then stop the ring if over the limit;
    // with `more`, leave the stop decision to the batch's last item. A refusal takes the
    // decision too: the caller rings the doorbell there, and if it was the batch's last item no
    // later one would take it (the kernel also checks the room after a refused dql_queued()).
    template <class Count>
    gate_batch_step post(Ring& ring, std::uint32_t units, bool more, Count count) noexcept {
        if (!books_fit(units) || !count()) [[unlikely]] {
            maybe_stop(ring);
            return {true, refuse()};
        }
        p_.units_sent += units;
        if (more)
            return {traits::stopped(ring), true};
        maybe_stop(ring);
        return {true, true};
    }

    bool refuse() noexcept {
        bump(p_.refused);
        return false;
    }

    void maybe_stop(Ring& ring) noexcept {
        // The first look by the policy's cheaper form where it has one (may_post(): dql and
        // fixed_limit read the completion side's line only when their last reading shows no
        // room); the re-check after the fence reads available() itself.
        if (detail::first_look(policy_)) [[likely]]
            return;
        // Nothing in flight by the gate's books (everything sent is completed: the consumer
        // stores its count after the policy took the completion): no completion will come to
        // wake a stopped ring. The policy's room is stale then (dql keeps adj_limit across
        // reset(), as Linux does, and past 2^31 units sent that reads as no room): leave the
        // ring running, so the next counted send's completion renews the room. A zero-unit or
        // refused send after reset() stopped the ring for good (a review, 2026-12-05).
        p_.completed_seen = c_.units_completed.load(std::memory_order_relaxed);
        if (p_.units_sent == p_.completed_seen) [[unlikely]]
            return;
        if (!traits::stopped(ring))
            bump(p_.stops);
        traits::stop(ring);
        // Pairs with the fence in completed(): either that completion sees our stop and wakes
        // the ring, or we see the room it made here.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (policy_.available() >= 0) [[unlikely]] {
            // A completion made room between our first look and the stop; it may not have seen
            // the stop, so nobody else would wake the ring.
            traits::wake(ring);
            bump(p_.restarts);
        }
    }

    Policy policy_;
    // Event counters, each on the line of the side that writes it.
    struct alignas(cache_line_size) producer_counters {
        std::uint64_t units_sent = 0;     // the gate's 64-bit books
        std::uint64_t completed_seen = 0; // last reading of c_.units_completed
        std::atomic<std::uint64_t> stops{0};
        std::atomic<std::uint64_t> restarts{0};
        std::atomic<std::uint64_t> refused{0};
    };
    struct alignas(cache_line_size) completion_counters {
        std::uint64_t completed_local = 0;
        std::atomic<std::uint64_t> units_completed{0};
        std::atomic<std::uint64_t> wakeups{0};
    };
    producer_counters p_;
    completion_counters c_;
};

} // namespace v0
} // namespace qlimits
