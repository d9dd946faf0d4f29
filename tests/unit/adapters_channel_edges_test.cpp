// Unit tests of the channel and tx_gate findings of issue 8 that one or two threads can show in
// a moment: books beyond 2^32 units, an empty batch span, the live policy, deadline waits that
// sleep, close() from a third thread, and the debug check of the one-producer/one-consumer
// rule. The long two-thread proofs (spurious ring failures, membarrier denied) are in
// tests/stress/ and tests/seccomp/.
//
// This file turns the one-producer/one-consumer check on whatever the build type (every channel
// type here is built from types local to this file, so no other translation unit instantiates
// them without the check).
#define QLIMITS_CHECK_SPSC 1

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../../examples/rings/locked_deque.hpp"
#include "../../examples/rings/spsc_ring.hpp"
#include "contract_probe.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/software_limit.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using qlimits::send_status;
using namespace std::chrono_literals;

// Every item counts for max_object units (a 256 MiB "packet"): 9 of them exceed 2^31 units.
struct huge_ring {
    using value_type = std::uint64_t;
    rings::spsc_ring<std::uint64_t, 1024> inner;
    bool try_push(std::uint64_t&& v) noexcept { return inner.try_push(std::move(v)); }
    bool try_pop(std::uint64_t& v) noexcept { return inner.try_pop(v); }
    static std::uint32_t units(const std::uint64_t&) noexcept { return qlimits::fixed_max_object; }
};

struct flag_ring { // a NIC queue's stop flag, for tx_gate
    bool off = false;
    [[nodiscard]] bool stopped() const noexcept { return off; }
    void stop() noexcept { off = true; }
    void wake() noexcept { off = false; }
};

struct item {
    std::uint64_t seq = 0;
    std::uint32_t bytes = 1;
};
using item_ring = rings::spsc_ring<item, 8>;
} // namespace

template <>
struct qlimits::item_units<item> {
    static std::uint32_t of(const item& p) noexcept { return p.bytes; }
};

TEST_CASE("channel: max_object items never wrap the books; the 9th is refused with over_limit") {
    // 8 x (2^32/16 - 1) = 2^31 - 8 units fit; a 9th would put more than 2^31 - 1 in flight.
    test::contract_probe probe;
    auto ring = std::make_unique<huge_ring>();
    qlimits::channel<huge_ring, qlimits::unlimited<clock_ms>> ch(*ring);
    int ok = 0;
    send_status last = send_status::ok;
    for (std::uint64_t i = 0; i < 1024 && last == send_status::ok; ++i)
        if ((last = ch.try_send(std::uint64_t{i})) == send_status::ok)
            ++ok;
    CHECK(ok == 8);
    CHECK(last == send_status::over_limit);
    CHECK(ch.stopped());
    CHECK(ch.inflight() == 8U * qlimits::fixed_max_object);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        CHECK(ch.try_receive(v));
    CHECK(probe.count() == 0); // no false over-completion
    CHECK(ch.inflight() == 0);
    CHECK_FALSE(ch.stopped());
    CHECK(ch.try_send(std::uint64_t{99}) == send_status::ok);
}

TEST_CASE("channel: max_object items through a 1024-slot ring, two threads, blocking") {
    test::contract_probe probe;
    auto ring = std::make_unique<huge_ring>();
    qlimits::channel<huge_ring, qlimits::unlimited<clock_ms>> ch(*ring);
    constexpr std::uint64_t n = 20000;
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n; ++i)
            if (ch.send(std::uint64_t{i}) != send_status::ok)
                return;
    });
    std::uint64_t got = 0, v = 0, order_errors = 0;
    std::vector<std::uint64_t> batch(64);
    while (got < n) {
        if (got % 2 == 0) {
            if (!ch.receive(v))
                break;
            order_errors += v != got;
            ++got;
        } else {
            const std::size_t k = ch.receive_batch(std::span<std::uint64_t>(batch));
            for (std::size_t j = 0; j < k; ++j)
                order_errors += batch[j] != got + j;
            got += k;
        }
    }
    producer.join();
    CHECK(got == n);
    CHECK(order_errors == 0);
    CHECK(probe.count() == 0);
    CHECK(ch.inflight() == 0);
}

TEST_CASE("channel: a third thread's inflight() stays within the cap, max_object items streaming") {
    // A review (2026-12-06): inflight() from a third thread read the policy's completed count,
    // then its posted count, and what moved between the two reads added up: 21 of 7.6e8 readings
    // above 2^31 - 1, up to 4,026,531,825 (15 items where 8 fit), and a reader paused over 2^32
    // units saw the difference wrap. Now read again while the completions moved (or clamped).
    test::contract_probe probe;
    auto ring = std::make_unique<huge_ring>();
    qlimits::channel<huge_ring, qlimits::unlimited<clock_ms>> ch(*ring);
    constexpr std::uint64_t n = 20000;
    std::atomic<bool> done{false};
    std::uint64_t reads = 0, above = 0, disagree = 0;
    std::thread monitor([&] {
        while (!done.load(std::memory_order_relaxed)) {
            const auto s = ch.stats();
            above += ch.inflight() > qlimits::channel_max_inflight_units;
            above += s.inflight > qlimits::channel_max_inflight_units;
            disagree += s.policy.inflight != s.inflight;
            ++reads;
        }
    });
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n; ++i)
            if (ch.send(std::uint64_t{i}) != send_status::ok)
                return;
    });
    std::uint64_t got = 0, v = 0;
    while (got < n && ch.receive(v)) ++got;
    producer.join();
    done.store(true, std::memory_order_relaxed);
    monitor.join();
    CHECK(got == n);
    CHECK(reads > 0);
    CHECK(above == 0);
    CHECK(disagree == 0); // stats() reports one reading in both places
    CHECK(probe.count() == 0);
}

namespace {
// A policy whose inflight() returns scripted readings, moving the adapter's completed count
// where the script says a completion happened during that read.
struct scripted_inflight {
    std::atomic<std::uint64_t>* completed = nullptr;
    std::vector<std::uint32_t> readings;
    std::vector<bool> moved;
    mutable std::size_t calls = 0;
    std::uint32_t inflight() const noexcept {
        const std::size_t k = calls < readings.size() ? calls : readings.size() - 1;
        ++calls;
        if (moved[k]) completed->fetch_add(1, std::memory_order_relaxed);
        return readings[k];
    }
};
} // namespace

