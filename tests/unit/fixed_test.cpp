// Unit tests of the baseline policies fixed_limit and unlimited.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string_view>

#include "contract_probe.hpp"
#include "qlimits/limits/fixed.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using tp = clock_ms::time_point;
} // namespace

TEST_CASE("fixed: available is limit minus inflight, and the limit never moves") {
    qlimits::fixed_limit<clock_ms> p({.limit = 3000}, tp{});
    CHECK(p.available() == 3000);
    CHECK(p.on_queued(1000));
    CHECK(p.on_queued(2500, tp{}));
    CHECK(p.inflight() == 3500);
    CHECK(p.available() == -500);
    CHECK(p.on_completed(3500, tp{}));
    CHECK(p.available() == 3000);
    CHECK(p.limit() == 3000);
    CHECK(p.set_limit(10));
    CHECK(p.available() == 10);
    CHECK_FALSE(p.set_limit(qlimits::fixed_max_limit + 1));
    CHECK(p.limit() == 10);
}

TEST_CASE("fixed: an enqueue over the maximum object is refused and counted") {
    qlimits::fixed_limit<clock_ms> p({.limit = 10}, tp{});
    CHECK_FALSE(p.on_queued(qlimits::fixed_max_object + 1));
    CHECK(p.inflight() == 0);
    CHECK(p.stats().rejected_enqueues == 1);
    p.reset(tp{});
    CHECK(p.stats().rejected_enqueues == 1); // a lifetime count, kept as documented
}

TEST_CASE("fixed: over-completion goes to the contract handler and changes nothing") {
    test::contract_probe probe;
    qlimits::fixed_limit<clock_ms> p({.limit = 10}, tp{});
    CHECK(p.on_queued(5));
    CHECK_FALSE(p.on_completed(6, tp{}));
    CHECK(probe.count() == 1);
    CHECK(p.inflight() == 5);
    CHECK(p.on_completed(5, tp{}));
    CHECK(probe.count() == 1);
}

TEST_CASE("fixed: an invalid configuration is a contract violation, then the default is used") {
    test::contract_probe probe;
    qlimits::fixed_limit<clock_ms> p({.limit = qlimits::fixed_max_limit + 1}, tp{});
    CHECK(probe.count() == 1);
    CHECK(p.limit() == qlimits::fixed_limit_config{}.limit);
}

TEST_CASE("fixed: reset forgets what is in flight") {
    qlimits::fixed_limit<clock_ms> p({.limit = 10}, tp{});
    CHECK(p.on_queued(50));
    p.reset(tp{});
    CHECK(p.inflight() == 0);
    CHECK(p.available() == 10);
}

TEST_CASE("unlimited: never asks to stop, still counts and checks completions") {
    test::contract_probe probe;
    qlimits::unlimited<clock_ms> p({}, tp{});
    CHECK(p.on_queued(qlimits::fixed_max_object));
    CHECK(p.on_queued(qlimits::fixed_max_object));
    CHECK(p.available() == std::numeric_limits<std::int32_t>::max());
    CHECK(p.limit() == std::numeric_limits<std::uint32_t>::max());
    CHECK(p.inflight() == 2 * qlimits::fixed_max_object);
    CHECK(p.on_completed(qlimits::fixed_max_object, tp{}));
    CHECK_FALSE(p.on_completed(qlimits::fixed_max_object + 1, tp{}));
    CHECK(probe.count() == 1);
    CHECK(p.inflight() == qlimits::fixed_max_object);
    CHECK_FALSE(p.on_queued(qlimits::fixed_max_object + 1));
    CHECK(p.stats().rejected_enqueues == 1);
}

TEST_CASE("fixed: may_post() agrees with available() >= 0 on every step, limits and wrap included") {
    // may_post() answers from the producer's last reading of the completed count and reads it
    // again only when that reading shows no room; its answer must still be exact.
    qlimits::fixed_limit<clock_ms> p({.limit = 100}, tp{});
    std::uint32_t x = 12345;
    auto next = [&] { return x = x * 1103515245U + 12345U; };
    // Start near the 32-bit wrap so the counters cross it.
    for (int i = 0; i < 16; ++i) {
        REQUIRE(p.on_queued(0x0FFFFFF0U));
        REQUIRE_FALSE(p.may_post());
        REQUIRE(p.on_completed(0x0FFFFFF0U, tp{}));
    }
    for (int step = 0; step < 20000; ++step) {
        const std::uint32_t r = next() >> 16;
        if (r % 7 == 0)
            CHECK(p.set_limit(r % 300));
        else if (r % 2 == 0 && p.inflight() > 0)
            CHECK(p.on_completed(1 + r % p.inflight(), tp{}));
        else if (p.available() >= 0)
            CHECK(p.on_queued(1 + r % 50));
        REQUIRE(p.may_post() == (p.available() >= 0));
    }
}

