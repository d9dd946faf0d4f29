// Issue 14: tests that kill, deterministically, the single plausible changes the suite could not
// see before (scripts/mutants.txt lists them; scripts/mutate.sh applies them one at a time).
//  - channel: admit()'s re-check of available() after storing `stopped`;
//  - channel: the per-batch completion split at the edge of the 64-bit books (2^31 - 1);
//  - testing::checked<>: every rule fed a policy that breaks exactly that rule.
// The lab's checks are in lab_checks_test.cpp, the fence handshakes in handshake_model_test.cpp.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/clock.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/testing/invariants.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using qlimits::send_status;

// A limit policy whose answers a test scripts: `negative_reads` of available() return -1 (as if
// over the limit), later ones the room left under no limit at all. It also logs completions.
struct scripted_policy {
    struct config_type {};
    using clock_type = clock_ms;
    using time_point = clock_ms::time_point;
    struct stats_type {};
    static constexpr std::uint32_t max_object = 0x7fffffffU;

    scripted_policy(const config_type&, time_point) noexcept {}
    [[nodiscard]] std::int64_t available() const noexcept {
        if (negative_reads > 0) {
            --negative_reads;
            return -1;
        }
        return std::int64_t{0xffffffffU} - inflight();
    }
    [[nodiscard]] std::uint32_t limit() const noexcept { return 0xffffffffU; }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return queued - completed; }
    bool on_queued(std::uint32_t n) noexcept {
        queued += n;
        return true;
    }
    bool on_queued(std::uint32_t n, time_point) noexcept { return on_queued(n); }
    bool on_completed(std::uint32_t n, time_point) noexcept {
        if (n > inflight()) return false;
        completed += n;
        completions.push_back(n);
        return true;
    }
    void reset(time_point) noexcept { queued = completed = 0; }
    [[nodiscard]] stats_type stats() const noexcept { return {}; }

    mutable int negative_reads = 0;
    std::uint32_t queued = 0, completed = 0;
    std::vector<std::uint32_t> completions; // test-only: allocation is fine here
};
static_assert(qlimits::limit_policy<scripted_policy>);

struct unit_item {
    std::uint32_t units = 1;
};
using unit_ring = rings::spsc_ring<unit_item, 8>;
} // namespace

template <>
struct qlimits::item_units<unit_item> {
    static std::uint32_t of(const unit_item& i) noexcept { return i.units; }
};

TEST_CASE("channel: admit() re-checks available() after storing `stopped` and goes on if room "
          "appeared") {
    // The first look sees the policy over its limit; the completion that makes room lands
    // before the re-check (as a consumer on another CPU could). Without the re-check the send
    // is refused although there is room, and the producer stays stopped.
    auto ring = std::make_unique<unit_ring>();
    qlimits::channel<unit_ring, scripted_policy> ch(*ring, {}, qlimits::consumer_wait::spin);
    ch.policy().negative_reads = 1;
    CHECK(ch.try_send(unit_item{}) == send_status::ok);
    CHECK_FALSE(ch.stopped());
    const auto s = ch.stats();
    CHECK(s.stops == 1);
    CHECK(s.restarts == 1);
    CHECK(ch.inflight() == 1);
    // Still over at the re-check: refused, and the producer stays stopped.
    ch.policy().negative_reads = 2;
    CHECK(ch.try_send(unit_item{}) == send_status::over_limit);
    CHECK(ch.stopped());
    CHECK(ch.stats().restarts == 1);
}

TEST_CASE("channel: a batch of exactly 2^31 - 1 units in flight completes as one, per batch") {
    // The books allow max_inflight_units = 2^31 - 1 in flight; a batch is split only when its
    // units would exceed that, so a batch of exactly 2^31 - 1 is one completion.
    auto ring = std::make_unique<unit_ring>();
    qlimits::channel<unit_ring, scripted_policy> ch(*ring, {}, qlimits::consumer_wait::spin);
    CHECK(ch.try_send(unit_item{0x7ffffffeU}) == send_status::ok);
    CHECK(ch.try_send(unit_item{1}) == send_status::ok);
    CHECK(ch.try_send(unit_item{1}) == send_status::over_limit); // 2^31 would not fit the books
    std::vector<unit_item> out(4);
    CHECK(ch.try_receive_batch(std::span<unit_item>(out), qlimits::completion::per_batch) == 2);
    REQUIRE(ch.policy().completions.size() == 1);
    CHECK(ch.policy().completions[0] == 0x7fffffffU);
    CHECK(ch.inflight() == 0);
}