TEST_CASE("observed_inflight: read again while completions moved; never above the cap") {
    std::atomic<std::uint64_t> completed{0};
    constexpr std::uint32_t cap = qlimits::channel_max_inflight_units;
    // A wrapped reading taken while a completion moved, then a quiet one: the quiet one.
    scripted_inflight wrapped{&completed, {4'026'531'825U, 5}, {true, false}};
    CHECK(qlimits::detail::observed_inflight(wrapped, completed, cap) == 5U);
    CHECK(wrapped.calls == 2);
    // Quiet but above the cap (posts raced in): read again, then clamped.
    scripted_inflight high{&completed, {cap + 7U}, {false}};
    CHECK(qlimits::detail::observed_inflight(high, completed, cap) == cap);
    CHECK(high.calls == 4);
    // Completions move at every read (a side that never pauses): the last reading, within cap.
    scripted_inflight busy{&completed, {9, 8, 7, 6}, {true, true, true, true}};
    CHECK(qlimits::detail::observed_inflight(busy, completed, cap) == 6U);
    // A quiet reading within the cap is taken at once.
    scripted_inflight quiet{&completed, {3}, {false}};
    CHECK(qlimits::detail::observed_inflight(quiet, completed, cap) == 3U);
    CHECK(quiet.calls == 1);
}

TEST_CASE("tx_gate: xmit_more batches of max_object units are refused past 2^31 - 1, not wrapped") {
    test::contract_probe probe;
    flag_ring ring;
    qlimits::tx_gate<qlimits::unlimited<clock_ms>, flag_ring> gate({}, clock_ms::time_point{});
    int counted = 0, refused = 0;
    for (int i = 0; i < 20; ++i) {
        const auto step = gate.sent(ring, qlimits::fixed_max_object, i != 19);
        if (step.counted) {
            ++counted;
        } else {
            ++refused;
            CHECK(step.doorbell); // the batch cannot continue
        }
    }
    CHECK(counted == 8);
    CHECK(refused == 12);
    CHECK(gate.stats().refused == 12);
    CHECK(gate.policy().inflight() == 8U * qlimits::fixed_max_object);
    CHECK(gate.stats().policy.inflight == 8U * qlimits::fixed_max_object);
    for (int i = 0; i < counted; ++i)
        CHECK(gate.completed(ring, qlimits::fixed_max_object, clock_ms::time_point{}));
    CHECK(probe.count() == 0);
    CHECK(gate.policy().inflight() == 0);
    CHECK(gate.sent(ring, qlimits::fixed_max_object)); // room again
}

TEST_CASE("channel: receive_batch with an empty span returns 0 at once, without waiting") {
    item_ring ring;
    qlimits::channel<item_ring, qlimits::unlimited<clock_ms>> ch(ring);
    REQUIRE(ch.try_send(item{1}) == send_status::ok);
    std::thread closer([&] {
        std::this_thread::sleep_for(500ms);
        ch.close();
    });
    CHECK(ch.receive_batch(std::span<item>{}) == 0);
    CHECK_FALSE(ch.closed()); // it did not wait for close()
    CHECK(ch.receive_batch(std::span<item>{}, qlimits::completion::per_item,
                           std::chrono::steady_clock::now() + 10s) == 0);
    CHECK_FALSE(ch.closed());
    closer.join();
    item out;
    CHECK(ch.receive(out)); // the item is still there
    CHECK(out.seq == 1);
}

TEST_CASE("channel: the live policy's limit can be changed (non-const policy())") {
    item_ring ring;
    qlimits::channel<item_ring, qlimits::fixed_limit<clock_ms>> ch(ring, {.limit = 1000});
    CHECK(ch.try_send(item{1, 600}) == send_status::ok);
    CHECK(ch.try_send(item{2, 600}) == send_status::ok);
    CHECK(ch.try_send(item{3, 600}) == send_status::over_limit);
    CHECK(ch.policy().set_limit(5000)); // the consumer side's setter
    CHECK(ch.try_send(item{3, 600}) == send_status::ok);
    CHECK(ch.limit() == 5000);
}

TEST_CASE("channel: a stop that room undid without a wake-up is cleared by the next send") {
    // Review 2026-12-03: after an over_limit try_send and a raised limit, sends went on while
    // stopped() still said so, the next real stop was not counted, and the consumer "woke" a
    // producer that was running.
    item_ring ring;
    qlimits::channel<item_ring, qlimits::fixed_limit<clock_ms>> ch(ring, {.limit = 1000});
    CHECK(ch.try_send(item{1, 600}) == send_status::ok);
    CHECK(ch.try_send(item{2, 600}) == send_status::ok);
    CHECK(ch.try_send(item{3, 600}) == send_status::over_limit);
    CHECK(ch.stopped());
    CHECK(ch.stats().stops == 1);
    CHECK(ch.policy().set_limit(5000)); // room without a completion
    CHECK(ch.try_send(item{3, 600}) == send_status::ok);
    CHECK_FALSE(ch.stopped());
    CHECK_FALSE(ch.stats().stopped);
    CHECK(ch.policy().set_limit(1000));
    CHECK(ch.try_send(item{4, 600}) == send_status::over_limit); // 1800 in flight
    CHECK(ch.stats().stops == 2); // the second stop is counted
    CHECK(ch.policy().set_limit(5000));
    CHECK(ch.try_send(item{4, 600}) == send_status::ok);
    item out;
    CHECK(ch.try_receive(out));
    CHECK(ch.stats().producer_wakeups == 0); // the producer was running: nobody to wake
}

TEST_CASE("channel: waits with a deadline sleep on the futex instead of polling") {
    item_ring ring;
    qlimits::channel<item_ring, qlimits::unlimited<clock_ms>> ch(ring);
    item out;
    // A stall of the thread longer than the deadline before its wait (a loaded VM: a review of
    // 2026-12-06 stalled threads 30 ms at a time) ends the wait before it sleeps: try again.
    for (int k = 0; k < 10 && ch.stats().consumer_sleeps == 0; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        CHECK_FALSE(ch.receive(out, t0 + 20ms));
        CHECK(std::chrono::steady_clock::now() >= t0 + 20ms); // never before the deadline
    }
    CHECK(ch.stats().consumer_sleeps >= 1);
    for (std::uint64_t i = 0; i < 8; ++i)
        REQUIRE(ch.try_send(item{i}) == send_status::ok);
    for (int k = 0; k < 10 && ch.stats().producer_waits == 0; ++k) {
        const auto t1 = std::chrono::steady_clock::now();
        CHECK(ch.send(item{8}, t1 + 20ms) == send_status::timeout);
        CHECK(std::chrono::steady_clock::now() >= t1 + 20ms);
    }
    CHECK(ch.stats().producer_waits >= 1);
    CHECK_FALSE(ch.stats().waiting_for_room); // the timed-out wait was withdrawn
    // A sleeping deadline wait is woken by the other side, long before its deadline.
    for (std::uint64_t i = 0; i < 8; ++i)
        REQUIRE(ch.try_receive(out));
    std::thread producer([&] {
        std::this_thread::sleep_for(20ms);
        (void)ch.send(item{42});
    });
    CHECK(ch.receive(out, std::chrono::steady_clock::now() + 60s));
    CHECK(out.seq == 42);
    producer.join();
}

TEST_CASE("channel: close() from a third thread loses nothing if the consumer drains after") {
    // The documented rule: receive() may return false while a send that was past its closed
    // check is still landing; try_receive() after the producer is done finds it.
    for (int round = 0; round < 200; ++round) {
        auto ring = std::make_unique<rings::spsc_ring<item, 64>>();
        qlimits::channel<rings::spsc_ring<item, 64>, qlimits::unlimited<clock_ms>> ch(*ring);
        std::atomic<std::uint64_t> sent{0};
        std::thread producer([&] {
            for (std::uint64_t i = 0;; ++i) {
                const send_status r = ch.send(item{i});
                if (r != send_status::ok)
                    return;
                sent.fetch_add(1, std::memory_order_relaxed);
            }
        });
        std::thread closer([&] {
            std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 8)));
            ch.close();
        });
        std::uint64_t got = 0;
        item out;
        while (ch.receive(out))
            ++got;
        closer.join();
        producer.join();
        while (ch.try_receive(out))
            ++got;
        CHECK(got == sent.load());
        CHECK(ch.inflight() == 0);
    }
}

