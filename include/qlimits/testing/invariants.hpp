// SPDX-License-Identifier: MIT
// qlimits/testing/invariants.hpp: invariant checks for limit policies, for your own fuzzers and
// property tests.
//
// checked<Policy> is itself a limit policy: put it where the policy was, drive it as usual, and
// ask failure() afterwards. It keeps its own model of what was queued and completed (modulo
// 2^32) and after every call verifies:
//   - inflight() == queued - completed (mod 2^32), and a refused call changed nothing (neither
//     inflight(), nor limit(), nor available());
//   - a completion of more than is in flight is refused (never applied);
//   - an enqueue above max_object is refused;
//   - reset() forgets what was in flight (inflight() == 0 after it);
//   - a completion that leaves nothing in flight leaves available() >= 0: a producer the
//     policy refused then would wait for a completion that never comes (channel and tx_gate
//     let a send through when nothing is in flight by their own books; a user's loop need not);
//   - may_post() (where the policy has it) answers available() >= 0 and changes no count and no
//     limit;
//   - on_unqueued(n) (where the policy has it) lowers inflight() by n, and n more than is in
//     flight changes nothing; a known-counted completion (where the policy has it) is never of
//     more than is in flight (the caller's promise);
//   - for dql: available() == adj_limit - num_queued (signed 32-bit), and after a completion
//     adj_limit == limit + num_completed (mod 2^32: the producer's room is the limit the
//     completion settled on, clamp included) and the limit lies in [min_limit, max_limit]
//     whenever min_limit <= max_limit.
// The first broken rule is kept (with the number of the call that broke it); later calls go on.
// Refused completions go through the contract handler: install a returning handler (see
// qlimits/config.hpp) when you fuzz with over-completions.
// One thread: the model of both sides is plain data, and each check reads both. Wrapping the
// policy of a channel whose producer and consumer run on two threads races (TSan reports it)
// and can report a false failure ("inflight() differs from queued - completed").
#pragma once

#include <cstdint>
#include <type_traits>

#include "qlimits/concepts.hpp"
#include "qlimits/limits/dql.hpp"

