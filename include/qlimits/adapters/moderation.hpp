// SPDX-License-Identifier: MIT
// qlimits/adapters/moderation.hpp: connect a DIM tuner to the thing it moderates.
//
// Three pieces:
//  - moderation_hook: the user's `apply(moderation)`, e.g. a device's coalescing call, a
//    busy-poll budget, a timer. It may return void (always applied) or bool (false: not applied
//    now, e.g. a lock could not be taken; the moderator keeps the decision pending and retries,
//    instead of stalling the tuner as a driver that forgets to restart measuring would).
//  - dim_counter_traits / sample_counters(): build a dim_sample from cumulative counters a ring
//    already keeps (any integer width; truncated as Linux does).
//  - dim_moderator<Tuner, Hook, Handoff>: feeds the tuner and performs the kernel's
//    start/measure/apply handoff:
//      dim_handoff::synchronous  the hook runs inside on_sample()/on_completions(), right after
//                                the decision; measuring restarts with the next sample;
//      dim_handoff::deferred     the decision is only published; another context (a worker
//                                thread, a later point of the poll loop) calls run_pending(),
//                                which runs the hook; the next sample after that restarts
//                                measuring. Samples in between are ignored, as in Linux.
//
// Threading (deferred): on_sample()/on_completions()/set_profile() belong to one thread (the
// queue's poll loop); run_pending() may run on another. They meet through one atomic word
// (release/acquire): the decided moderation is copied before it is published, so the hook never
// reads the tuner. Synchronous: everything on one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/rdma_dim.hpp"
#include "qlimits/dim/sample.hpp"