namespace {
// Runs `side` on two threads at once until the contract handler has heard of it (or 10 s).
template <class Side>
void run_twice_at_once(const test::contract_probe& probe, Side side) {
    std::atomic<bool> stop{false};
    const auto loop = [&] {
        for (std::uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i)
            side(i);
    };
    std::thread a(loop), b(loop);
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (probe.count() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    stop.store(true);
    a.join();
    b.join();
}
} // namespace

TEST_CASE("channel: two producers at once are reported through the contract handler") {
    test::contract_probe probe;
    rings::locked_deque<item> ring; // thread-safe, so only the channel's rule is broken
    ring.capacity = 1U << 20;
    qlimits::channel<rings::locked_deque<item>, qlimits::unlimited<clock_ms>> ch(ring);
    run_twice_at_once(probe, [&](std::uint64_t i) { (void)ch.try_send(item{i}); });
    CHECK(probe.count() > 0);
    CHECK(std::string(probe.last().where) == "channel::try_send");
}

TEST_CASE("channel: two consumers at once are reported, naming the method") {
    test::contract_probe probe;
    rings::locked_deque<item> ring;
    qlimits::channel<rings::locked_deque<item>, qlimits::unlimited<clock_ms>> ch(ring);
    run_twice_at_once(probe, [&](std::uint64_t) {
        item out;
        (void)ch.try_receive(out);
    });
    CHECK(probe.count() > 0);
    CHECK(std::string(probe.last().where) == "channel::try_receive");
}

TEST_CASE("channel: a refused try_send and an empty try_receive back off, doubling to 16 pauses") {
    // Issue 8, finding 9: a producer retrying on a full ring (and a consumer polling an empty
    // one) pulled the other side's cache lines across on every try. Each consecutive failure
    // now pauses 4, 8, then 16 times (every call stops doubling there: the cap is the latency
    // a side adds once the other answers); a success starts the count again. (Runs of one or
    // two successes here: no slip, see the next test.)
    using small_ring = rings::spsc_ring<std::uint64_t, 2>;
    small_ring ring;
    qlimits::channel<small_ring, qlimits::unlimited<clock_ms>> ch(ring, {},
                                                                   qlimits::consumer_wait::spin);
    std::uint64_t v = 0;
    const std::uint64_t expect[] = {4, 12, 28, 44, 60}; // running totals
    for (const std::uint64_t total : expect) {
        CHECK_FALSE(ch.try_receive(v));
        CHECK(ch.stats().consumer_backoff_pauses == total);
    }
    REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    REQUIRE(ch.try_send(std::uint64_t{2}) == send_status::ok);
    for (const std::uint64_t total : expect) {
        CHECK(ch.try_send(std::uint64_t{3}) == send_status::ring_full);
        CHECK(ch.stats().producer_backoff_pauses == total);
    }
    // A pop resets the consumer's streak, a push the producer's: the next failures pause 4.
    REQUIRE(ch.try_receive(v));
    REQUIRE(ch.try_send(std::uint64_t{3}) == send_status::ok);
    CHECK(ch.try_send(std::uint64_t{4}) == send_status::ring_full);
    CHECK(ch.stats().producer_backoff_pauses == 64);
    REQUIRE(ch.try_receive(v));
    REQUIRE(ch.try_receive(v));
    CHECK_FALSE(ch.try_receive(v));
    CHECK(ch.stats().consumer_backoff_pauses == 64);
    CHECK(ch.stats().ring_full == 6);
    // receive() backs off between its polls too, with the same cap: inside a wait the doubling
    // went on to 128 pauses until 2026-12-02, and a one-item ping-pong's round trip took
    // 2.7-3.3x as long (docs/benchmarks.md "Back-off cap"). The wait polls (the streak is 1
    // on entry: 8, then 16 each); a deadline already past polls once per call, 16 pauses.
    const std::uint64_t before = ch.stats().consumer_backoff_pauses;
    CHECK_FALSE(ch.receive(v, std::chrono::steady_clock::now() + 20ms));
    CHECK(ch.stats().consumer_backoff_pauses - before >= 8 + 16 + 16 + 16);
    CHECK_FALSE(ch.try_receive(v)); // the streak stands at its cap: 16
    for (int k = 0; k < 4; ++k) {
        const std::uint64_t at = ch.stats().consumer_backoff_pauses;
        CHECK_FALSE(ch.receive(v, std::chrono::steady_clock::now() - 1ms));
        CHECK(ch.stats().consumer_backoff_pauses - at == 16);
    }
}

TEST_CASE("channel: a failure that ends a run of 32 successes pauses 32 more (the slip)") {
    // A side that caught up with a streaming other side waits for a batch to build up instead
    // of taking the ring's lines item by item; after a short run it does not (the pause would
    // only add latency to a request/response or a small limit).
    using ring64 = rings::spsc_ring<std::uint64_t, 64>;
    ring64 ring;
    qlimits::channel<ring64, qlimits::unlimited<clock_ms>> ch(ring, {},
                                                               qlimits::consumer_wait::spin);
    for (std::uint64_t i = 0; i < 64; ++i)
        REQUIRE(ch.try_send(std::uint64_t{i}) == send_status::ok);
    CHECK(ch.try_send(std::uint64_t{64}) == send_status::ring_full); // after 64 pushes: 4 + 32
    CHECK(ch.stats().producer_backoff_pauses == 36);
    CHECK(ch.try_send(std::uint64_t{64}) == send_status::ring_full); // in a row: 8, no slip
    CHECK(ch.stats().producer_backoff_pauses == 44);
    std::uint64_t v = 0;
    for (int i = 0; i < 31; ++i)
        REQUIRE(ch.try_receive(v));
    REQUIRE(ch.try_send(std::uint64_t{64}) == send_status::ok);
    for (std::uint64_t i = 0; i < 30; ++i)
        REQUIRE(ch.try_send(std::uint64_t{65 + i}) == send_status::ok);
    CHECK(ch.try_send(std::uint64_t{99}) == send_status::ring_full); // a run of 31: 4
    CHECK(ch.stats().producer_backoff_pauses == 48);
    for (int i = 0; i < 64; ++i)
        REQUIRE(ch.try_receive(v)); // 31 + 64 taken in a row
    CHECK_FALSE(ch.try_receive(v)); // 4 + 32
    CHECK(ch.stats().consumer_backoff_pauses == 36);
    CHECK_FALSE(ch.try_receive(v)); // 8
    CHECK(ch.stats().consumer_backoff_pauses == 44);
    REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    REQUIRE(ch.try_receive(v));
    CHECK_FALSE(ch.try_receive(v)); // a run of 1: 4
    CHECK(ch.stats().consumer_backoff_pauses == 48);
}

TEST_CASE("channel: a batched take of 8 or more that runs the ring dry slips before the next") {
    // A batched consumer that has caught up with a streaming producer ends every take on an
    // empty ring and polls again at once (an empty poll, which ends the run), so the slip above
    // never came: both sides took the ring's lines from each other a few items at a time
    // (docs/benchmarks.md "The slip of a batched take"). A take of at least 8 that runs dry
    // while the producer is running now makes the next take pause first (32 pauses at first;
    // here every slip gains nothing, so each is half the one before, down to 4: the test
    // below has the rule); the items taken are returned at once.
    constexpr std::uint64_t poll = 4;
    using ring64 = rings::spsc_ring<std::uint64_t, 64>;
    ring64 ring;
    qlimits::channel<ring64, qlimits::fixed_limit<clock_ms>> ch(ring, {.limit = 40},
                                                                 qlimits::consumer_wait::spin);
    std::array<std::uint64_t, 16> out{};
    std::array<std::uint64_t, 64> big{};
    const auto send = [&](int k) {
        for (int i = 0; i < k; ++i) REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    };
    const auto take = [&](std::span<std::uint64_t> span) {
        return ch.try_receive_batch(span, qlimits::completion::per_batch);
    };
    const auto pauses = [&] { return ch.stats().consumer_backoff_pauses; };
    send(8);
    REQUIRE(take(out) == 8); // ran dry: 8 is enough
    CHECK(pauses() == 0);    // not before the items are returned
    CHECK(take(out) == 0);
    // The slip, then the empty poll's back-off (the run is over).
    CHECK(pauses() == 32 + poll);
    send(7);
    REQUIRE(take(out) == 7); // 7 < 8: no slip
    CHECK(take(out) == 0);
    CHECK(pauses() == 32 + 2 * poll);
    send(10);
    REQUIRE(take(out) == 10);
    send(5);
    CHECK(take(std::span<std::uint64_t>{}) == 0); // an empty span neither slips nor uses it up
    CHECK(pauses() == 32 + 2 * poll);
    REQUIRE(take(out) == 5); // slips first
    CHECK(pauses() == 32 + 16 + 2 * poll);
    CHECK(take(out) == 0);
    CHECK(pauses() == 32 + 16 + 3 * poll);
    send(16);
    REQUIRE(ch.try_receive_batch(out, qlimits::completion::per_item) == 16); // full: not dry
    CHECK(take(out) == 0);
    CHECK(pauses() == 32 + 16 + 4 * poll);
    // A dry take of 32 or more leaves a run of 32: the slip ends it, so the empty poll after
    // it does not slip a second time.
    send(40);
    REQUIRE(take(big) == 40);
    CHECK(take(out) == 0);
    CHECK(pauses() == 32 + 16 + 8 + 5 * poll);
    // try_receive() after a dry batched take slips too (the next take, whatever its kind).
    send(10);
    REQUIRE(take(out) == 10);
    std::uint64_t v = 0;
    CHECK_FALSE(ch.try_receive(v));
    constexpr std::uint64_t slips = 32 + 16 + 8 + 4;
    CHECK(pauses() == slips + 6 * poll);
    // A producer stopped by the limit is not streaming: a dry take then does not slip.
    ch.policy().set_limit(10);
    send(11); // BQL's rule: the send that reaches limit + 1 is allowed, the next refused
    CHECK(ch.try_send(std::uint64_t{1}) == send_status::over_limit);
    REQUIRE(ch.stats().stopped);
    REQUIRE(take(out) == 11);
    CHECK(take(out) == 0);
    CHECK(pauses() == slips + 7 * poll);
    send(1); // a request/response: takes of one never slip
    for (int k = 0; k < 3; ++k) {
        REQUIRE(take(out) == 1);
        send(1);
    }
    CHECK(pauses() == slips + 7 * poll);
    CHECK(ch.inflight() == 1);
}

TEST_CASE("channel: a batched take's slip ends once the producer stops") {
    // The slip is for a streaming producer. One that has stopped (or waits for room) since the
    // dry take waits for this side: the slip is cut short (checked every 8 pauses, the first
    // check before any pause), so its room is not delayed.
    using ring64 = rings::spsc_ring<std::uint64_t, 64>;
    ring64 ring;
    qlimits::channel<ring64, qlimits::fixed_limit<clock_ms>> ch(ring, {.limit = 40},
                                                                 qlimits::consumer_wait::spin);
    std::array<std::uint64_t, 16> out{};
    const auto send = [&](int k) {
        for (int i = 0; i < k; ++i) REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    };
    const auto take = [&] { return ch.try_receive_batch(out, qlimits::completion::per_batch); };
    send(10);
    REQUIRE(take() == 10); // dry, producer running: the next take slips
    ch.policy().set_limit(3);
    send(4); // limit + 1
    REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::over_limit);
    REQUIRE(ch.stats().stopped);
    const auto before = ch.stats().consumer_backoff_pauses;
    REQUIRE(take() == 4);
    CHECK(ch.stats().consumer_backoff_pauses == before); // no pause: the producer waits
    CHECK_FALSE(ch.stats().stopped);                     // and got its room
    // The same take with the producer running slips in full.
    ch.policy().set_limit(40);
    send(10);
    REQUIRE(take() == 10);
    send(2);
    REQUIRE(take() == 2);
    CHECK(ch.stats().consumer_backoff_pauses == before + 32);
}

