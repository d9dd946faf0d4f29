// SPDX-License-Identifier: MIT
// qlimits/capture/recorder.hpp: record what your own ring's workload was, so `qlimits-lab
// whatif` can replay it under every policy (docs/lab.md, "What-if").
//
// What a counterfactual needs, and who records it:
//   per item (producer):  when the producer wanted to send it, when it entered the ring, when
//                         the send returned, its units;
//   per completion:       when the consumer reported units taken (the take time);
//   per service:          when the consumer started and finished working on what it took, and
//                         how many items that was.
// `capturing<Policy>` is a policy decorator: put it between an adapter (channel, tx_gate) and
// your policy and it records every accepted enqueue (a zero-unit item too: it is an item the
// consumer serves) and every completion of one unit or more the adapter reports, with its own
// clock read (std::chrono::steady_clock: the policy's clock may be a coarse jiffy clock). The
// producer calls `log.wanted()` before each send and `log.sent()` after it (both optional: an
// item without them wanted and finished its send when it entered, so a replay cannot tell a
// send the policy held from the producer's own time, and whatif says so); the consumer calls
// `log.served(items, start)` after working on what it took (without it whatif needs a
// constant --work-ns). Every call also has an overload taking the time in ns since the log's
// origin, for simulators. Those times must not go back: an entry, a completion or a service
// start earlier than the one before it is recorded at the earlier record's time, so the log
// always writes a capture that read_capture() takes (a review, 2026-12-05, wrote ones it refused).
//
// Cost and limits. Nothing allocates after construction: the log's arrays are sized once
// (capture_capacity). A full array drops the records that do not fit and counts them, so a
// capture is always a prefix of what happened on each side. Each record is one clock read and
// a few stores on the calling side's own cache line. Producer calls (wanted, entered, sent)
// belong to one thread, consumer calls (completed, served) to one other; read the log (size,
// records, write_capture) only after both have stopped.
//
// Sleep and wake-up events are not seen by a policy; what they cost on your machine comes from
// `qlimits-lab calibrate` (or `param` lines you add to the capture), and the adapter's own
// counters (channel::stats()) can be added as `stat` lines for comparison.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"

