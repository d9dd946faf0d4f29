// RapidCheck properties of qlimits::software_limit over random workloads (tests/unit/
// sw_workload.hpp): bounds and checked<> invariants hold, the limit does not depend on how the
// same takes are reported, and it does not grow while the producer is the bottleneck.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "../unit/sw_workload.hpp"
#include "qlimits/limits/software_limit.hpp"
#include "qlimits/testing/invariants.hpp"

namespace {
using clock_ns = qlimits::manual_clock<std::chrono::nanoseconds>;
using sw = qlimits::software_limit<clock_ns>;

// A random workload: consumer 50 ns - 200 us per item, producer faster or slower, wake-ups
// 0 - 50 us, polls of 8 - 256, rings of 64 - 4096, flood, bursts on a schedule or bursts
// with a pause after each; short runs.
test::workload random_workload() {
    test::workload w;
    w.consumer_ns = *rc::gen::inRange<std::uint64_t>(50, 200'001);
    w.producer_ns = *rc::gen::inRange<std::uint64_t>(20, 2 * w.consumer_ns + 21);
    w.wake_ns = *rc::gen::inRange<std::uint64_t>(0, 50'001);
    w.consumer_wake_ns = *rc::gen::inRange<std::uint64_t>(0, 50'001);
    w.poll_budget = *rc::gen::inRange<std::uint32_t>(8, 257);
    w.ring = *rc::gen::inRange<std::uint32_t>(64, 4097);
    w.burst_every_ns = *rc::gen::element<std::uint64_t>(0, 0, 100'000, 1'000'000);
    // Or bursts with a pause after each (closed loop: the gap term's case).
    if (w.burst_every_ns == 0)
        w.burst_gap_ns = *rc::gen::element<std::uint64_t>(0, 0, 10'000, 100'000);
    w.burst_items = *rc::gen::inRange<std::uint32_t>(1, 257);
    // Long enough for at least ~2000 items and a few estimation windows.
    w.duration_ns = std::clamp<std::uint64_t>(2000 * w.consumer_ns, 5'000'000, 100'000'000);
    return w;
}
} // namespace

TEST_CASE("software_limit properties: limit within bounds and checked<> invariants hold") {
    const bool ok = rc::check("bounds and invariants", [] {
        test::workload w = random_workload();
        w.mode = *rc::gen::element(test::report::per_item, test::report::per_poll,
                                   test::report::coalesced);
        w.take_all = *rc::gen::arbitrary<bool>();
        // Wake calls that cost the consumer 0 - 40 us, told through checked<> (on_wake_call).
        w.wake_call_ns = *rc::gen::element<std::uint64_t>(0, 0, 500, 5'000, 40'000);
        // The consumer's sleeps told (on_consumer_idle) or not, as channel does or a user's
        // own loop may not.
        w.tell_consumer_idle = *rc::gen::arbitrary<bool>();
        qlimits::software_limit_config c{};
        c.min_limit = *rc::gen::inRange<std::uint32_t>(1, 5);
        c.max_limit = *rc::gen::inRange<std::uint32_t>(c.min_limit, 600);
        c.sojourn_budget = std::chrono::nanoseconds{*rc::gen::inRange<std::int64_t>(1, 3'000'000)};
        c.learn_wake_cost = *rc::gen::arbitrary<bool>();
        c.wake_cost = std::chrono::nanoseconds{*rc::gen::inRange<std::int64_t>(0, 100'000)};
        qlimits::testing::checked<sw> p(c, {});
        bool in_bounds = true;
        const auto o = test::drive(p, w, [&](const auto& q, std::uint64_t) {
            in_bounds = in_bounds && q.limit() >= c.min_limit && q.limit() <= c.max_limit;
        });
        RC_ASSERT(in_bounds);
        RC_ASSERT(p.ok());
        // The driver stops when nothing can happen; a producer held then is held for good
        // (review 2026-12-03: the property passed on a policy that deadlocked it).
        RC_ASSERT(!o.held_for_good);
    });
    CHECK(ok);
}

namespace {
// The same takes (a consumer that takes up to a poll's worth at once, then works it off),
// reported two ways; returns the two limit means.
std::pair<double, double> two_reports(test::report a, std::uint64_t grain_a, test::report b,
                                      std::uint64_t grain_b) {
    test::workload w = random_workload();
    w.take_all = true;
    const auto run = [&](test::report mode, std::uint64_t grain) {
        test::workload v = w;
        v.mode = mode;
        v.clock_grain_ns = grain == 0 ? 10 * w.consumer_ns : grain;
        sw p({}, {});
        return test::drive(p, v).limit_mean;
    };
    return {run(a, grain_a), run(b, grain_b)};
}
bool within(double x, double y) {
    // + 1: limits of one or two items differ by a whole item.
    return std::max(x, y) <= 1.5 * std::min(x, y) + 1.0;
}
} // namespace

// Known gap (docs/software_limit.md, "Not met"): on random workloads the two reports of the
// same takes can land on limits further apart than 1.5x (e.g. 287 vs 516 near a large cap);
// kept running so the gap stays visible.
TEST_CASE("software_limit properties: the same takes reported per item or per batch give "
          "limits within 1.5x" * doctest::may_fail()) {
    const bool ok = rc::check("per item vs per batch", [] {
        const auto [item, batch] =
            two_reports(test::report::per_item, 1, test::report::per_poll, 1);
        RC_LOG() << "item " << item << " batch " << batch;
        RC_ASSERT(within(item, batch));
    });
    CHECK(ok);
}

// Known gap (docs/software_limit.md, "Not met"): with one clock reading per ~10 items of work
// the rate and lead samples are quantised and the limit can differ by more than 1.5x.
TEST_CASE("software_limit properties: per item with a coarse clock (one reading per ~10 items' "
          "work) gives limits within 1.5x of a fine one" * doctest::may_fail()) {
    const bool ok = rc::check("fine vs coarse clock", [] {
        const auto [fine, coarse] =
            two_reports(test::report::per_item, 1, test::report::per_item, 0);
        RC_LOG() << "fine " << fine << " coarse " << coarse;
        RC_ASSERT(within(fine, coarse));
    });
    CHECK(ok);
}

TEST_CASE("software_limit properties: no growth while the producer is the bottleneck") {
    const bool ok = rc::check("producer-bound", [] {
        test::workload w = random_workload();
        // The producer takes at least twice the consumer's time per item and never bursts.
        w.producer_ns = *rc::gen::inRange<std::uint64_t>(2 * w.consumer_ns + w.consumer_wake_ns,
                                                         4 * w.consumer_ns + w.consumer_wake_ns + 1);
        w.burst_every_ns = 0;
        w.burst_gap_ns = 0;
        w.mode = *rc::gen::element(test::report::per_item, test::report::per_poll);
        sw p({}, {});
        const std::uint32_t start = p.limit();
        std::uint32_t highest = start;
        const auto o = test::drive(p, w, [&](const sw& q, std::uint64_t) {
            highest = std::max(highest, q.limit());
        });
        RC_ASSERT(o.stops == 0u);
        RC_ASSERT(highest <= start);
        RC_ASSERT(!o.held_for_good);
    });
    CHECK(ok);
}