TEST_CASE("channel: a batched take's slip halves when it gains nothing, doubles when it does") {
    // A 16-slot ring that a streaming producer fills during the slip: the take after it is no
    // larger than the dry take before it, and the producer spun on a full ring meanwhile
    // (two-thread benchmark, docs/benchmarks.md "A slip that learns its length": 32 pauses made
    // such a ring 2.2x slower batched than per item where a pause is short). A take that grew
    // doubles the next slip, up to 128 (with a 1024-slot ring 128 pauses were 12-50 % faster
    // than 32).
    using ring256 = rings::spsc_ring<std::uint64_t, 256>;
    ring256 ring;
    qlimits::channel<ring256, qlimits::unlimited<clock_ms>> ch(ring, {},
                                                               qlimits::consumer_wait::spin);
    std::array<std::uint64_t, 200> out{};
    const auto send = [&](int k) {
        for (int i = 0; i < k; ++i) REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    };
    const auto pauses = [&] { return ch.stats().consumer_backoff_pauses; };
    // Every take runs the ring dry, so each slips before the next; returns the pauses of the
    // slip before this take of `n` (judged by this take against the one before).
    const auto take = [&](int n) {
        send(n);
        const auto before = pauses();
        REQUIRE(ch.try_receive_batch(out, qlimits::completion::per_batch) ==
                static_cast<std::size_t>(n));
        return pauses() - before;
    };
    CHECK(take(16) == 0);   // nothing due yet
    CHECK(take(16) == 32);  // no larger than 16: the next is halved
    CHECK(take(16) == 16);
    CHECK(take(8) == 8);
    CHECK(take(16) == 4);   // larger: doubled
    CHECK(take(16) == 8);   // no larger
    CHECK(take(16) == 4);
    CHECK(take(16) == 4);   // the floor
    CHECK(take(40) == 4);
    CHECK(take(41) == 8);
    CHECK(take(42) == 16);
    CHECK(take(43) == 32);
    CHECK(take(44) == 64);
    CHECK(take(45) == 128);
    CHECK(take(46) == 128); // the cap
    // An empty take after a slip gained nothing either.
    send(0);
    CHECK(ch.try_receive_batch(out, qlimits::completion::per_batch) == 0);
    CHECK(take(50) == 0); // after an empty poll: no slip due, and the halving stays
    CHECK(take(50) == 64);
}