TEST_CASE("tx_gate: exactly 2^31 - 1 units fit the books, one more is refused") {
    struct flag {
        bool off = false;
        [[nodiscard]] bool stopped() const noexcept { return off; }
        void stop() noexcept { off = true; }
        void wake() noexcept { off = false; }
    } ring;
    qlimits::tx_gate<scripted_policy, flag> gate({}, clock_ms::time_point{});
    CHECK(gate.sent(ring, 0x7ffffffeU));
    CHECK(gate.sent(ring, 1));
    CHECK_FALSE(gate.sent(ring, 1));
    CHECK(gate.stats().refused == 1);
    CHECK(gate.policy().inflight() == 0x7fffffffU);
}

namespace {
// dql with one rule of checked<> broken on purpose: the policy lies in state() or available().
enum class breaks { nothing, available, clamp, max_limit, min_limit, inflight, oversize, room, reset };
template <breaks B>
struct broken_dql : qlimits::dql<clock_ms> {
    using base = qlimits::dql<clock_ms>;
    using base::base;
    [[nodiscard]] std::int64_t available() const noexcept {
        return base::available() + (B == breaks::available ? 1 : 0) +
               (B == breaks::room && completed_once ? 1 : 0);
    }
    // reset: forgets nothing in flight (queues it again).
    void reset(time_point now) noexcept {
        const std::uint32_t kept = base::inflight();
        base::reset(now);
        if (B == breaks::reset) (void)base::on_queued(kept, now);
    }
    [[nodiscard]] std::uint32_t inflight() const noexcept {
        return base::inflight() + (B == breaks::inflight && completed_once ? 1U : 0U);
    }
    // oversize: accepts an enqueue above max_object (counting it as max_object units).
    using base::on_queued;
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        if (B == breaks::oversize && n > max_object) {
            (void)base::on_queued(max_object, now);
            return true;
        }
        return base::on_queued(n, now);
    }
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        completed_once = true;
        return base::on_completed(n, now);
    }
    [[nodiscard]] qlimits::dql_state state() const noexcept {
        qlimits::dql_state s = base::state();
        if (B == breaks::clamp && completed_once) s.limit = s.max_limit + 1;
        // room: adj_limit (and available(), consistently) one above limit + num_completed.
        if (B == breaks::room && completed_once) s.adj_limit += 1;
        if (B == breaks::max_limit) s.max_limit = qlimits::dql_max_limit + 1;
        if (B == breaks::min_limit) s.min_limit = qlimits::dql_max_limit + 1;
        return s;
    }
    bool completed_once = false;
};

template <breaks B>
const char* first_failure(std::uint64_t* at = nullptr) {
    qlimits::testing::checked<broken_dql<B>> c({.max_limit = 100000}, clock_ms::time_point{});
    (void)c.on_queued(1500, clock_ms::time_point{});
    (void)c.on_queued(1500, clock_ms::time_point{});
    (void)c.on_completed(1500, clock_ms::time_point{std::chrono::milliseconds{1}});
    if (at != nullptr) *at = c.failed_at_call();
    return c.failure();
}
bool same(const char* a, const char* b) { return a != nullptr && b != nullptr && std::strcmp(a, b) == 0; }
} // namespace

TEST_CASE("checked<>: each rule catches a policy that breaks exactly it") {
    CHECK(first_failure<breaks::nothing>() == nullptr);
    std::uint64_t at = 99;
    CHECK(same(first_failure<breaks::available>(&at), "available() != adj_limit - num_queued"));
    CHECK(at == 0); // already at construction
    CHECK(same(first_failure<breaks::clamp>(&at),
               "limit outside [min_limit, max_limit] after a completion"));
    CHECK(at == 3); // the completion, not the enqueues before it
    CHECK(same(first_failure<breaks::max_limit>(), "max_limit above dql_max_limit"));
    CHECK(same(first_failure<breaks::min_limit>(), "min_limit above dql_max_limit"));
    CHECK(same(first_failure<breaks::inflight>(&at),
               "inflight() differs from queued - completed (mod 2^32)"));
    CHECK(at == 3);
    CHECK(same(first_failure<breaks::room>(&at),
               "adj_limit != limit + num_completed after a completion"));
    CHECK(at == 3);
    {
        qlimits::testing::checked<broken_dql<breaks::reset>> r({}, clock_ms::time_point{});
        (void)r.on_queued(1500, clock_ms::time_point{});
        r.reset(clock_ms::time_point{});
        CHECK(same(r.failure(), "reset() kept units in flight"));
        CHECK(r.failed_at_call() == 2);
    }
    qlimits::testing::checked<broken_dql<breaks::oversize>> c({}, clock_ms::time_point{});
    (void)c.on_queued(qlimits::dql_max_object + 1, clock_ms::time_point{});
    CHECK(same(c.failure(), "an enqueue above max_object was accepted"));
    CHECK(c.failed_at_call() == 1);
}

