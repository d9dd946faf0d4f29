// Unit tests of the baseline policies fixed_limit and unlimited.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>

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