namespace {
// fixed_limit, counting the calls of its two producer- and consumer-side shortcuts.
struct counting_fixed : qlimits::fixed_limit<clock_ms> {
    using fixed_limit::fixed_limit;
    using fixed_limit::on_completed;
    int may_post_calls = 0, known_counted_calls = 0;
    [[nodiscard]] bool may_post() noexcept {
        ++may_post_calls;
        return fixed_limit::may_post();
    }
    bool on_completed(std::uint32_t n, time_point now, qlimits::known_counted_t k) noexcept {
        ++known_counted_calls;
        return fixed_limit::on_completed(n, now, k);
    }
};
} // namespace

TEST_CASE("channel: the producer asks may_post(), the consumer completes known-counted units") {
    // Issue 8, finding 9: fixed_limit's available() reads the consumer's line, and its checked
    // completion the producer's; the channel uses the cheaper forms where a policy has them.
    static_assert(qlimits::has_may_post<counting_fixed> &&
                  qlimits::accepts_known_counted<counting_fixed>);
    item_ring ring;
    qlimits::channel<item_ring, counting_fixed> ch(ring, {.limit = 1000});
    for (std::uint64_t i = 0; i < 5; ++i)
        REQUIRE(ch.try_send(item{i, 100}) == send_status::ok);
    CHECK(ch.policy().may_post_calls == 5);
    item out;
    for (int i = 0; i < 5; ++i)
        REQUIRE(ch.try_receive(out));
    CHECK(ch.policy().known_counted_calls == 5);
    CHECK(ch.inflight() == 0);
    // Over the limit: may_post() says no and the stop protocol runs with a fresh available().
    for (std::uint64_t i = 0; i < 7; ++i)
        REQUIRE(ch.try_send(item{i, 150}) == send_status::ok); // 1050 in flight after the 7th
    CHECK(ch.try_send(item{9, 1}) == send_status::over_limit);
    CHECK(ch.stopped());
}

namespace {
// A ring that reports the policy's inflight() at each push, and refuses pushes on demand.
template <class Policy>
struct probing_ring {
    using value_type = std::uint64_t;
    rings::spsc_ring<std::uint64_t, 8> inner;
    const Policy* policy = nullptr;
    std::uint32_t inflight_at_push = 0;
    bool refuse = false;
    bool try_push(std::uint64_t&& v) noexcept {
        inflight_at_push = policy->inflight();
        return !refuse && inner.try_push(std::move(v));
    }
    bool try_pop(std::uint64_t& v) noexcept { return inner.try_pop(v); }
};
} // namespace

TEST_CASE("channel: an item is counted before its push where the policy can take the count back") {
    // Issue 8, finding 9: counted after the push, an item can be popped before it is counted,
    // and a consumer right behind the producer then reads the producer's count for every item.
    // fixed_limit and unlimited can take a count back (on_unqueued), so the channel counts
    // first and undoes the count when the ring refuses the item.
    using fixed = qlimits::fixed_limit<clock_ms>;
    probing_ring<fixed> ring;
    qlimits::channel<probing_ring<fixed>, fixed> ch(ring, {.limit = 100});
    ring.policy = &ch.policy();
    REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    CHECK(ring.inflight_at_push == 1); // already counted when the consumer could first see it
    ring.refuse = true;
    CHECK(ch.try_send(std::uint64_t{2}) == send_status::ring_full);
    CHECK(ring.inflight_at_push == 2);
    CHECK(ch.inflight() == 1); // the refused item's count was taken back
    CHECK(ch.policy().available() == 99);
    ring.refuse = false;
    REQUIRE(ch.try_send(std::uint64_t{3}) == send_status::ok);
    std::uint64_t v = 0;
    REQUIRE(ch.try_receive(v));
    REQUIRE(ch.try_receive(v));
    CHECK(v == 3);
    CHECK(ch.inflight() == 0);

    // dql's count cannot be taken back (it records the object's size for the completion side):
    // it is counted after the push, as before.
    using dql = qlimits::dql<clock_ms>;
    static_assert(!qlimits::accepts_unqueue<dql>);
    probing_ring<dql> dring;
    qlimits::channel<probing_ring<dql>, dql> dch(dring, {});
    dring.policy = &dch.policy();
    REQUIRE(dch.try_send(std::uint64_t{1}) == send_status::ok);
    CHECK(dring.inflight_at_push == 0);
    CHECK(dch.inflight() == 1);
}