TEST_CASE("fixed/unlimited: a known-counted completion books like on_completed, unchecked") {
    test::contract_probe probe;
    qlimits::fixed_limit<clock_ms> p({.limit = 10}, tp{});
    CHECK(p.on_queued(7));
    CHECK(p.on_completed(3, tp{}, qlimits::known_counted));
    CHECK(p.inflight() == 4);
    CHECK(p.available() == 6);
    // The checked path still refuses an over-completion afterwards: the known-counted one left
    // the policy's reading of the producer's count a true lower bound.
    CHECK_FALSE(p.on_completed(5, tp{}));
    CHECK(probe.count() == 1);
    CHECK(p.on_completed(4, tp{}));
    CHECK(p.inflight() == 0);
    qlimits::unlimited<clock_ms> u({}, tp{});
    CHECK(u.on_queued(5));
    CHECK(u.on_completed(5, tp{}, qlimits::known_counted));
    CHECK(u.inflight() == 0);
    CHECK_FALSE(u.on_completed(1, tp{}));
    CHECK(probe.count() == 2);
}

TEST_CASE("fixed/unlimited: on_unqueued() takes back what on_queued() counted, across the wrap") {
    // channel counts an item before it pushes it and takes the count back when the ring
    // refuses the push (issue 8, finding 9): the undo must leave every observer where it was.
    static_assert(qlimits::accepts_unqueue<qlimits::fixed_limit<clock_ms>> &&
                  qlimits::accepts_unqueue<qlimits::unlimited<clock_ms>>);
    qlimits::fixed_limit<clock_ms> p({.limit = 10}, tp{});
    // Near the 2^32 wrap of the 32-bit counters: queue and complete 2^32 - 3 units first.
    for (int i = 0; i < 16; ++i) { // 16 * (2^28 - 1) = 2^32 - 16
        REQUIRE(p.on_queued(qlimits::fixed_max_object));
        REQUIRE(p.on_completed(qlimits::fixed_max_object, tp{}));
    }
    REQUIRE(p.on_queued(13));
    REQUIRE(p.on_completed(13, tp{}));
    CHECK(p.inflight() == 0);
    CHECK(p.on_queued(7));      // wraps queued past 2^32
    CHECK(p.on_completed(2, tp{}));
    p.on_unqueued(3);
    CHECK(p.inflight() == 2);
    CHECK(p.available() == 8);
    CHECK(p.may_post());
    CHECK(p.on_queued(9)); // 11 in flight: over the limit by one
    CHECK_FALSE(p.may_post());
    p.on_unqueued(9);
    CHECK(p.may_post());
    CHECK(p.available() == 8);
    CHECK(p.on_completed(2, tp{}));
    CHECK(p.inflight() == 0);

    qlimits::unlimited<clock_ms> u({}, tp{});
    CHECK(u.on_queued(5));
    u.on_unqueued(5);
    CHECK(u.inflight() == 0);
    CHECK(u.on_queued(1));
    CHECK(u.on_completed(1, tp{}));
    CHECK(u.inflight() == 0);
}

TEST_CASE("fixed/unlimited: a completion of units taken back by on_unqueued() is refused") {
    // Review 2026-12-03: the over-completion check trusted a cached reading of `queued`, which
    // on_unqueued() can make stale upwards: 10 queued, 1 completed, 9 taken back, then 5
    // completed with nothing in flight was accepted and left inflight at 2^32 - 5.
    test::contract_probe probe;
    qlimits::fixed_limit<clock_ms> f({.limit = 65536}, tp{});
    qlimits::unlimited<clock_ms> u({}, tp{});
    for (auto* p : {static_cast<void*>(&f), static_cast<void*>(&u)}) {
        const bool fixed = p == &f;
        const auto queued = [&](std::uint32_t n) { return fixed ? f.on_queued(n) : u.on_queued(n); };
        const auto completed = [&](std::uint32_t n) {
            return fixed ? f.on_completed(n, tp{}) : u.on_completed(n, tp{});
        };
        const auto unqueued = [&](std::uint32_t n) { fixed ? f.on_unqueued(n) : u.on_unqueued(n); };
        const auto inflight = [&] { return fixed ? f.inflight() : u.inflight(); };
        REQUIRE(queued(10));
        REQUIRE(completed(1));
        unqueued(9);
        const int before = probe.count();
        CHECK_FALSE(completed(5));
        CHECK(probe.count() == before + 1);
        CHECK(inflight() == 0);
    }
    CHECK(f.available() == 65536);
}