namespace qlimits {
inline namespace v0 {
namespace testing {

/// Rules a dql's raw state must satisfy at any time (after_completion: also the clamp rule).
/// Returns nullptr when all hold, else the broken rule in words.
[[nodiscard]] constexpr const char* check_dql_state(const dql_state& s,
                                                    bool after_completion) noexcept {
    if (after_completion && s.min_limit <= s.max_limit &&
        (s.limit < s.min_limit || s.limit > s.max_limit))
        return "limit outside [min_limit, max_limit] after a completion";
    if (after_completion && s.adj_limit != s.limit + s.num_completed)
        return "adj_limit != limit + num_completed after a completion";
    if (s.max_limit > dql_max_limit) return "max_limit above dql_max_limit";
    if (s.min_limit > dql_max_limit) return "min_limit above dql_max_limit";
    return nullptr;
}

/// A limit policy wrapped in invariant checks (see the file comment).
template <limit_policy Policy>
class checked : public qlimits::detail::forward_clock_type<Policy> {
public:
    using config_type = typename Policy::config_type;
    using time_point = typename Policy::time_point;
    using stats_type = typename Policy::stats_type;
    static constexpr std::uint32_t max_object = Policy::max_object;

    checked(const config_type& cfg, time_point now) noexcept : p_(cfg, now) {
        sync_model();
        verify(false);
    }
    /// The all-zero state, for a Policy that has one (dql): what the trace replayer starts from.
    explicit checked(zeroed_state_t z) noexcept
        requires std::is_nothrow_constructible_v<Policy, zeroed_state_t>
        : p_(z) {
        sync_model();
        verify(false);
    }

    bool on_queued(std::uint32_t n) noexcept {
        const look before = looks();
        return queued(n, p_.on_queued(n), before);
    }
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        const look before = looks();
        return queued(n, p_.on_queued(n, now), before);
    }
    /// Forwarded where Policy has it (dql), so an adapter passes the time as it would.
    [[nodiscard]] bool wants_post_time() const noexcept
        requires asks_post_time<Policy>
    {
        return p_.wants_post_time();
    }
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        const bool too_many = n > model_inflight();
        const look before = looks();
        return completed(n, too_many, p_.on_completed(n, now), before);
    }
    /// A completion told an older clock reading `seen`, the clock itself as `now` (forwarded
    /// where Policy has it: dql), so a checked dql in `channel` on a coarse clock is driven as
    /// dql itself is there, and its checks cover that path.
    template <class Now>
        requires accepts_seen_time<Policy> && std::is_nothrow_invocable_r_v<time_point, Now&>
    bool on_completed(std::uint32_t n, time_point seen, Now&& now) noexcept {
        const bool too_many = n > model_inflight();
        const look before = looks();
        return completed(n, too_many, p_.on_completed(n, seen, now), before);
    }
    /// A completion the caller knows was counted (forwarded where Policy has it: fixed_limit,
    /// unlimited), so a checked policy in `channel` is driven as the policy itself would be.
    /// The policy trusts the caller here; the checker does not: a completion of more than is
    /// in flight is a failure (the caller broke its promise), and the model follows the policy.
    bool on_completed(std::uint32_t n, time_point now, known_counted_t k) noexcept
        requires accepts_known_counted<Policy>
    {
        const bool too_many = n > model_inflight();
        const look before = looks();
        const bool ok = p_.on_completed(n, now, k);
        if (too_many) fail("a known-counted completion of more than is in flight");
        return completed(n, false, ok, before);
    }
    /// Take back a count whose item never left (forwarded where Policy has it: fixed_limit,
    /// unlimited), checked: it lowers inflight() by n, and n more than is in flight changes
    /// nothing (the policy reports it through the contract handler).
    void on_unqueued(std::uint32_t n) noexcept
        requires accepts_unqueue<Policy>
    {
        const bool too_many = n > model_inflight();
        const look before = looks();
        p_.on_unqueued(n);
        ++calls_;
        if (too_many) {
            if (looks() != before) fail("an on_unqueued() of more than is in flight was applied");
        } else {
            queued_ -= n;
        }
        verify(false);
    }
    /// One take, the time read only if the policy needs it (forwarded where Policy has it:
    /// software_limit), so a checked policy in `channel` reads the clock as the policy would.
    template <class Now>
        requires accepts_lazy_time<Policy> && std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        const bool too_many = n > model_inflight();
        const look before = looks();
        return completed(n, too_many, p_.on_taken(n, now), before);
    }
    /// A part of a take (forwarded where Policy has it), as Policy's own.
    template <class Now>
        requires accepts_take_parts<Policy> &&
                 std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        const bool too_many = n > model_inflight();
        const look before = looks();
        return completed(n, too_many, p_.on_taken(n, now, same_take), before);
    }
    /// A timed wake call (forwarded where Policy has it): changes no count, so nothing to check.
    void on_wake_call(typename time_point::duration spent) noexcept
        requires accepts_wake_call<Policy>
    {
        p_.on_wake_call(spent);
    }
    /// A timed consumer sleep (forwarded where Policy has it): changes no count either.
    void on_consumer_idle(typename time_point::duration spent) noexcept
        requires accepts_consumer_idle<Policy>
    {
        p_.on_consumer_idle(spent);
    }
    void reset(time_point now) noexcept {
        p_.reset(now);
        ++calls_;
        if (p_.inflight() != 0) fail("reset() kept units in flight");
        sync_model();
        verify(false);
    }

    /// The producer's cheaper look (forwarded where Policy has it: fixed_limit), checked: its
    /// answer is available() >= 0, and it changes neither inflight() nor limit().
    [[nodiscard]] bool may_post() noexcept
        requires has_may_post<Policy>
    {
        const look before = looks();
        const bool yes = p_.may_post();
        ++calls_;
        const look after = looks();
        if (yes != (after.available >= 0)) fail("may_post() differs from available() >= 0");
        if (after.limit != before.limit || after.inflight != before.inflight)
            fail("may_post() changed the limit or inflight()");
        verify(false);
        return yes;
    }
    [[nodiscard]] std::int64_t available() const noexcept { return p_.available(); }
    [[nodiscard]] std::uint32_t limit() const noexcept { return p_.limit(); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return p_.inflight(); }
    [[nodiscard]] stats_type stats() const noexcept { return p_.stats(); }

    /// The wrapped policy (to configure it or read its state).
    [[nodiscard]] Policy& inner() noexcept { return p_; }
    [[nodiscard]] const Policy& inner() const noexcept { return p_; }

    /// The first broken rule, or nullptr if none so far.
    [[nodiscard]] const char* failure() const noexcept { return failure_; }
    /// The 1-based number of the call that broke it (0: none, or the constructor).
    [[nodiscard]] std::uint64_t failed_at_call() const noexcept { return failed_call_; }
    [[nodiscard]] bool ok() const noexcept { return failure_ == nullptr; }

    /// Re-read the policy's counters into the model (after you changed them behind the
    /// checker's back, e.g. with dql::rebase()).
    void resync() noexcept { sync_model(); }