TEST_CASE("channel: an empty channel takes a send whatever a stale policy says (dql after reset)") {
    // dql::reset() keeps adj_limit, as Linux's dql_reset does. Once 2^31 units have gone
    // through, the kept value reads as no room (available() < 0) with nothing in flight. Linux
    // counts the post before its check, so it takes one item and stops, and that item's
    // completion renews the room; channel checks first, and refused every send for good: the
    // producer stopped, nothing in flight, no completion to come (found by a review,
    // 2026-12-05; send() without a deadline slept forever).
    using dql = qlimits::dql<clock_ms>;
    using ring_t = rings::spsc_ring<item, 8>;
    ring_t ring;
    qlimits::channel<ring_t, dql> ch(ring, {}, qlimits::consumer_wait::spin);
    item out{};
    for (int i = 0; i < 9; ++i) { // 9 x max_object: past 2^31 units sent
        REQUIRE(ch.try_send(item{static_cast<std::uint64_t>(i), qlimits::dql_max_object}) ==
                send_status::ok);
        REQUIRE(ch.try_receive(out));
    }
    REQUIRE(ch.inflight() == 0);
    ch.policy().reset(clock_ms::time_point{}); // neither side running, the channel empty
    REQUIRE(ch.policy().available() < 0);      // stale, as in Linux
    CHECK(ch.try_send(item{100, 1}) == send_status::ok);
    CHECK(ch.inflight() == 1);
    // Still held while that item is in flight (the stale room is the policy's answer then)...
    CHECK(ch.try_send(item{101, 1}) == send_status::over_limit);
    CHECK(ch.stopped());
    // ...and its completion brings fresh room, as in Linux.
    REQUIRE(ch.try_receive(out));
    CHECK(out.seq == 100);
    CHECK(ch.policy().available() >= 0);
    CHECK(ch.send(item{102, 1}, std::chrono::steady_clock::now() + 200ms) == send_status::ok);
    REQUIRE(ch.try_receive(out));
    CHECK(out.seq == 102);
    CHECK(ch.inflight() == 0);
}

namespace {
// software_limit, counting how the channel reports completions and how often the policy asks
// for the time.
struct counting_sw : qlimits::software_limit<> {
    using software_limit::software_limit;
    int completed_calls = 0, taken_calls = 0, clock_reads = 0, parts = 0;
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        ++completed_calls;
        return software_limit::on_completed(n, now);
    }
    template <class Now>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return on_taken(n, now, false);
    }
    template <class Now>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        ++taken_calls;
        parts += same_take ? 1 : 0;
        return software_limit::on_taken(
            n,
            [&]() noexcept {
                ++clock_reads;
                return now();
            },
            same_take);
    }
};
} // namespace

TEST_CASE("channel: a policy with on_taken() reads the time itself, only when it needs it") {
    // Issue 10, item 2: per-item completion through channel without a clock read per item.
    static_assert(qlimits::accepts_lazy_time<counting_sw>);
    rings::spsc_ring<std::uint64_t, 1024> ring;
    qlimits::channel<rings::spsc_ring<std::uint64_t, 1024>, counting_sw> ch(ring, {});
    std::uint64_t v = 0;
    int sent = 0, received = 0;
    for (int round = 0; round < 200; ++round) {
        // Up to 8 per round: the limit starts at 8 but follows the real clock, so a slow build
        // (a sanitizer) may measure a slow consumer and cut it; the sender then stops early.
        for (std::uint64_t i = 0; i < 8 && ch.try_send(std::uint64_t{i}) == send_status::ok; ++i)
            ++sent;
        while (ch.try_receive(v)) ++received;
    }
    REQUIRE(received == sent);
    REQUIRE(sent >= 200);
    CHECK(ch.policy().completed_calls == 0);
    CHECK(ch.policy().taken_calls == received);
    // The time is read at most once per take, and never without a take.
    CHECK(ch.policy().clock_reads >= 1);
    CHECK(ch.policy().clock_reads <= received);
    CHECK(ch.inflight() == 0);
}

TEST_CASE("channel: receive_batch per item reports one take in parts (same_take)") {
    // The items of one receive_batch() completed per item left the ring in one take: the first
    // is reported as a take, the rest as its parts, so the policy counts one batch at one time.
    // Per batch it is one report; try_receive() is always a take of its own.
    static_assert(qlimits::accepts_take_parts<counting_sw>);
    using ring_t = rings::spsc_ring<std::uint64_t, 1024>;
    ring_t ring;
    qlimits::software_limit_config cfg{};
    cfg.min_limit = cfg.max_limit = 64; // room for the 8 sent below, whatever the clock says
    qlimits::channel<ring_t, counting_sw> ch(ring, cfg);
    std::array<std::uint64_t, 8> out{};
    const auto send = [&](int k) {
        for (int i = 0; i < k; ++i) REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
    };
    send(8);
    REQUIRE(ch.try_receive_batch(out, qlimits::completion::per_item) == 8);
    CHECK(ch.policy().taken_calls == 8);
    CHECK(ch.policy().parts == 7);
    CHECK(ch.policy().clock_reads <= 1);
    send(8);
    REQUIRE(ch.try_receive_batch(out, qlimits::completion::per_batch) == 8);
    CHECK(ch.policy().taken_calls == 9);
    CHECK(ch.policy().parts == 7);
    send(2);
    std::uint64_t v = 0;
    REQUIRE(ch.try_receive(v));
    REQUIRE(ch.try_receive(v));
    CHECK(ch.policy().taken_calls == 11);
    CHECK(ch.policy().parts == 7);
    CHECK(ch.inflight() == 0);
}

namespace {
// A ring that runs a hook after each push, before channel::try_send() has counted the item: the
// hook plays a consumer that takes the item in that window (on two threads, a consumer right
// behind the producer can).
struct hooked_ring {
    using value_type = std::uint64_t;
    rings::spsc_ring<std::uint64_t, 1024> inner;
    std::function<void()> after_push;
    bool try_push(std::uint64_t&& v) noexcept {
        if (!inner.try_push(std::move(v)))
            return false;
        if (after_push)
            after_push();
        return true;
    }
    bool try_pop(std::uint64_t& v) noexcept { return inner.try_pop(v); }
};
// counting_sw, logging each report as (units, same_take).
struct take_log_sw : counting_sw {
    using counting_sw::counting_sw;
    std::vector<std::pair<std::uint32_t, bool>> log;
    template <class Now>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return on_taken(n, now, false);
    }
    template <class Now>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        log.emplace_back(n, same_take);
        return counting_sw::on_taken(n, now, same_take);
    }
};
} // namespace