TEST_CASE("fixed/unlimited: on_unqueued() of more than is in flight is refused and changes nothing") {
    // Review 2026-12-05: a take-back beyond what is in flight wrapped inflight to ~2^32, showed
    // room above the limit and let a completion of units never queued through unchecked.
    test::contract_probe probe;
    qlimits::fixed_limit<clock_ms> f({.limit = 100}, tp{});
    qlimits::unlimited<clock_ms> u({}, tp{});
    for (const bool fixed : {true, false}) {
        const auto queued = [&](std::uint32_t n) { return fixed ? f.on_queued(n) : u.on_queued(n); };
        const auto completed = [&](std::uint32_t n) {
            return fixed ? f.on_completed(n, tp{}) : u.on_completed(n, tp{});
        };
        const auto unqueued = [&](std::uint32_t n) { fixed ? f.on_unqueued(n) : u.on_unqueued(n); };
        const auto inflight = [&] { return fixed ? f.inflight() : u.inflight(); };
        const int before = probe.count();
        REQUIRE(queued(10));
        REQUIRE(completed(10));
        unqueued(5); // nothing in flight
        CHECK(probe.count() == before + 1);
        CHECK(std::string_view(probe.last().where) ==
              (fixed ? "fixed_limit::on_unqueued" : "unlimited::on_unqueued"));
        CHECK(inflight() == 0);
        REQUIRE(queued(3));
        unqueued(4); // one more than in flight
        CHECK(probe.count() == before + 2);
        CHECK(inflight() == 3);
        CHECK_FALSE(completed(1'000'000)); // the over-completion check still holds
        CHECK(probe.count() == before + 3);
        unqueued(3); // all of it: allowed
        CHECK(probe.count() == before + 3);
        CHECK(inflight() == 0);
    }
    CHECK(f.available() == 100);
}

TEST_CASE("unlimited/fixed: a post past 2^31 - 1 units in flight is refused, never wrapped") {
    // A review (2026-12-06): unlimited, which never asks the producer to stop, took 17 items of
    // max_object units, wrapped its 32-bit books, and sent the next rightful completion to the
    // contract handler as an over-completion.
    test::contract_probe probe;
    constexpr std::uint32_t big = qlimits::fixed_max_object;
    qlimits::unlimited<clock_ms> u({}, tp{});
    int taken = 0;
    for (int i = 0; i < 17; ++i)
        if (u.available() >= 0 && u.on_queued(big)) ++taken;
    CHECK(taken == 8); // 8 x (2^28 - 1) < 2^31 <= 9 x (2^28 - 1)
    CHECK(u.inflight() == 8U * big);
    CHECK(u.stats().rejected_enqueues == 9);
    CHECK(u.on_completed(big, tp{})); // a rightful completion is taken
    CHECK(probe.count() == 0);
    CHECK(u.on_queued(big, tp{})); // room again: 8 x big = 2^31 - 8 in flight
    CHECK(u.on_queued(7));         // exactly 2^31 - 1
    CHECK_FALSE(u.on_queued(1));
    CHECK(u.inflight() == 0x7FFF'FFFFU);
    CHECK(u.on_completed(0x7FFF'FFFFU, tp{}));
    CHECK(u.inflight() == 0);
    // fixed_limit, for a caller that posts without asking available(): the same bound.
    qlimits::fixed_limit<clock_ms> f({.limit = 10}, tp{});
    for (int i = 0; i < 8; ++i) CHECK(f.on_queued(big));
    CHECK_FALSE(f.on_queued(big));
    CHECK(f.inflight() == 8U * big);
    CHECK(f.on_completed(8U * big, tp{}));
    CHECK(probe.count() == 0);
}