private:
    // What a caller sees of the policy: a refused call must leave all of it as it was.
    struct look {
        std::uint32_t limit, inflight;
        std::int64_t available;
        bool operator==(const look&) const = default;
    };
    [[nodiscard]] look looks() const noexcept {
        return {p_.limit(), p_.inflight(), p_.available()};
    }
    void refused(bool ok, const look& before) noexcept {
        if (!ok && looks() != before)
            fail("a refused call changed the limit, available() or inflight()");
    }
    bool completed(std::uint32_t n, bool too_many, bool ok, const look& before) noexcept {
        ++calls_;
        if (too_many && ok) fail("a completion of more than is in flight was applied");
        if (ok) completed_ += n;
        refused(ok, before);
        verify(ok);
        if (ok && model_inflight() == 0 && p_.available() < 0)
            fail("available() < 0 with nothing in flight after a completion (a refused producer "
                 "would wait for good)");
        return ok;
    }
    bool queued(std::uint32_t n, bool ok, const look& before) noexcept {
        ++calls_;
        if (n > max_object && ok) fail("an enqueue above max_object was accepted");
        if (ok) queued_ += n;
        refused(ok, before);
        verify(false);
        return ok;
    }
    [[nodiscard]] std::uint32_t model_inflight() const noexcept { return queued_ - completed_; }
    void sync_model() noexcept {
        completed_ = 0;
        queued_ = p_.inflight();
    }
    void verify(bool after_completion) noexcept {
        if (p_.inflight() != model_inflight())
            fail("inflight() differs from queued - completed (mod 2^32)");
        if constexpr (requires(const Policy& q) {
                          { q.state() } -> std::same_as<dql_state>;
                      }) {
            const dql_state s = p_.state();
            if (p_.available() != s.avail()) fail("available() != adj_limit - num_queued");
            if (const char* why = check_dql_state(s, after_completion)) fail(why);
        }
    }
    void fail(const char* why) noexcept {
        if (failure_ != nullptr) return;
        failure_ = why;
        failed_call_ = calls_;
    }

    Policy p_;
    std::uint32_t queued_ = 0;
    std::uint32_t completed_ = 0;
    std::uint64_t calls_ = 0;
    const char* failure_ = nullptr;
    std::uint64_t failed_call_ = 0;
};

static_assert(limit_policy<checked<dql<>>>);
static_assert(!accepts_lazy_time<checked<dql<>>>); // on_taken only where the policy has it
static_assert(!accepts_unqueue<checked<dql<>>> && !accepts_known_counted<checked<dql<>>>);

} // namespace testing
} // namespace v0
} // namespace qlimits