TEST_CASE("channel: units owed from an earlier take are reported as theirs, not as the next take") {
    // software_limit is counted after the push, so a consumer can take an item before it is
    // counted; its units stay owed. The next receive_batch() reports them first, as a take of
    // their own, and only then the take it makes now.
    static_assert(!qlimits::accepts_unqueue<take_log_sw>);
    using log_t = std::vector<std::pair<std::uint32_t, bool>>;
    qlimits::software_limit_config cfg{};
    cfg.min_limit = cfg.max_limit = 64; // room for everything sent below, whatever the clock says
    for (const auto mode : {qlimits::completion::per_item, qlimits::completion::per_batch}) {
        CAPTURE(static_cast<int>(mode));
        hooked_ring ring;
        qlimits::channel<hooked_ring, take_log_sw> ch(ring, cfg);
        ch.policy().log.reserve(16);
        std::array<std::uint64_t, 8> out{};
        std::size_t early = 0;
        ring.after_push = [&] { early = ch.try_receive_batch(out, mode); };
        REQUIRE(ch.try_send(std::uint64_t{1}) == send_status::ok);
        REQUIRE(early == 1);            // taken before the producer counted it...
        CHECK(ch.policy().log.empty()); // ...so nothing could be reported: the unit is owed
        ring.after_push = nullptr;
        for (int i = 0; i < 3; ++i) REQUIRE(ch.try_send(std::uint64_t{2}) == send_status::ok);
        REQUIRE(ch.try_receive_batch(out, mode) == 3);
        if (mode == qlimits::completion::per_item)
            CHECK(ch.policy().log == log_t{{1, false}, {1, false}, {1, true}, {1, true}});
        else
            CHECK(ch.policy().log == log_t{{1, false}, {3, false}});
        CHECK(ch.inflight() == 0);
    }
}

TEST_CASE("channel: dql's stall detector sees the channel's posts once a threshold is set") {
    using stall_dql = qlimits::dql<clock_ms>;
    static_assert(qlimits::asks_post_time<stall_dql>);
    static_assert(!qlimits::asks_post_time<qlimits::fixed_limit<clock_ms>>);
    clock_ms::set(clock_ms::time_point{0ms});
    item_ring ring;
    qlimits::channel<item_ring, stall_dql> ch(ring, {.stall_threshold = 10ms});
    CHECK(ch.policy().wants_post_time());
    item out;
    // Posted at 1 ms, completed at 31 ms: a gap of 30 ticks with a post in its first half.
    clock_ms::advance(1ms);
    REQUIRE(ch.try_send(item{1}) == send_status::ok);
    clock_ms::advance(30ms);
    REQUIRE(ch.try_receive(out));
    CHECK(ch.stats().policy.stall_count == 1);
    CHECK(ch.stats().policy.stall_max == 30);
    // A completion soon after its post is no stall.
    clock_ms::advance(1ms);
    REQUIRE(ch.try_send(item{2}) == send_status::ok);
    clock_ms::advance(2ms);
    REQUIRE(ch.try_receive(out));
    CHECK(ch.stats().policy.stall_count == 1);
}

// dql, counting which on_queued() overload the channel calls.
struct post_spy : qlimits::dql<clock_ms> {
    using dql::dql;
    int untimed = 0, timed = 0;
    bool on_queued(std::uint32_t n) noexcept {
        ++untimed;
        return dql::on_queued(n);
    }
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        ++timed;
        return dql::on_queued(n, now);
    }
};

TEST_CASE("channel: posts are timed only while the policy wants it (no clock read otherwise)") {
    static_assert(qlimits::asks_post_time<post_spy>);
    item_ring ring;
    qlimits::channel<item_ring, post_spy> ch(ring);
    item out;
    REQUIRE(ch.try_send(item{1}) == send_status::ok);
    REQUIRE(ch.try_receive(out));
    CHECK(ch.policy().untimed == 1);
    CHECK(ch.policy().timed == 0);
    // The consumer side sets a threshold on the live policy: the next posts are timed.
    REQUIRE(ch.policy().set_stall_threshold(10ms, clock_ms::now()));
    REQUIRE(ch.try_send(item{2}) == send_status::ok);
    REQUIRE(ch.try_receive(out));
    CHECK(ch.policy().untimed == 1);
    CHECK(ch.policy().timed == 1);
}

TEST_CASE("channel: a too_large refusal rings a pending doorbell (a refusal flushes by itself)") {
    // try_send(a, more = true) leaves the doorbell pending; the caller's later send with
    // more == false is refused as too large. Before, that refusal did not ring it: the consumer,
    // asleep, slept on beside the item until its own deadline (or for good without one).
    item_ring ring;
    qlimits::channel<item_ring, qlimits::software_limit<>> ch(ring);
    std::atomic<bool> got{false};
    std::atomic<bool> done{false};
    std::thread consumer([&] {
        item out;
        got = ch.receive(out, std::chrono::steady_clock::now() + 30s) && out.seq == 7;
        done = true;
    });
    while (!ch.stats().consumer_asleep)
        std::this_thread::sleep_for(1ms);
    REQUIRE(ch.try_send(item{7, 1}, true) == send_status::ok);
    CHECK(ch.try_send(item{8, qlimits::software_max_object + 1}) == send_status::too_large);
    // Woken by the refusal's doorbell, not by the 30 s deadline.
    for (int i = 0; i < 5000 && !done; ++i)
        std::this_thread::sleep_for(1ms);
    CHECK(done.load());
    if (!done) ch.close(); // let the consumer go (it then sees the item and the close)
    consumer.join();
    CHECK(got.load());
}

namespace {
// fixed_limit with a rule of its own: it refuses items of exactly 13 units, and lets max_object
// be set (a user policy may allow up to 2^32 - 1). Undo: it has on_unqueued(), so the channel
// counts before the push.
template <bool Undo, std::uint32_t MaxObject = qlimits::fixed_max_object>
struct picky_policy {
    using inner_type = qlimits::fixed_limit<clock_ms>;
    using clock_type = clock_ms;
    using config_type = inner_type::config_type;
    using time_point = inner_type::time_point;
    using stats_type = inner_type::stats_type;
    static constexpr std::uint32_t max_object = MaxObject;
    static constexpr std::uint32_t refused_size = 13;
    inner_type in;
    picky_policy(const config_type& c, time_point now) noexcept : in(c, now) {}
    [[nodiscard]] std::int64_t available() const noexcept { return in.available(); }
    [[nodiscard]] std::uint32_t limit() const noexcept { return in.limit(); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return in.inflight(); }
    bool on_queued(std::uint32_t n) noexcept { return n != refused_size && in.on_queued(n); }
    bool on_queued(std::uint32_t n, time_point) noexcept { return on_queued(n); }
    bool on_completed(std::uint32_t n, time_point t) noexcept { return in.on_completed(n, t); }
    void reset(time_point t) noexcept { in.reset(t); }
    [[nodiscard]] stats_type stats() const noexcept { return in.stats(); }
    void on_unqueued(std::uint32_t n) noexcept
        requires Undo
    {
        in.on_unqueued(n);
    }
};
} // namespace