namespace {
// A policy that refuses every send: with nothing in flight no completion comes to give room.
struct refuses_all : qlimits::fixed_limit<clock_ms> {
    using fixed_limit::fixed_limit;
    [[nodiscard]] std::int64_t available() const noexcept { return -1; }
};
} // namespace

TEST_CASE("checked<>: no room with nothing in flight after a completion is flagged") {
    // Review 2026-12-06 ("checked<> does not flag a policy that refuses everything", noticed at
    // stops 49-51): a loop that stops on available() < 0 would wait for good.
    qlimits::testing::checked<refuses_all> c({.limit = 10}, clock_ms::time_point{});
    CHECK(c.ok()); // at construction nothing is owed yet: the rule is after a completion
    (void)c.on_queued(2);
    (void)c.on_completed(1, clock_ms::time_point{});
    CHECK(c.ok()); // one still in flight: its completion can still give room
    (void)c.on_completed(1, clock_ms::time_point{});
    CHECK(same(c.failure(), "available() < 0 with nothing in flight after a completion (a "
                            "refused producer would wait for good)"));
    CHECK(c.failed_at_call() == 3);
    // The library's own policies keep room at zero in flight: fixed_limit at limit 0 too.
    qlimits::testing::checked<qlimits::fixed_limit<clock_ms>> z({.limit = 0}, clock_ms::time_point{});
    (void)z.on_queued(3);
    (void)z.on_completed(3, clock_ms::time_point{});
    CHECK(z.ok());
}

TEST_CASE("checked<>: the clamp rule holds only after a completion and only when min <= max") {
    using qlimits::testing::check_dql_state;
    qlimits::dql_state s{};
    // After a completion the producer's room is the settled limit: adj_limit = limit + completed.
    const auto with_limit = [&s](std::uint32_t limit) {
        s.limit = limit;
        s.adj_limit = limit + s.num_completed;
        return s;
    };
    s.num_completed = 4'294'967'000U; // the rule is modulo 2^32
    s.min_limit = 10;
    s.max_limit = 20;
    CHECK(check_dql_state(with_limit(21), false) == nullptr);
    CHECK(check_dql_state(with_limit(21), true) != nullptr);
    CHECK(check_dql_state(with_limit(9), true) != nullptr);
    CHECK(check_dql_state(with_limit(10), true) == nullptr);
    CHECK(check_dql_state(with_limit(20), true) == nullptr);
    s.min_limit = 30; // min > max: the kernel applies max last; no clamp rule then
    CHECK(check_dql_state(with_limit(20), true) == nullptr);
    s.min_limit = 0;
    s.max_limit = qlimits::dql_max_limit;
    CHECK(check_dql_state(with_limit(qlimits::dql_max_limit), true) == nullptr);
}

TEST_CASE("checked<>: after a completion adj_limit is the settled limit plus the completions") {
    // Review 2026-12-03: a dql that stored adj_limit from the limit before its clamp gave the
    // producer room beyond max_limit, and no test saw it (available() read the same adj_limit).
    using qlimits::testing::check_dql_state;
    qlimits::dql_state s{};
    s.min_limit = 0;
    s.max_limit = 100;
    s.num_completed = 500;
    s.limit = 100;
    s.adj_limit = 600;
    CHECK(check_dql_state(s, true) == nullptr);
    s.adj_limit = 650; // room from an unclamped limit of 150
    CHECK(same(check_dql_state(s, true), "adj_limit != limit + num_completed after a completion"));
    CHECK(check_dql_state(s, false) == nullptr); // set_limit() between rounds may leave it so
}

namespace {
// A ring holding items whose try_pop fails the first `pop_failures` times (an MPMC ring under
// contention, say): the consumer must retry, not sleep, since it knows an item is in it.
struct stubborn_ring {
    using value_type = std::uint64_t;
    rings::spsc_ring<std::uint64_t, 8> inner;
    int pop_failures = 0;
    int push_failures = 0; // the same on the producer's side, with room in the ring
    bool try_push(std::uint64_t&& v) noexcept {
        if (push_failures > 0) {
            --push_failures;
            return false;
        }
        return inner.try_push(std::move(v));
    }
    bool try_pop(std::uint64_t& v) noexcept {
        if (pop_failures > 0) {
            --pop_failures;
            return false;
        }
        return inner.try_pop(v);
    }
};
} // namespace