namespace qlimits {
inline namespace v0 {

/// One item as the producer saw it. Times are ns since the log's origin.
struct capture_item {
    std::uint64_t wanted_ns = 0;  ///< the producer wanted to send it (before any wait)
    std::uint64_t entered_ns = 0; ///< it entered the ring (the policy counted it)
    std::uint64_t done_ns = 0;    ///< the send returned (the producer was free again)
    std::uint32_t units = 0;      ///< what it counted for
};

/// Units reported taken by the consumer (one on_completed).
struct capture_completion {
    std::uint64_t at_ns = 0;
    std::uint32_t units = 0;
};

/// The consumer worked from start to end on `items` items it had taken.
struct capture_service {
    std::uint64_t start_ns = 0;
    std::uint64_t end_ns = 0;
    std::uint32_t items = 0;
};

/// How many records of each kind a log holds (each array allocated once, at construction).
/// A record is 32, 16 and 24 bytes: the defaults take 72 MB, a second of 1 M items/s.
struct capture_capacity {
    std::size_t items = std::size_t{1} << 20;
    std::size_t completions = std::size_t{1} << 20;
    std::size_t services = std::size_t{1} << 20;
};

/// The preallocated record of one ring's workload (see the file comment).
class capture_log {
public:
    /// Allocates the arrays and writes them once, so the recording itself takes no page fault
    /// (may throw std::bad_alloc: the only allocation). The origin is the end of construction.
    explicit capture_log(const capture_capacity& cap = capture_capacity{})
        : cap_(cap), items_(std::make_unique<capture_item[]>(cap.items)),
          completions_(std::make_unique<capture_completion[]>(cap.completions)),
          services_(std::make_unique<capture_service[]>(cap.services)),
          origin_(std::chrono::steady_clock::now()) {}
    capture_log(const capture_log&) = delete;
    capture_log& operator=(const capture_log&) = delete;

    /// Nanoseconds since the log's origin.
    [[nodiscard]] std::uint64_t now() const noexcept {
        const auto d = std::chrono::steady_clock::now() - origin_;
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    }

    // ---- producer thread ----------------------------------------------------------------
    /// The producer wants to send its next item (call before try_send/send).
    void wanted() noexcept { wanted(now()); }
    void wanted(std::uint64_t t) noexcept { p_.wanted = t + 1; } // 0: none pending
    /// An item of `units` entered the ring (capturing<> calls it from on_queued).
    void entered(std::uint32_t units) noexcept { entered(units, now()); }
    void entered(std::uint32_t units, std::uint64_t t) noexcept {
        if (p_.size > 0 && t < items_[p_.size - 1].entered_ns)
            t = items_[p_.size - 1].entered_ns; // not before the item before it (file comment)
        // (wanted(2^64 - 1) wraps to none pending: harmless, as such an item enters then too.)
        const std::uint64_t w = p_.wanted != 0 && p_.wanted - 1 <= t ? p_.wanted - 1 : t;
        p_.wanted = 0;
        if (p_.size == cap_.items) {
            ++p_.dropped;
            p_.last_kept = false;
            return;
        }
        items_[p_.size++] = capture_item{w, t, t, units};
        p_.last_kept = true;
    }
    /// The send of the last item returned (call after try_send/send succeeded).
    void sent() noexcept { sent(now()); }
    void sent(std::uint64_t t) noexcept {
        if (p_.last_kept && p_.size > 0 && t >= items_[p_.size - 1].entered_ns)
            items_[p_.size - 1].done_ns = t;
        p_.last_kept = false;
    }

    // ---- consumer thread ----------------------------------------------------------------
    /// `units` reported taken (capturing<> calls it from on_completed). Zero units record
    /// nothing (a capture's completions are of one unit or more, as capturing<> reports them).
    void completed(std::uint32_t units) noexcept { completed(units, now()); }
    void completed(std::uint32_t units, std::uint64_t t) noexcept {
        if (units == 0)
            return;
        if (c_.completions == cap_.completions) {
            ++c_.dropped_completions;
            return;
        }
        if (c_.completions > 0 && t < completions_[c_.completions - 1].at_ns)
            t = completions_[c_.completions - 1].at_ns; // not before the one before it
        completions_[c_.completions++] = capture_completion{t, units};
    }
    /// The consumer finished working on `items` items it started on at `start` (from now()).
    void served(std::uint32_t items, std::uint64_t start) noexcept { served(items, start, now()); }
    void served(std::uint32_t items, std::uint64_t start, std::uint64_t end) noexcept {
        if (items == 0)
            return;
        if (c_.services == cap_.services) {
            ++c_.dropped_services;
            return;
        }
        if (c_.services > 0 && start < services_[c_.services - 1].start_ns)
            start = services_[c_.services - 1].start_ns; // not before the one before it
        services_[c_.services++] = capture_service{start, end < start ? start : end, items};
    }

    // ---- after both sides stopped -------------------------------------------------------
    [[nodiscard]] std::size_t item_count() const noexcept { return p_.size; }
    [[nodiscard]] std::size_t completion_count() const noexcept { return c_.completions; }
    [[nodiscard]] std::size_t service_count() const noexcept { return c_.services; }
    [[nodiscard]] const capture_item* items() const noexcept { return items_.get(); }
    [[nodiscard]] const capture_completion* completions() const noexcept {
        return completions_.get();
    }
    [[nodiscard]] const capture_service* services() const noexcept { return services_.get(); }
    [[nodiscard]] std::uint64_t dropped_items() const noexcept { return p_.dropped; }
    [[nodiscard]] std::uint64_t dropped_completions() const noexcept {
        return c_.dropped_completions;
    }
    [[nodiscard]] std::uint64_t dropped_services() const noexcept { return c_.dropped_services; }

private:
    struct alignas(cache_line_size) producer_side {
        std::size_t size = 0;
        std::uint64_t wanted = 0; // pending wanted time + 1
        std::uint64_t dropped = 0;
        bool last_kept = false;
    };
    struct alignas(cache_line_size) consumer_side {
        std::size_t completions = 0, services = 0;
        std::uint64_t dropped_completions = 0, dropped_services = 0;
    };
    capture_capacity cap_;
    std::unique_ptr<capture_item[]> items_;
    std::unique_ptr<capture_completion[]> completions_;
    std::unique_ptr<capture_service[]> services_;
    std::chrono::steady_clock::time_point origin_;
    producer_side p_;
    consumer_side c_;
};

/// A limit policy that forwards every call to Policy and records each accepted enqueue and
/// completion in a capture_log (none when the config's log is null). Configure it with the
/// policy's own config and the log: `capturing<dql<>>::config_type{.policy = {...}, .log = &log}`.
template <limit_policy Policy>
class capturing : public detail::forward_clock_type<Policy> {
public:
    struct config_type {
        typename Policy::config_type policy{};
        capture_log* log = nullptr;
    };
    using time_point = typename Policy::time_point;
    using stats_type = typename Policy::stats_type;
    static constexpr std::uint32_t max_object = Policy::max_object;

    capturing(const config_type& cfg, time_point now) noexcept
        : policy_(cfg.policy, now), log_(cfg.log) {}
    /// The all-zero state, for a Policy that has one (dql), with no log: what the trace
    /// replayer starts from, as through checked<> and recording<>.
    explicit capturing(zeroed_state_t z) noexcept
        requires std::is_nothrow_constructible_v<Policy, zeroed_state_t>
        : policy_(z), log_(nullptr) {}
    capturing(const capturing&) = delete;
    capturing& operator=(const capturing&) = delete;

    bool on_queued(std::uint32_t n) noexcept { return queued(policy_.on_queued(n), n); }
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        return queued(policy_.on_queued(n, now), n);
    }
    /// Forwarded where Policy has it (dql), so an adapter passes the time as it would.
    [[nodiscard]] bool wants_post_time() const noexcept
        requires asks_post_time<Policy>
    {
        return policy_.wants_post_time();
    }
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        return completed(policy_.on_completed(n, now), n);
    }
    /// A completion told an older clock reading `seen` (forwarded where Policy has it: dql), so
    /// a captured dql in `channel` on a coarse clock reads the clock as rarely as the bare one.
    template <class Now>
        requires accepts_seen_time<Policy> && std::is_nothrow_invocable_r_v<time_point, Now&>
    bool on_completed(std::uint32_t n, time_point seen, Now&& now) noexcept {
        return completed(policy_.on_completed(n, seen, now), n);
    }
    /// One take (forwarded where Policy has it: software_limit), so a captured policy in
    /// `channel` runs the path the bare one does (its takes are not completions to it) and
    /// reads the clock as rarely; recorded in the log as a completion, as before.
    template <class Now>
        requires accepts_lazy_time<Policy> && std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return completed(policy_.on_taken(n, now), n);
    }
    /// A part of a take (forwarded where Policy has it), as Policy's own.
    template <class Now>
        requires accepts_take_parts<Policy> &&
                 std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        return completed(policy_.on_taken(n, now, same_take), n);
    }
    /// A timed wake call (forwarded where Policy has it; not recorded: a replay's channel or
    /// twin makes and times its own wake calls).
    void on_wake_call(typename time_point::duration spent) noexcept
        requires accepts_wake_call<Policy>
    {
        policy_.on_wake_call(spent);
    }
    /// A timed consumer sleep (forwarded where Policy has it; not recorded, as the wake calls).
    void on_consumer_idle(typename time_point::duration spent) noexcept
        requires accepts_consumer_idle<Policy>
    {
        policy_.on_consumer_idle(spent);
    }
    void reset(time_point now) noexcept { policy_.reset(now); }
    [[nodiscard]] std::int64_t available() const noexcept { return policy_.available(); }
    [[nodiscard]] std::uint32_t limit() const noexcept { return policy_.limit(); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return policy_.inflight(); }
    [[nodiscard]] stats_type stats() const noexcept { return policy_.stats(); }

    [[nodiscard]] const Policy& inner() const noexcept { return policy_; }
    [[nodiscard]] Policy& inner() noexcept { return policy_; }
    [[nodiscard]] capture_log* log() const noexcept { return log_; }

private:
    // A zero-unit enqueue (channel and tx_gate accept them: counted as nothing) is still an
    // item in the ring, which the consumer serves and counts in served(): recorded. A
    // zero-unit completion reports nothing taken: not recorded (the format refuses it).
    bool completed(bool ok, std::uint32_t n) noexcept {
        if (ok && n != 0 && log_ != nullptr)
            log_->completed(n);
        return ok;
    }
    bool queued(bool ok, std::uint32_t n) noexcept {
        if (ok && log_ != nullptr)
            log_->entered(n);
        return ok;
    }
    Policy policy_;
    capture_log* log_;
};

} // namespace v0
} // namespace qlimits