TEST_CASE("channel: an item that alone exceeds 2^31 - 1 units is too_large, never a wait") {
    // Until 2026-12-05 a policy whose max_object allows such an item got over_limit with
    // nothing in flight, and send() waited for a completion that could never come (a review).
    using big = picky_policy<true, 0xFFFF'FFFFU>;
    using ch_type = qlimits::channel<item_ring, big>;
    static_assert(ch_type::max_item_units == qlimits::channel_max_inflight_units);
    static_assert(qlimits::channel<item_ring, qlimits::dql<clock_ms>>::max_item_units ==
                  qlimits::dql<clock_ms>::max_object);
    item_ring ring;
    ch_type ch(ring, {.limit = 0x7000'0000U});
    CHECK(ch.try_send(item{1, 0x8000'0000U}) == send_status::too_large);
    // (a deadline first, so a regression fails here instead of hanging below)
    REQUIRE(ch.send(item{1, 0xFFFF'FFFFU}, std::chrono::steady_clock::now() + 1s) ==
          send_status::too_large);
    CHECK(ch.send(item{1, 0xFFFF'FFFFU}) == send_status::too_large);
    CHECK_FALSE(ch.stats().stopped);
    // Within max_item_units the policy's own rule answers (fixed_limit's max_object: refused).
    CHECK(ch.try_send(item{2, 0x7FFF'FFFFU}) == send_status::refused);
    CHECK(ch.try_send(item{3, qlimits::fixed_max_object}) == send_status::ok);
    CHECK(ch.inflight() == qlimits::fixed_max_object);
}

TEST_CASE("channel: a policy that can take a count back refuses a send cleanly (refused)") {
    using undo = picky_policy<true>;
    static_assert(qlimits::accepts_unqueue<undo>);
    item_ring ring;
    qlimits::channel<item_ring, undo> ch(ring, {.limit = 100});
    CHECK(ch.try_send(item{1, undo::refused_size}) == send_status::refused);
    CHECK(ch.send(item{2, undo::refused_size}) == send_status::refused);
    CHECK(ch.inflight() == 0);
    item out;
    CHECK_FALSE(ch.try_receive(out)); // nothing was sent
    REQUIRE(ch.try_send(item{3, 5}) == send_status::ok);
    REQUIRE(ch.try_receive(out));
    CHECK(out.seq == 3);
    CHECK(ch.inflight() == 0);
}

TEST_CASE("channel: a policy counted after the push that refuses a small item is reported") {
    // Counted after the push, the item is in the ring and cannot be taken back: the channel
    // requires such a policy to refuse only items over max_object (a review, 2026-12-05: the
    // refusal was ignored and try_send said ok).
    test::contract_probe probe;
    using plain = picky_policy<false>;
    static_assert(!qlimits::accepts_unqueue<plain>);
    item_ring ring;
    qlimits::channel<item_ring, plain> ch(ring, {.limit = 100});
    (void)ch.try_send(item{1, plain::refused_size});
    CHECK(probe.count() == 1);
    CHECK(std::string(probe.last().where) == "channel::try_send or channel::send");
}

TEST_CASE("channel: the one-producer check keeps reporting after a handler that returns") {
    // Until 2026-12-05 the intruder's guard freed the side on its way out while the owner was
    // still inside, so a second overlapping call went unreported (a review).
    test::contract_probe probe;
    rings::spsc_ring<item, 8> ring;
    qlimits::channel<rings::spsc_ring<item, 8>, qlimits::unlimited<clock_ms>> ch(ring);
    for (std::uint64_t i = 0; i < 8; ++i) REQUIRE(ch.try_send(item{i}) == send_status::ok);
    std::thread owner([&] { CHECK(ch.send(item{8}) == send_status::ok); }); // waits: ring full
    const auto until = std::chrono::steady_clock::now() + 10s;
    // Past its retries (producer_waits counts the sleep it goes to), so the intruder below
    // does not race them on the producer's own fields.
    while (ch.stats().producer_waits == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    REQUIRE(ch.stats().producer_waits >= 1); // the owner sleeps inside send()
    std::this_thread::sleep_for(5ms);
    CHECK(ch.try_send(item{99}) == send_status::ring_full);
    REQUIRE(probe.count() == 1);
    CHECK(ch.try_send(item{99}) == send_status::ring_full);
    CHECK(probe.count() == 2); // the owner is still inside: reported again
    item out;
    REQUIRE(ch.receive(out)); // room: the owner's send returns
    owner.join();
    CHECK(ch.try_send(item{100}) == send_status::ring_full);
    CHECK(probe.count() == 2); // the side was freed by its owner, so one caller is no overlap
}

namespace adl_app {
struct packet {
    std::uint32_t bytes = 0;
};
// A function template of the library's name beside the user's item type: argument-dependent
// lookup found it for channel's unqualified units_of<Ring>(item), and g++ then stopped on an
// ambiguous call inside channel.hpp (a review, 2026-12-06). channel calls qlimits::units_of.
template <class Ring>
std::uint32_t units_of(const packet&) noexcept {
    return 999;
}
} // namespace adl_app
template <>
struct qlimits::item_units<adl_app::packet> {
    static std::uint32_t of(const adl_app::packet& p) noexcept { return p.bytes; }
};

TEST_CASE("channel: a units_of beside the user's item type is neither called nor ambiguous") {
    auto ring = std::make_unique<rings::spsc_ring<adl_app::packet, 16>>();
    qlimits::channel<rings::spsc_ring<adl_app::packet, 16>, qlimits::unlimited<>> ch(*ring);
    CHECK(ch.try_send(adl_app::packet{1500}) == send_status::ok);
    CHECK(ch.inflight() == 1500);
    std::array<adl_app::packet, 4> out{};
    CHECK(ch.try_send(adl_app::packet{40}) == send_status::ok);
    CHECK(ch.try_receive_batch(out, qlimits::completion::per_item) == 2);
    CHECK(ch.inflight() == 0);
    CHECK(out[0].bytes == 1500);
}
