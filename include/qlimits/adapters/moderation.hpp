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
// on_sample()/on_completions() return true when the worker must run: a new decision, or, in
// deferred mode, a decision whose hook refused, published again at the next sample. A worker
// scheduled once per true (Linux's schedule_work() pattern) therefore retries a refused hook
// too: one failed device call never leaves DIM waiting for good (virtio-net's 2024 failure, a
// failed trylock in its DIM work). A worker that polls run_pending() retries by itself.
//
// The table in force. set_profile() between the decision and the hook: the hook gets the new
// table's entry at the decided index, as Linux's work item reads the table when it runs. If the
// hook was already running with the old entry, the next sample publishes the new one.
//
// Reentry. The hook must not feed the moderator (on_sample(), on_completions(),
// apply_current()) from inside apply(): synchronous, such a call is reported through the contract
// handler and ignored (returns false, nothing changes); deferred, a decision in the handoff makes
// it a no-op (run_pending() returns false, samples are ignored while the hook runs).
//
// Threading (deferred): on_sample()/on_completions()/set_profile()/apply_current() belong to one
// thread (the queue's poll loop); run_pending() may run on any number of others. They meet
// through one atomic word: a worker claims a published decision with a compare-and-swap, so a
// decision's hook runs on one worker at a time, and the decided moderation is copied before it
// is published, so the hook never reads the tuner. Synchronous: everything on one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "qlimits/config.hpp"
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

    /// Takes the hook (copied or moved) and a tuner (default: its own defaults). A tuner whose
    /// decision is still pending is handed off as a refused one: the first sample retries it.
    explicit dim_moderator(Hook hook, Tuner tuner = Tuner{}) noexcept(
        std::is_nothrow_move_constructible_v<Hook>)
        : tuner_(tuner), hook_(static_cast<Hook&&>(hook)) {
        if constexpr (Handoff == dim_handoff::deferred) {
            if (tuner_.pending()) {
                pending_ = tuner_.current_moderation();
                flag_.store(refused, std::memory_order_relaxed);
            }
        }
    }

    dim_moderator(const dim_moderator&) = delete; // holds an atomic in deferred mode
    dim_moderator& operator=(const dim_moderator&) = delete;

    /// Apply the tuner's current moderation now, e.g. at start-up so the device runs the
    /// index the tuner believes in. Returns what the hook returned (true for a void hook).
    /// Deferred: false without calling the hook while a decision is in the handoff (its own
    /// hook call will apply the moderation), so the hook never runs on two threads at once.
    bool apply_current() noexcept {
        if constexpr (Handoff == dim_handoff::deferred) {
            // Claimed as a worker claims a decision; an applied one stays to be acknowledged.
            std::uint8_t f = flag_.load(std::memory_order_relaxed);
            if ((f != idle && f != applied) ||
                !flag_.compare_exchange_strong(f, running, std::memory_order_acquire,
                                               std::memory_order_relaxed))
                return false;
            const bool ok = call_hook(tuner_.current_moderation());
            flag_.store(f, std::memory_order_release);
            return ok;
        } else {
            if (reentered("dim_moderator::apply_current")) return false;
            return call_hook(tuner_.current_moderation());
        }
    }

    /// net DIM: one sample. Returns true when the worker must run: this call decided on a new
    /// moderation (synchronous: the hook has run, and may have refused; deferred: published for
    /// run_pending()), or (deferred) a decision whose hook refused is published again.
    bool on_sample(const dim_sample& s) noexcept
        requires requires(Tuner& t, const dim_sample& x) { t.on_sample(x); }
    {
        if constexpr (Handoff == dim_handoff::synchronous)
            if (reentered("dim_moderator::on_sample")) return false;
        const step st = ready();
        if (st != step::feed) return st == step::signal;
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
        if constexpr (Handoff == dim_handoff::synchronous)
            if (reentered("dim_moderator::on_completions")) return false;
        const step st = ready();
        if (st != step::feed) {
            // The running sample still counts this call (as Linux does during the apply phase,
            // where the tuner waits for on_applied() and cannot decide). Not while the tuner has
            // no decision pending (apply_current()'s hook feeding the moderator, which "Reentry"
            // above forbids): a decision made then could be neither published nor acknowledged,
            // and the tuner would wait for it for good (review 2026-12-04).
            if (tuner_.pending()) (void)tuner_.on_completions(completions, now);
            return st == step::signal;
        }
        return finish(tuner_.on_completions(completions, now));
    }

    /// Deferred only: run the hook for a published decision (a refused one included). Returns
    /// true if a moderation was applied by this call. Safe to call from any thread, from several
    /// at once (one claims the decision), and when nothing is pending (returns false). A refusal
    /// leaves the decision pending: the next run_pending() retries it, and so does the next
    /// sample, which publishes it again (on_sample() returns true).
    bool run_pending() noexcept
        requires(Handoff == dim_handoff::deferred)
    {
        std::uint8_t f = flag_.load(std::memory_order_relaxed);
        do {
            if (f != published && f != refused) return false;
        } while (!flag_.compare_exchange_weak(f, running, std::memory_order_acquire,
                                              std::memory_order_relaxed));
        const bool ok = call_hook(pending_);
        flag_.store(ok ? applied : refused, std::memory_order_release);
        return ok;
    }

    /// A decision is waiting for the hook (deferred: published, refused or being applied;
    /// synchronous: the hook returned false and will be retried with the next sample).
    [[nodiscard]] bool pending() const noexcept {
        if constexpr (Handoff == dim_handoff::deferred) {
            const std::uint8_t f = flag_.load(std::memory_order_acquire);
            return f == published || f == refused || f == running;
        } else {
            return tuner_.pending();
        }
    }

    /// Swap the profile table (sampling thread only). Refused (false) if invalid. Deferred: a
    /// decision not yet claimed by a worker is given the new table's entry, and the next sample
    /// returns true again (a worker that looked while the entry changed found nothing to do).
    bool set_profile(const typename Tuner::profile_type& p) noexcept {
        if (!tuner_.set_profile(p)) return false;
        if constexpr (Handoff == dim_handoff::deferred) {
            for (const std::uint8_t was : {published, refused}) {
                std::uint8_t f = was;
                // Taken back from the workers while the copy changes.
                if (flag_.compare_exchange_strong(f, idle, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
                    pending_ = tuner_.current_moderation();
                    flag_.store(was, std::memory_order_release);
                    // A worker that looked meanwhile saw nothing to do and returned; one run once
                    // per true return would not come again (review 2026-12-04: DIM then waited
                    // for good). The next sample signals the decision again (ready()).
                    if (was == published) resignal_ = true;
                    break;
                }
            }
        }
        return true;
    }

    [[nodiscard]] const Tuner& tuner() const noexcept { return tuner_; }
    [[nodiscard]] Hook& hook() noexcept { return hook_; }
    [[nodiscard]] const Hook& hook() const noexcept { return hook_; }

private:
    // The deferred handoff's states. published/refused: a decision waits for a worker (refused:
    // its hook said not now); running: a worker (or apply_current()) is in the hook; applied: the
    // hook took it, the sampling thread has yet to restart measuring.
    static constexpr std::uint8_t idle = 0, published = 1, refused = 2, running = 3, applied = 4;
    // What a sample does: feed the tuner; be ignored; be ignored and tell the caller to run the
    // worker (a refused decision published again).
    enum class step : std::uint8_t { feed, wait, signal };

    bool call_hook(const moderation& m) noexcept {
        if constexpr (Handoff == dim_handoff::synchronous) in_hook_ = true;
        bool ok = true;
        if constexpr (std::same_as<decltype(hook_.apply(m)), bool>)
            ok = hook_.apply(m);
        else
            hook_.apply(m);
        if constexpr (Handoff == dim_handoff::synchronous) in_hook_ = false;
        return ok;
    }

    // Synchronous: a call from inside the hook (see "Reentry" above) is reported and ignored.
    bool reentered(const char* where) noexcept {
        if (!in_hook_) [[likely]]
            return false;
        detail::contract_failed(where, "called from inside the moderation hook");
        return true;
    }

    // Before feeding a sample: finish a handoff that completed since, or retry one that failed.
    // The sample is ignored while a decision still waits for its hook (the tuner would ignore
    // it anyway).
    step ready() noexcept {
        if constexpr (Handoff == dim_handoff::deferred) {
            std::uint8_t f = flag_.load(std::memory_order_acquire);
            if (f == applied) {
                if (pending_ != tuner_.current_moderation()) {
                    // set_profile() ran while the hook applied the old table's entry: hand
                    // the new one off.
                    pending_ = tuner_.current_moderation();
                    flag_.store(published, std::memory_order_release);
                    return step::signal;
                }
                tuner_.on_applied();
                flag_.store(idle, std::memory_order_relaxed);
                resignal_ = false;
                return step::feed;
            }
            if (f == refused && flag_.compare_exchange_strong(f, idle, std::memory_order_acquire,
                                                              std::memory_order_relaxed)) {
                // Published again, with the table in force now: a worker scheduled per
                // decision must run again.
                pending_ = tuner_.current_moderation();
                flag_.store(published, std::memory_order_release);
                return step::signal;
            }
            if (f == published && resignal_) {
                // set_profile() took this decision back for a moment (see there).
                resignal_ = false;
                return step::signal;
            }
            return f == idle ? step::feed : step::wait;
        } else {
            if (!tuner_.pending()) [[likely]]
                return step::feed;
            if (!call_hook(tuner_.current_moderation())) return step::wait;
            tuner_.on_applied();
            return step::feed;
        }
    }

    bool finish(bool decided) noexcept {
        if (!decided) [[likely]]
            return false;
        if constexpr (Handoff == dim_handoff::deferred) {
            pending_ = tuner_.current_moderation();
            resignal_ = false; // this return says so
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
    bool in_hook_ = false; // synchronous: the hook is running (reentry check)
    // Deferred, sampling thread only: set_profile() took a published decision back for a moment,
    // so a worker may have missed it; the next sample signals it again.
    bool resignal_ = false;
};

} // namespace v0
} // namespace qlimits