namespace qlimits {
inline namespace v0 {

/// Something that can put a moderation into effect. `apply` returns void, or bool where false
/// means "not applied; try again later". It must be noexcept: the moderator calls it from
/// noexcept code (an exception there would terminate the program).
template <class H>
concept moderation_hook = requires(H& h, const moderation& m) {
    { h.apply(m) } noexcept;
} && (std::same_as<decltype(std::declval<H&>().apply(std::declval<const moderation&>())), void> ||
      std::same_as<decltype(std::declval<H&>().apply(std::declval<const moderation&>())), bool>);

/// A DIM tuner as the moderator drives it (net_dim, rdma_dim).
template <class T>
concept dim_tuner = requires(T& t, const T& ct) {
    { ct.current_moderation() } noexcept -> std::convertible_to<moderation>;
    { ct.pending() } noexcept -> std::same_as<bool>;
    { ct.profile_ix() } noexcept -> std::same_as<std::uint8_t>;
    { t.on_applied() } noexcept;
    typename T::profile_type;
};

// ---- samples from a ring's counters ------------------------------------------------------

/// How to read a ring's cumulative counters. The primary template uses the members
/// `event_count()`, `packet_count()`, `byte_count()` and, if present, `completion_count()`;
/// specialize it for types you cannot edit, with the same static functions taking `const T&`.
/// Counter reads must not throw (they run inside noexcept code).
template <class T>
struct dim_counter_traits {
    static constexpr std::uint64_t events(const T& r) noexcept
        requires requires(const T& x) { x.event_count(); }
    {
        return static_cast<std::uint64_t>(r.event_count());
    }
    static constexpr std::uint64_t packets(const T& r) noexcept
        requires requires(const T& x) { x.packet_count(); }
    {
        return static_cast<std::uint64_t>(r.packet_count());
    }
    static constexpr std::uint64_t bytes(const T& r) noexcept
        requires requires(const T& x) { x.byte_count(); }
    {
        return static_cast<std::uint64_t>(r.byte_count());
    }
    static constexpr std::uint64_t completions(const T& r) noexcept {
        if constexpr (requires { r.completion_count(); })
            return static_cast<std::uint64_t>(r.completion_count());
        else
            return 0;
    }
};

/// A ring whose counters dim_counter_traits can read.
template <class T>
concept dim_counted = requires(const T& r) {
    { dim_counter_traits<T>::events(r) } -> std::convertible_to<std::uint64_t>;
    { dim_counter_traits<T>::packets(r) } -> std::convertible_to<std::uint64_t>;
    { dim_counter_traits<T>::bytes(r) } -> std::convertible_to<std::uint64_t>;
    { dim_counter_traits<T>::completions(r) } -> std::convertible_to<std::uint64_t>;
};

/// A sample of the ring's counters at time `now`.
template <dim_counted Ring>
[[nodiscard]] constexpr dim_sample sample_counters(const Ring& r, std::chrono::nanoseconds now) noexcept {
    using tr = dim_counter_traits<Ring>;
    return make_dim_sample(now, tr::events(r), tr::packets(r), tr::bytes(r), tr::completions(r));
}

// ---- the handoff -------------------------------------------------------------------------

/// Where the moderation hook runs.
enum class dim_handoff : std::uint8_t { synchronous, deferred };

/// A tuner and the hook that applies its decisions.
template <dim_tuner Tuner, moderation_hook Hook, dim_handoff Handoff = dim_handoff::synchronous>
class dim_moderator {
public:
    using tuner_type = Tuner;
    using hook_type = Hook;
    static constexpr dim_handoff handoff = Handoff;

    /// Takes the hook (copied or moved) and a tuner (default: its own defaults).
    explicit dim_moderator(Hook hook, Tuner tuner = Tuner{}) noexcept(
        std::is_nothrow_move_constructible_v<Hook>)
        : tuner_(tuner), hook_(static_cast<Hook&&>(hook)) {}

    dim_moderator(const dim_moderator&) = delete; // holds an atomic in deferred mode
    dim_moderator& operator=(const dim_moderator&) = delete;

    /// Apply the tuner's current moderation now, e.g. at start-up so the device runs the
    /// index the tuner believes in. Returns what the hook returned (true for a void hook).
    bool apply_current() noexcept { return call_hook(tuner_.current_moderation()); }

    /// net DIM: one sample. Returns true when this call decided on a new moderation (applied
    /// already when synchronous; published for run_pending() when deferred).
    bool on_sample(const dim_sample& s) noexcept
        requires requires(Tuner& t, const dim_sample& x) { t.on_sample(x); }
    {
        if (!ready()) return false;
        return finish(tuner_.on_sample(s));
    }

    /// net DIM: one sample of a ring's counters.
    template <dim_counted Ring>
    bool on_ring(const Ring& ring, std::chrono::nanoseconds now) noexcept
        requires requires(Tuner& t, const dim_sample& s) { t.on_sample(s); }
    {
        return on_sample(sample_counters(ring, now));
    }

    /// RDMA DIM: one poll that reaped `completions`. Returns true as on_sample().
    bool on_completions(std::uint64_t completions, std::chrono::nanoseconds now) noexcept
        requires requires(Tuner& t, std::uint64_t n, std::chrono::nanoseconds at) {
            t.on_completions(n, at);
        }
    {
        if (!ready()) {
            // The running sample still counts this call (as Linux does during the apply phase).
            (void)tuner_.on_completions(completions, now);
            return false;
        }
        return finish(tuner_.on_completions(completions, now));
    }

    /// Deferred only: run the hook for a published decision. Returns true if a moderation was
    /// applied by this call. Safe to call from another thread than the sampling one, and when
    /// nothing is pending (returns false).
    bool run_pending() noexcept
        requires(Handoff == dim_handoff::deferred)
    {
        if (flag_.load(std::memory_order_acquire) != published) return false;
        if (!call_hook(pending_)) return false; // stays published: retried on the next call
        flag_.store(applied, std::memory_order_release);
        return true;
    }

    /// A decision is waiting for the hook (deferred: not yet run; synchronous: the hook
    /// returned false and will be retried with the next sample).
    [[nodiscard]] bool pending() const noexcept {
        if constexpr (Handoff == dim_handoff::deferred)
            return flag_.load(std::memory_order_acquire) == published;
        else
            return tuner_.pending();
    }

    /// Swap the profile table (sampling thread only). Refused (false) if invalid.
    bool set_profile(const typename Tuner::profile_type& p) noexcept { return tuner_.set_profile(p); }

    [[nodiscard]] const Tuner& tuner() const noexcept { return tuner_; }
    [[nodiscard]] Hook& hook() noexcept { return hook_; }
    [[nodiscard]] const Hook& hook() const noexcept { return hook_; }

private:
    static constexpr std::uint8_t idle = 0, published = 1, applied = 2;

    bool call_hook(const moderation& m) noexcept {
        if constexpr (std::same_as<decltype(hook_.apply(m)), bool>)
            return hook_.apply(m);
        else {
            hook_.apply(m);
            return true;
        }
    }

    // Before feeding a sample: finish a handoff that completed since, or retry one that failed.
    // Returns false while a decision still waits for its hook (the sample is then ignored, as
    // the tuner would ignore it anyway).
    bool ready() noexcept {
        if constexpr (Handoff == dim_handoff::deferred) {
            const std::uint8_t f = flag_.load(std::memory_order_acquire);
            if (f == published) return false;
            if (f == applied) {
                tuner_.on_applied();
                flag_.store(idle, std::memory_order_relaxed);
            }
            return true;
        } else {
            if (!tuner_.pending()) [[likely]]
                return true;
            if (!call_hook(tuner_.current_moderation())) return false;
            tuner_.on_applied();
            return true;
        }
    }

    bool finish(bool decided) noexcept {
        if (!decided) [[likely]]
            return false;
        if constexpr (Handoff == dim_handoff::deferred) {
            pending_ = tuner_.current_moderation();
            flag_.store(published, std::memory_order_release);
        } else {
            if (call_hook(tuner_.current_moderation())) tuner_.on_applied();
        }
        return true;
    }

    Tuner tuner_;
    Hook hook_;
    moderation pending_{};
    std::atomic<std::uint8_t> flag_{idle};
};

} // namespace v0
} // namespace qlimits