TEST_CASE("channel: a consumer whose pops fail spuriously with an item in the ring does not sleep") {
    // Kills the mutant chan-known-empty: with it the consumer, past its spin (256 pauses),
    // sleeps on a ring it knows holds an item; no producer will ring the doorbell again, so
    // receive() waits for the deadline and fails. One thread: the item is sent before
    // receive() is called.
    stubborn_ring ring;
    ring.pop_failures = 1000; // well past the spin before a sleep
    qlimits::channel<stubborn_ring, qlimits::unlimited<>> ch(ring);
    REQUIRE(ch.try_send(std::uint64_t{42}) == send_status::ok);
    std::uint64_t out = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
    REQUIRE(ch.receive(out, deadline));
    CHECK(out == 42);
    CHECK(ring.pop_failures == 0);
    CHECK(ch.stats().consumer_sleeps == 0);
}

TEST_CASE("channel: a producer whose pushes fail spuriously on an empty ring does not sleep") {
    // Kills the mutant chan-room-guard: with it send(), past its spin (256 pauses), waits for
    // a pop to free a slot in a ring that holds nothing, so no pop will ever come: it sleeps
    // to the deadline and times out. One thread: nothing else touches the channel.
    stubborn_ring ring;
    ring.push_failures = 1000; // well past the spin before a wait
    qlimits::channel<stubborn_ring, qlimits::unlimited<>> ch(ring);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
    REQUIRE(ch.send(std::uint64_t{7}, deadline) == send_status::ok);
    CHECK(ring.push_failures == 0);
    CHECK(ch.stats().producer_waits == 0);
    std::uint64_t out = 0;
    REQUIRE(ch.try_receive(out));
    CHECK(out == 7);
}

TEST_CASE("channel: receive() after close() retries a pop that fails with items still in the ring") {
    // Kills the mutant chan-close-drain: with it a receive() whose first pop fails spuriously
    // sees `closed` and returns false, dropping the items the producer sent before closing.
    stubborn_ring ring;
    qlimits::channel<stubborn_ring, qlimits::unlimited<>> ch(ring);
    REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    REQUIRE(ch.try_send(std::uint64_t{2}) == send_status::ok);
    ch.close();
    ring.pop_failures = 3;
    std::uint64_t out = 0;
    REQUIRE(ch.receive(out));
    CHECK(out == 1);
    ring.pop_failures = 3;
    REQUIRE(ch.receive(out));
    CHECK(out == 2);
    CHECK_FALSE(ch.receive(out)); // closed and drained
    CHECK(ch.inflight() == 0);
}

TEST_CASE("asymmetric barrier: heavy() reports a membarrier that ran as done") {
    // Kills the mutant barrier-heavy (success and failure swapped): every consumer sleep would
    // then count a membarrier failure and switch its channel to fences for good.
    if (!qlimits::detail::asymmetric_barrier::available())
        return; // no membarrier here (or refused): heavy() must fail, tested in tests/seccomp
    CHECK(qlimits::detail::asymmetric_barrier::heavy());
    // Through a channel: a consumer that sleeps once (an empty ring, a short deadline) keeps
    // the asymmetric pair.
    rings::spsc_ring<std::uint64_t, 8> ring;
    qlimits::channel<rings::spsc_ring<std::uint64_t, 8>, qlimits::unlimited<>> ch(ring);
    if (ch.stats().barrier != qlimits::barrier_in_use::membarrier)
        return; // QLIMITS_FORCE_SYMMETRIC_BARRIER build
    std::uint64_t out = 0;
    // Again if a stall longer than the deadline came before the wait could sleep (a loaded VM).
    for (int k = 0; k < 10 && ch.stats().consumer_sleeps == 0; ++k)
        CHECK_FALSE(
            ch.receive(out, std::chrono::steady_clock::now() + std::chrono::milliseconds{20}));
    CHECK(ch.stats().consumer_sleeps >= 1);
    CHECK(ch.stats().membarrier_failures == 0);
    CHECK(ch.stats().barrier == qlimits::barrier_in_use::membarrier);
}

#if defined(__linux__)
TEST_CASE("coarse clock: tells the time jiffy_clock tells, at most a kernel tick behind") {
    // Kills the mutant coarse-clock-unit (nanoseconds read as microseconds: the sub-second
    // part up to 1000 s off). The coarse clock is CLOCK_MONOTONIC updated once per kernel tick
    // (detail/coarse_clock.hpp): never ahead of the fine one, behind by at most one tick
    // (<= 4 ms); 50 ms of slack keeps a descheduled test thread from failing it.
    using adapted = qlimits::detail::adapter_clock<qlimits::jiffy_clock>;
    static_assert(adapted::coarse);
    for (int i = 0; i < 100; ++i) {
        const auto before = qlimits::jiffy_clock::now();
        const auto coarse = adapted::now();
        const auto after = qlimits::jiffy_clock::now();
        CHECK(coarse <= after);
        CHECK(coarse + std::chrono::milliseconds{50} >= before);
    }
}
#endif
