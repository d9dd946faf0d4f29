// Unit tests of qlimits::software_limit, one mechanism at a time (docs/software_limit.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "contract_probe.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/software_limit.hpp"
#include "sw_workload.hpp"

namespace {
using clock_ns = qlimits::manual_clock<std::chrono::nanoseconds>;
using tp = clock_ns::time_point;
using sw = qlimits::software_limit<clock_ns>;
tp at(std::uint64_t ns) { return tp{std::chrono::nanoseconds{ns}}; }
} // namespace

TEST_CASE("software_limit: config validity, and an invalid config is refused for the defaults") {
    CHECK(qlimits::software_limit_config{}.valid());
    qlimits::software_limit_config c{};
    c.min_limit = 0;
    CHECK_FALSE(c.valid());
    c = {};
    c.min_limit = 10;
    c.max_limit = 9;
    CHECK_FALSE(c.valid());
    c = {};
    c.max_limit = qlimits::software_max_limit + 1;
    CHECK_FALSE(c.valid());
    c = {};
    c.sojourn_budget = std::chrono::nanoseconds{0};
    CHECK_FALSE(c.valid());
    c = {};
    c.window = std::chrono::nanoseconds{-1};
    CHECK_FALSE(c.valid());
    c = {};
    c.wake_cost = std::chrono::nanoseconds{-1};
    CHECK_FALSE(c.valid());
    c = {};
    c.overhead_share_pct = 0;
    CHECK_FALSE(c.valid());
    c.overhead_share_pct = 101;
    CHECK_FALSE(c.valid());

    test::contract_probe probe;
    c.cache_floor = 3;
    sw p(c, at(0));
    CHECK(probe.count() == 1);
    CHECK(p.limit() == 8); // the default cache floor, not the 3 of the refused config
}

TEST_CASE("software_limit: starts at the cache floor within its bounds; available = room left") {
    sw p({}, at(0));
    CHECK(p.limit() == 8);
    CHECK(p.available() == 8);
    for (int i = 0; i < 9; ++i) CHECK(p.on_queued(1));
    CHECK(p.available() == -1); // admitted while >= 0: limit + one item, as dql
    CHECK(p.inflight() == 9);

    qlimits::software_limit_config c{};
    c.cache_floor = 0;
    sw q(c, at(0));
    CHECK(q.limit() == 1); // min_limit
    c.cache_floor = 100;
    c.max_limit = 50;
    sw r(c, at(0));
    CHECK(r.limit() == 50);
}

TEST_CASE("software_limit: refuses over-completion and oversized enqueues, changing nothing") {
    test::contract_probe probe;
    sw p({}, at(0));
    CHECK_FALSE(p.on_queued(qlimits::software_max_object + 1));
    CHECK(p.stats().rejected_enqueues == 1);
    CHECK(p.on_queued(3));
    CHECK_FALSE(p.on_completed(4, at(10)));
    CHECK(probe.count() == 1);
    CHECK(p.inflight() == 3);
    CHECK(p.on_completed(3, at(10)));
    CHECK(p.inflight() == 0);
    p.reset(at(20));
    CHECK(p.stats().rejected_enqueues == 1); // a lifetime count, kept as documented
}

TEST_CASE("software_limit: counters wrap at 2^32 without harm") {
    sw p({}, at(0));
    const std::uint32_t big = qlimits::software_max_object;
    std::uint64_t now = 0;
    // 17 objects of 2^28 - 1 units carry the counters past 2^32.
    for (int i = 0; i < 17; ++i) {
        CHECK(p.on_queued(big));
        CHECK(p.on_completed(big, at(now += 1000)));
        CHECK(p.inflight() == 0);
    }
    CHECK(p.on_queued(5));
    CHECK(p.inflight() == 5);
    CHECK(p.on_completed(5, at(now += 1000)));
    CHECK(p.limit() >= 1);
    CHECK(p.limit() <= qlimits::software_limit_config{}.max_limit);
}

TEST_CASE("software_limit: a clock that wraps past 2^64 changes nothing") {
    // clock.hpp: times compare modulo 2^64. Two policies see the same calls, one with its clock
    // 2 ms below zero, so its ticks wrap to 0 early in the run. A review (2026-12-04) found the
    // deadlines saturated, not wrapped: after the wrap the gap term stayed off for good (every
    // later gap stage `none`) and windows rolled late, so limits differed from the unshifted run.
    qlimits::software_limit_config cfg;
    cfg.sojourn_budget = std::chrono::microseconds{20};
    cfg.window = std::chrono::microseconds{200};
    const std::uint64_t shift = std::uint64_t{0} - 2'000'000;
    sw a(cfg, at(0)), b(cfg, at(shift));
    std::mt19937_64 rng(3);
    std::uint64_t t = 0, inflight = 0;
    std::uint64_t differing = 0, gap_active_after_wrap = 0;
    for (int i = 0; i < 200000; ++i) {
        const auto op = rng() % 10;
        if (op < 4) {
            if (a.available() >= 0) {
                const auto n = static_cast<std::uint32_t>(1 + rng() % 4);
                REQUIRE(a.on_queued(n));
                REQUIRE(b.on_queued(n));
                inflight += n;
            }
        } else if (op < 7) {
            const auto n = static_cast<std::uint32_t>(rng() % (inflight + 1));
            REQUIRE(a.on_completed(n, at(t)));
            REQUIRE(b.on_completed(n, at(t + shift)));
            inflight -= n;
        } else {
            t += rng() % 3000;
        }
        const auto sa = a.stats(), sb = b.stats();
        if (sa.limit != sb.limit || sa.available != sb.available || sa.step != sb.step ||
            sa.cap != sb.cap || sa.gap_stage != sb.gap_stage || sa.stops != sb.stops)
            ++differing;
        if (t > 2'000'000 && sb.gap_stage != qlimits::software_gap_stage::none)
            ++gap_active_after_wrap;
    }
    REQUIRE(t > 4'000'000); // the run goes well past the wrap
    CHECK(differing == 0);
    CHECK(gap_active_after_wrap > 0); // the workload does use the gap term after the wrap
}

TEST_CASE("software_limit: a producer posting 2^31 past its room is still held by the room it is given") {
    // A producer that ignores available() until queued - room wraps the signed 32-bit
    // comparison. A completion then gives room at the new completed count, and the producer is
    // over it again: it is held, and the next completion must not give room again (as for any
    // held producer: room comes once inflight <= limit + 1 - step). A review found the inline
    // look for a running producer (running_look) giving room here, where the slow path did not.
    sw p({}, at(0));
    REQUIRE(p.on_queued(5));
    REQUIRE(p.on_completed(1, at(1000)));
    for (int i = 0; i < 8; ++i) REQUIRE(p.on_queued(qlimits::software_max_object));
    REQUIRE(p.on_queued(12)); // queued: 2^31 + 9
    REQUIRE(p.on_completed(1, at(2000)));
    const std::int64_t given = p.available();
    REQUIRE(p.on_queued(1));
    REQUIRE(p.on_completed(1, at(3000)));
    CHECK(p.available() == given - 1); // one more posted, no new room
    CHECK(p.limit() == 8);
}

TEST_CASE("software_limit: reset forgets what is in flight and every estimate") {
    sw p({}, at(0));
    test::workload w;
    (void)test::drive(p, w);
    CHECK(p.stats().drain_rate_per_s > 0);
    p.reset(at(w.duration_ns + 1));
    CHECK(p.inflight() == 0);
    CHECK(p.limit() == 8);
    CHECK(p.available() == 8);
    CHECK(p.stats().drain_rate_per_s == 0);
    CHECK(p.stats().sojourn_samples == 0);
}

TEST_CASE("software_limit: estimates the drain rate while there is a backlog") {
    sw p({}, at(0));
    test::workload w; // consumer 450 ns per item: 2.22 M/s
    (void)test::drive(p, w);
    const auto s = p.stats();
    CHECK(s.sojourn_samples > 100);
    CHECK(s.drain_rate_per_s > 1.9e6);
    CHECK(s.drain_rate_per_s < 2.5e6);
}

TEST_CASE("software_limit: on_taken counts a take as work still to do in its drain rate") {
    // A consumer that takes up to 8 at once and then works them off (585 ns each: 1.71 M/s),
    // reporting each take through on_taken. A probe armed at a take that leaves a small backlog
    // ends at the next take, after the consumer worked off the take that armed it: counting only
    // the backlog took 1 unit in the time of 8 for the drain rate. Measured on this workload
    // before the fix (producer 400 ns, 4 us wake-ups): 0.64 M/s and the limit at the cache
    // floor (8); in the lab (thread-ring, batch 8) it spiralled to 0.36x of no limit.
    for (const std::uint64_t wake : {1'000ULL, 4'000ULL, 15'000ULL}) {
        CAPTURE(wake);
        sw p({}, at(0));
        test::workload w;
        w.take_all = true;
        w.poll_budget = 8;
        w.lazy_time = true;
        w.mode = test::report::per_poll;
        w.producer_ns = 400;
        w.consumer_ns = 585;
        w.wake_ns = wake;
        const auto o = test::drive(p, w);
        const auto s = p.stats();
        CAPTURE(s.limit);
        CAPTURE(o.taken);
        CHECK(s.sojourn_samples > 100);
        CHECK(s.drain_rate_per_s > 1.5e6);
        CHECK(s.drain_rate_per_s < 1.9e6);
    }
}

TEST_CASE("software_limit: the sojourn budget caps the limit (drain rate x budget)") {
    // A slow consumer, 20 us per item: 100 us of budget is 5 items.
    test::workload w;
    w.consumer_ns = 20'000;
    sw p({}, at(0));
    const auto o = test::drive(p, w);
    CHECK(p.stats().cap <= 5);
    CHECK(o.limit_max <= 5);
    CHECK(o.taken > 900); // 20 ms / 20 us, minus a start
    // A budget of 1 ms lets it go to the lead + step it needs, still under 50.
    qlimits::software_limit_config c{};
    c.sojourn_budget = std::chrono::milliseconds{1};
    sw q(c, at(0));
    (void)test::drive(q, w);
    CHECK(q.stats().cap >= 45);
    CHECK(q.stats().cap <= 55);
}

TEST_CASE("software_limit: a budget longer than the window measures the rate within a window") {
    // The drain meter averages over the budget, but over no more than one estimate window (1 ms
    // by default): with a 1 s budget it gave no rate for a second, and the limit sat at the
    // cache floor, the producer stopped at every few items (review, 2026-12-04).
    test::workload w; // consumer 450 ns per item, 20 ms
    sw dflt({}, at(0));
    const auto base = test::drive(dflt, w);
    for (const auto budget : {std::chrono::nanoseconds{std::chrono::milliseconds{10}},
                              std::chrono::nanoseconds{std::chrono::seconds{1}},
                              std::chrono::nanoseconds{std::chrono::hours{1}}}) {
        CAPTURE(budget.count());
        qlimits::software_limit_config c{};
        c.sojourn_budget = budget;
        sw p(c, at(0));
        const auto o = test::drive(p, w);
        const auto s = p.stats();
        CHECK(s.drain_rate_per_s > 1.9e6);
        CHECK(s.drain_rate_per_s < 2.5e6);
        CHECK(o.taken >= base.taken * 95 / 100); // no fewer items than with 100 us
    }
}

TEST_CASE("software_limit: a consumer that slows down is cut to the budget within about one") {
    sw p({}, at(0));
    test::workload w; // fast consumer first
    w.duration_ns = 5'000'000;
    (void)test::drive(p, w);
    // Now each item takes 50 us: anything queued beyond 2 items waits over the budget.
    std::uint64_t now = w.duration_ns + 1000;
    p.reset(at(now));
    for (int i = 0; i < 9; ++i) p.on_queued(1);
    std::uint32_t limit_after = 0;
    for (int i = 0; i < 9; ++i) {
        now += 50'000;
        p.on_completed(1, at(now));
        if (i == 3) limit_after = p.limit(); // 200 us later
    }
    CHECK(limit_after <= 2);
    CHECK(p.stats().budget_cuts >= 1);
}

TEST_CASE("software_limit: a window's end forgets the window before it at that completion") {
    // The cap plans with the slowest drain-rate reading of this and the last estimate window
    // (1 ms by default, the first starting at construction). A consumer at 2 us per item in
    // [0, 1 ms) and 0.2 us from then on, with 50 in flight throughout: the slow readings go at
    // the completion that ends the second window (t = 2 ms exactly), and the cap follows at that
    // completion, not at the next one (a roll that did not recompute was late by one).
    sw p({}, at(0));
    p.on_queued(50);
    std::uint64_t t = 0;
    std::uint32_t cap_slow = 0, cap_before = 0, cap_at = 0;
    while (t < 2'000'000) {
        t += t < 1'000'000 ? 2'000 : 200;
        p.on_completed(1, at(t));
        p.on_queued(1);
        const std::uint32_t cap = p.stats().cap;
        if (t == 1'500'000) cap_slow = cap;
        if (t == 2'000'000 - 200) cap_before = cap;
        if (t == 2'000'000) cap_at = cap;
    }
    CAPTURE(cap_slow);
    CAPTURE(cap_before);
    CAPTURE(cap_at);
    CHECK(cap_slow <= 55);          // 0.5 M/s x 100 us = 50: the slow window still counts
    CHECK(cap_before == cap_slow);  // until the second window ends
    CHECK(cap_at >= 4 * cap_slow);  // 5 M/s x 100 us = 500 (less the meter's rounding)
}

TEST_CASE("software_limit: a fast producer gets room in steps (one stop moves many items)") {
    // Producer 50 ns per item, consumer 500 ns: the producer hits the limit every cycle. A 2 us
    // wake costs 4 items of consumer work, so at a 10% share a cycle must move ~40 items.
    test::workload w;
    w.producer_ns = 50;
    w.consumer_ns = 500;
    w.wake_ns = 2000;
    sw p({}, at(0));
    std::uint32_t max_step = 0;
    std::uint64_t completions = 0, gifts = 0;
    (void)test::drive(p, w, [&](const sw& q, std::uint64_t t) {
        if (t < w.duration_ns / 2) return;
        max_step = std::max(max_step, q.stats().step);
        ++completions;
        // available + inflight = room given - completed: it equals the limit right after room
        // was given, and falls by one per completion until the next gift.
        if (q.available() + q.inflight() == q.limit()) ++gifts;
    });
    CHECK(max_step >= 20);
    CHECK(gifts * 10 <= completions); // room given at most once per 10 completions
    CHECK(p.stats().stop_frequency > 0.5);
}

TEST_CASE("software_limit: a producer barely faster than the consumer stops at the limit") {
    // Producer 430 ns per item, consumer 450 ns (veth-bql --nrules=0's ratio), 500 ns wake-ups:
    // the producer reaches the limit slowly. Room for a running producer is given every
    // min(step, limit / 8) completions, so it is never stopped with much less than the limit
    // in flight.
    // When room came every `step` completions (until 2026-12-02), this case settled at limit
    // 47, step 45: the producer ran out of a stale room a few items above the consumer and
    // stopped about once per step (489 of 1602 stops with under 7/8 of the limit in flight),
    // and those stops kept the step high (lab T1: 0.977x none's throughput).
    for (const bool lazy : {false, true}) {
        CAPTURE(lazy);
        test::workload w;
        w.producer_ns = 430;
        w.consumer_ns = 450;
        w.wake_ns = 500;
        w.consumer_wake_ns = 500;
        w.lazy_time = lazy;
        sw p({}, at(0));
        const auto o = test::drive(p, w);
        CHECK(o.stops > 0);
        CHECK(o.early_stops == 0);
        // Stops per item far below one per step: each cycle moves what the producer gains.
        CHECK(o.stops * p.stats().step * 4 < o.taken);
    }
}

TEST_CASE("software_limit: the wake cost is learned from the producer's wake-up waits") {
    // Producer 50 ns per item, consumer 500 ns: the producer stops every cycle, so every cycle
    // is a sample of how long it takes to post again once given room.
    struct run_result {
        double cost_ns;
        std::uint32_t step;
    };
    const auto run = [](std::uint64_t wake_ns, bool learn, std::uint64_t prior_ns,
                        bool lazy = false) {
        test::workload w;
        w.lazy_time = lazy;
        w.producer_ns = 50;
        w.consumer_ns = 500;
        w.wake_ns = wake_ns;
        qlimits::software_limit_config cfg{};
        cfg.learn_wake_cost = learn;
        cfg.wake_cost = std::chrono::nanoseconds{prior_ns};
        sw p(cfg, at(0));
        CHECK(p.stats().wake_cost_ns == doctest::Approx(static_cast<double>(prior_ns)));
        run_result r{0, 0};
        (void)test::drive(p, w, [&](const sw& q, std::uint64_t t) {
            if (t >= w.duration_ns / 2) r.step = std::max(r.step, q.stats().step);
        });
        CHECK(p.stats().stops > 100);
        r.cost_ns = p.stats().wake_cost_ns;
        return r;
    };
    // A producer that sleeps deeply: the wait is the wake latency plus the producer's next item
    // (and, where the ring ran dry meanwhile, the consumer's own wake-up, 2 us here), seen at
    // completion times; the step grows with it.
    const run_result slow = run(20'000, true, 2000);
    CHECK(slow.cost_ns > 18'000);
    CHECK(slow.cost_ns < 25'000);
    const run_result slow_prior = run(20'000, false, 2000);
    CHECK(slow_prior.cost_ns == doctest::Approx(2000)); // not learning: the prior stays
    CHECK(slow.step > slow_prior.step);
    // The same through on_taken() (the time read only when needed).
    const run_result slow_lazy = run(20'000, true, 2000, true);
    CHECK(slow_lazy.cost_ns > 18'000);
    CHECK(slow_lazy.cost_ns < 25'000);
    // A producer that posts at once (it spins): the prior is a floor, and the policy behaves
    // as without learning...
    const run_result floored = run(0, true, 2000);
    CHECK(floored.cost_ns == doctest::Approx(2000));
    CHECK(floored.step == run(0, false, 2000).step);
    // ... unless it is 0: then it learns what the waits show. A post seen on the first
    // completion after room was given is priced by the units (none), not by half a consumer
    // item of ticks: the spinning producer stays nearly free to wake, with the step of a prior
    // of 0, in both modes.
    const run_result fast = run(0, true, 0);
    CHECK(fast.cost_ns < 50);
    CHECK(run(0, true, 0, true).cost_ns < 50);
    CHECK(fast.step == run(0, false, 0).step);
    // With a slow consumer (20 us per item) a 2 us wake is not priced at the ~10 us of half an
    // item between two completions: a wait shorter than one completion interval is not resolved
    // and counts as none (a nonzero prior would then be the floor).
    test::workload w;
    w.producer_ns = 50;
    w.consumer_ns = 20'000;
    w.wake_ns = 2000;
    qlimits::software_limit_config cfg{};
    cfg.learn_wake_cost = true;
    cfg.wake_cost = std::chrono::nanoseconds{0};
    sw p(cfg, at(0));
    (void)test::drive(p, w);
    CHECK(p.stats().stops > 100);
    CHECK(p.stats().wake_cost_ns < 4'000);
}

namespace {
// Producer 50 ns per item, consumer 500 ns, wake-ups of 5 us, each costing the consumer a call
// of `call_ns` (the wake-up's system call, timed by channel), told to the policy or not.
test::workload costly_wake_calls(std::uint64_t call_ns, bool tell, int mode) {
    test::workload w;
    w.producer_ns = 50;
    w.consumer_ns = 500;
    w.wake_ns = 5000;
    w.wake_call_ns = call_ns;
    w.tell_wake_calls = tell;
    w.lazy_time = true;
    w.ring = 4096;
    w.duration_ns = 40'000'000;
    if (mode == 1) { // takes of up to 64, as receive_batch
        w.take_all = true;
        w.poll_budget = 64;
    }
    return w;
}
} // namespace

TEST_CASE("software_limit: wake calls told by the adapter are priced, and left out of the rate") {
    // Each wake-up costs the consumer 30 us (60 items of its work). Untold, the policy prices a
    // wake-up at the 2 us prior and measures a drain rate with the calls in it: the rate falls
    // with every stop, the cap (rate x budget) with it, and the limit spirals down (a limit of
    // 11 moving 0.15x the items of no limit, per item; 0.50x taking 64 at once). Told, the step
    // pays for the call and the rate is the consumer's own (2 M/s): 0.65x / 0.72x in this
    // driver, where no limit never wakes the producer at all. Measured 2026-12-03, and again
    // 2026-12-04 after two fixes: the driver told a call between the parts of a take (channel
    // makes it after the whole take), and an empty moment counted every unit completed since
    // the last one as in hand (a take-all consumer read at up to 10x its rate). Between them
    // they read 2.5 M/s taking 64 at once; either fix alone left the items up to 172 us.
    for (const int mode : {0, 1}) {
        CAPTURE(mode);
        sw told({}, at(0));
        const auto o = test::drive(told, costly_wake_calls(30'000, true, mode));
        sw untold({}, at(0));
        const auto u = test::drive(untold, costly_wake_calls(30'000, false, mode));
        qlimits::unlimited<clock_ns> none({}, at(0));
        const auto n = test::drive(none, costly_wake_calls(30'000, true, mode));
        const auto s = told.stats();
        CAPTURE(o.taken);
        CAPTURE(u.taken);
        CAPTURE(n.taken);
        CHECK(s.wake_cost_ns == doctest::Approx(30'000).epsilon(0.02));
        CHECK(untold.stats().wake_cost_ns == doctest::Approx(2000));
        CHECK(s.drain_rate_per_s >= 1.9e6);
        CHECK(s.drain_rate_per_s <= 2.1e6);
        CHECK(untold.stats().drain_rate_per_s < 1.2e6);
        CHECK(static_cast<double>(o.taken) >= 0.6 * static_cast<double>(n.taken));
        // 4.2x per item, 1.46x taking 64 at once (each take then moves 64 between calls).
        const double gain = mode == 0 ? 3.0 : 1.3;
        CHECK(static_cast<double>(o.taken) >= gain * static_cast<double>(u.taken));
        // Items wait within the budget: the cap counts the calls they wait through (without
        // that term, 122-164 us). Measured: 100 us per item, 93 us taking 64 at once.
        CHECK(o.sojourn_max_ns <= 100'000);
    }
}

namespace {
// A consumer that takes up to 16 at once (250 ns each, 4 M/s) and sleeps whenever the ring is
// empty, paying 43 us to come back; each wake-up of the producer costs it a 40 us call and the
// producer 40 us more.
test::workload sleepy_take_all() {
    test::workload w;
    w.producer_ns = 50;
    w.consumer_ns = 250;
    w.wake_ns = 40'000;
    w.wake_call_ns = 40'000;
    w.consumer_wake_ns = 43'000;
    w.lazy_time = true;
    w.take_all = true;
    w.poll_budget = 16;
    w.ring = 4096;
    w.duration_ns = 40'000'000;
    return w;
}
} // namespace

TEST_CASE("software_limit: the consumer's sleeps told by the adapter are left out of the rate") {
    // sleepy_take_all(). Untold, the time between two empty moments holds the sleep:
    // the rate reads at a fraction of the consumer's pace, the cap (rate x budget) falls, the
    // ring runs dry sooner, and the consumer sleeps more (measured 2026-12-04: a limit of 4,
    // 0.06 M/s, 1.1 % of no limit's items). Told, as channel tells its futex waits, the rate
    // is the consumer's own and the limit is what the budget allows (240: 26x the items).
    test::workload w = sleepy_take_all();
    sw untold({}, at(0));
    const auto u = test::drive(untold, w);
    w.tell_consumer_idle = true;
    sw told({}, at(0));
    const auto o = test::drive(told, w);
    CAPTURE(o.taken);
    CAPTURE(u.taken);
    CHECK(told.stats().drain_rate_per_s == doctest::Approx(4e6).epsilon(0.02));
    CHECK(untold.stats().drain_rate_per_s < 1e6);
    CHECK(static_cast<double>(o.taken) >= 10.0 * static_cast<double>(u.taken));
    CHECK(o.limit_mean > 100);
    // Within the budget, but for the consumer's own wake-up (an item posted to the empty ring
    // waits for it whatever the limit): measured 131 us.
    CHECK(o.sojourn_max_ns <= 100'000 + w.consumer_wake_ns);
}

TEST_CASE("software_limit: an idle told changes no count, and a negative one counts as 0") {
    sw p({}, at(0));
    REQUIRE(p.on_queued(10, at(0)));
    const std::uint32_t lim = p.limit();
    p.on_consumer_idle(std::chrono::nanoseconds{-5});
    p.on_consumer_idle(std::chrono::nanoseconds{1'000'000});
    CHECK(p.limit() == lim); // an input of the rate samples to come, not of the limit now
    CHECK(p.inflight() == 10);
    CHECK(p.available() == static_cast<std::int64_t>(p.limit()) - 10);
    CHECK(p.on_completed(10, at(2'000'000)));
    CHECK(p.inflight() == 0);
    p.reset(at(3'000'000));
    CHECK(p.inflight() == 0);
}

TEST_CASE("software_limit: weigh_wake_calls = false ignores the calls told") {
    qlimits::software_limit_config off{};
    off.weigh_wake_calls = false;
    sw told(off, at(0));
    const auto o = test::drive(told, costly_wake_calls(30'000, true, 0));
    sw untold({}, at(0));
    const auto u = test::drive(untold, costly_wake_calls(30'000, false, 0));
    CHECK(o.taken == u.taken);
    CHECK(o.limit_mean == u.limit_mean);
    CHECK(told.stats().wake_cost_ns == doctest::Approx(2000));
}

TEST_CASE("software_limit: wake calls cheaper than the prior change nothing but the rate") {
    // 500 ns calls (a futex wake of a sleeping thread costs the waker about that): the prior of
    // 2 us stays in force, and the policy lands where it does untold, within a few percent.
    sw told({}, at(0));
    const auto o = test::drive(told, costly_wake_calls(500, true, 0));
    sw untold({}, at(0));
    const auto u = test::drive(untold, costly_wake_calls(500, false, 0));
    CHECK(told.stats().wake_cost_ns == doctest::Approx(2000));
    CHECK(o.limit_mean == doctest::Approx(u.limit_mean).epsilon(0.1));
    const auto moved = static_cast<double>(o.taken);
    CHECK(moved == doctest::Approx(static_cast<double>(u.taken)).epsilon(0.02));
}

TEST_CASE("software_limit: on_wake_call takes a negative duration as 0, and reset forgets calls") {
    sw p({}, at(0));
    p.on_wake_call(std::chrono::nanoseconds{-5000});
    CHECK(p.stats().wake_cost_ns == doctest::Approx(2000));
    for (int i = 0; i < 64; ++i) p.on_wake_call(std::chrono::nanoseconds{50'000});
    CHECK(p.stats().wake_cost_ns > 45'000);
    CHECK(p.stats().wake_cost_ns <= 50'000);
    // One call longer than the budget counts as one budget (a preemption, not a cost to plan).
    sw q({}, at(0));
    q.on_wake_call(std::chrono::seconds{10});
    CHECK(q.stats().wake_cost_ns == doctest::Approx(100'000.0 / 8.0));
    p.reset(at(1000));
    CHECK(p.stats().wake_cost_ns == doctest::Approx(2000));
    // Nothing in flight moved: calls change no count.
    CHECK(p.inflight() == 0);
    CHECK(p.available() == p.limit());
}

TEST_CASE("software_limit: no growth while the producer is the bottleneck") {
    // Producer 2 us per item, consumer 450 ns: the ring never holds more than one or two items.
    test::workload w;
    w.producer_ns = 2000;
    sw p({}, at(0));
    const std::uint32_t start = p.limit();
    const auto o = test::drive(p, w);
    CHECK(o.limit_max <= start);
    CHECK(o.stops == 0);
    CHECK(p.stats().lead == 0);
}

TEST_CASE("software_limit: per-poll completions make room for the poll (the batch term)") {
    test::workload w;
    w.mode = test::report::per_poll;
    sw p({}, at(0));
    const auto o = test::drive(p, w);
    // A poll of up to 64 is reported at its end: room below 64 would dry the ring every poll.
    CHECK(o.limit_mean > 64);
    CHECK(o.limit_max <= p.stats().cap);
    // Throughput close to the consumer's 2.22 M/s over 20 ms.
    CHECK(o.taken > 40'000);
}

TEST_CASE("software_limit: a coarse clock (one reading for many completions) does no harm") {
    sw p({}, at(0));
    std::uint64_t now = 0;
    for (int round = 0; round < 1000; ++round) {
        while (p.available() >= 0) p.on_queued(1);
        const std::uint32_t n = p.inflight();
        for (std::uint32_t i = 0; i < n; ++i) p.on_completed(1, at(now)); // all at one time
        now += 1'000'000; // the clock moves only between rounds (a 1 ms tick)
        CHECK(p.limit() >= 1);
        CHECK(p.limit() <= qlimits::software_limit_config{}.max_limit);
    }
    CHECK(p.inflight() == 0);
}

TEST_CASE("software_limit: works on the jiffy clock (1 ms ticks) with a budget below a tick") {
    qlimits::software_limit<qlimits::manual_clock<std::chrono::milliseconds>> p(
        {}, qlimits::manual_clock<std::chrono::milliseconds>::time_point{});
    test::workload w;
    w.duration_ns = 50'000'000;
    const auto o = test::drive(p, w);
    CHECK(o.taken > 50'000);
    CHECK(p.limit() >= 1);
}

TEST_CASE("software_limit: one sample over the budget (not twice it) cuts the limit") {
    // Kills the mutant sw-budget (a cut only at twice the budget). The probe arms at the first
    // completion with 8 items behind it; they all complete in one call 150 us later: one sample
    // of 150 us against the default 100 us budget, and no earlier completion for the in-probe
    // check to act on. 8 items in 150 us is 5.3 items per budget: the limit is cut to 5.
    sw p({}, at(0));
    REQUIRE(p.limit() == 8);
    for (int i = 0; i < 9; ++i) REQUIRE(p.on_queued(1));
    REQUIRE(p.on_completed(1, at(10'000)));
    REQUIRE(p.on_completed(8, at(160'000)));
    CHECK(p.stats().budget_cuts == 1);
    CHECK(p.limit() == 5);
}

namespace {
// Flood: 20 ns to post, 50 ns per item (20 units/us), a ring of 4096, 40 ms; the producer
// takes `wake_ns` to wake.
test::workload slow_wake_flood(std::uint64_t wake_ns) {
    test::workload w;
    w.producer_ns = 20;
    w.consumer_ns = 50;
    w.wake_ns = wake_ns;
    w.ring = 4096;
    w.duration_ns = 40'000'000;
    return w;
}
} // namespace

TEST_CASE("software_limit: a wake-up that runs the ring dry extends the lead by the idle") {
    // A producer that takes 50 us to wake, a consumer at 50 ns per item, a ring of 4096: the
    // consumer drains what was in flight when room was given and idles for the rest of the
    // wake-up. What completed in the wait is then about the limit itself; counted alone it
    // holds the limit near where it is (before: lead 587, limit mean 432 in this run). The
    // idle, at the drain rate, is added: the lead covers the ~1000 units of the wait.
    const test::workload w = slow_wake_flood(50'000);
    sw p({}, at(0));
    const auto o = test::drive(p, w);
    const auto s = p.stats();
    CHECK(s.lead >= 750);
    CHECK(o.limit_mean >= 600);
    CHECK(o.limit_max <= s.cap);
    // The drain rate and the cap end where the consumer's speed puts them (20 units/us, 2000).
    // (They do with or without dry waits kept out of the rate samples, once the lead is large
    // enough: that rule is guarded by "a producer slow to wake still keeps a fast consumer
    // busy" and the lab's thread-ring test of a take-everything consumer.)
    CHECK(s.drain_rate_per_s >= 0.9 * 20e6);
    CHECK(s.cap >= 1800);
}

TEST_CASE("software_limit: a lead no sample renews halves at each window's end") {
    // A starved wake-up's lead sample (here ~1000 units: a 50 us wake-up of a producer feeding a
    // 50 ns consumer) is what the limit must cover; the samples taken once the limit covers it
    // are shorter. Forgotten two windows later (before 2026-12-06), the lead fell to 0 at once
    // and the limit flipped back until the next starvation. Now, once no sample renews it (a
    // producer that no longer outruns the consumer), it halves at the end of every 1 ms window,
    // and the limit comes down with it to the cache floor within about log2(1000) windows.
    sw p({}, at(0));
    (void)test::drive(p, slow_wake_flood(50'000));
    std::uint64_t t = 40'000'000;
    while (p.inflight() > 0) REQUIRE(p.on_completed(1, at(t += 50)));
    std::vector<std::uint32_t> lead;
    for (int window = 0; window < 8; ++window) { // one post and its completion per microsecond
        for (int i = 0; i < 1000; ++i) {
            REQUIRE(p.on_queued(1));
            REQUIRE(p.on_completed(1, at(t += 1000)));
        }
        lead.push_back(p.stats().lead);
    }
    CAPTURE(lead);
    REQUIRE(lead[0] >= 750);
    for (std::size_t k = 1; k < lead.size(); ++k) {
        CHECK(lead[k] + 1 >= lead[k - 1] / 2);
        CHECK(lead[k] <= lead[k - 1] / 2 + 1);
    }
    CHECK(p.limit() <= 16);
}

TEST_CASE("software_limit: a producer slow to wake still keeps a fast consumer busy") {
    // Flood, 20 ns to post, 50 ns per item, wake-ups of 5-50 us: the limit must hold a whole
    // wake-up's worth of work (100-1000 units) when room is given. Deterministic runs of the
    // unit driver (items moved, not timings). Before the idle was added to a dry wait's lead:
    // 0.91 / 0.77 / 0.32x unlimited; with it 0.91 / 0.83 / 0.76x; with dry waits also kept out
    // of the rate samples (and room given at an empty ring starting one): 0.96 / 0.94 / 0.87x.
    for (const auto& c : {std::pair{5'000U, 0.93}, std::pair{20'000U, 0.90},
                          std::pair{50'000U, 0.80}}) {
        const unsigned wake_ns = c.first;
        const double at_least = c.second;
        CAPTURE(wake_ns);
        const test::workload w = slow_wake_flood(wake_ns);
        sw p({}, at(0));
        const auto o = test::drive(p, w);
        qlimits::unlimited<clock_ns> u({}, at(0));
        const auto all = test::drive(u, w);
        CHECK(static_cast<double>(o.taken) >= at_least * static_cast<double>(all.taken));
    }
}

namespace {
// After a completion, a producer still held back (available() < 0) must have more in flight
// than limit + 1 - step: the completion that brings it there gives room. The fast path skips
// the slow one only until then, or until an input of the limit changes. One completion late is
// allowed: the completion side reads the producer's count once per step, not per item, so a
// producer that went over the limit since that reading is seen at the next step (by then the
// limit may have grown by one since the room was given; the next completion gives room).
struct room_on_time {
    std::uint64_t completions = 0, held = 0, late = 0, late_twice = 0, short_room = 0;
    bool was_late = false;
    void operator()(const sw& q, std::uint64_t) {
        ++completions;
        const bool last_late = was_late;
        was_late = false;
        if (q.available() >= 0) {
            // A running producer can post until more than limit + 1 - step are in flight: room
            // is given every step completions, and at once when the limit changes (a limit
            // that grew while the old room stood would hold it back early, unseen).
            const auto s = q.stats();
            if (q.available() + std::int64_t{q.inflight()} <
                std::int64_t{s.limit} + 1 - std::int64_t{s.step})
                ++short_room;
            return;
        }
        ++held;
        const auto s = q.stats();
        if (std::int64_t{q.inflight()} > std::int64_t{s.limit} + 1 - std::int64_t{s.step}) return;
        ++late;
        was_late = true;
        if (last_late) ++late_twice;
    }
};
} // namespace

TEST_CASE("software_limit: a held producer gets room at the completion that makes it due") {
    for (const auto mode : {test::report::per_item, test::report::per_poll,
                            test::report::coalesced}) {
        for (const std::uint64_t consumer_ns : {50U, 450U, 5'000U}) {
            CAPTURE(static_cast<int>(mode));
            CAPTURE(consumer_ns);
            test::workload w;
            w.mode = mode;
            w.producer_ns = 30;
            w.consumer_ns = consumer_ns;
            w.duration_ns = 10'000'000;
            for (const bool lazy : {false, true}) { // on_completed, on_taken
                CAPTURE(lazy);
                w.lazy_time = lazy;
                sw p({}, at(0));
                room_on_time check;
                (void)test::drive(p, w, std::ref(check));
                if (mode == test::report::per_item) CHECK(check.held > 100); // the case at stake
                CHECK(check.late_twice == 0);
                CHECK(check.short_room == 0);
                CHECK(check.late * 1000 <= check.held);
            }
        }
    }
}

TEST_CASE("software_limit: a producer far over the limit gets room exactly when it is due") {
    // A caller that posts without asking available() (1000 units over a limit of 8), then one
    // completion per 10 ns: the slow path is skipped until the completions reach the due
    // count (limit + 1 - step in flight), and room comes at that very completion.
    sw p({}, at(0));
    for (int i = 0; i < 1000; ++i) REQUIRE(p.on_queued(1));
    room_on_time check;
    std::uint64_t now = 0, first_room = 0;
    for (std::uint64_t i = 1; i <= 1000 && first_room == 0; ++i) {
        now += 10;
        REQUIRE(p.on_completed(1, at(now)));
        check(p, now);
        if (p.available() >= 0) first_room = i;
    }
    CHECK(check.late == 0);
    const auto s = p.stats();
    CHECK(first_room == 1000 - (std::uint64_t{s.limit} + 1 - s.step));
    CHECK(p.inflight() == s.limit + 1 - s.step);
}

TEST_CASE("software_limit: a batch taken at once and reported item by item makes room as one") {
    // A consumer takes up to 64 at once and works them off (450 ns each) behind a producer at
    // 10 ns per item. Reported item by item (all at the take's time) the batch grows with each
    // report; the limit must follow at once (a new largest batch makes the completion look
    // again), not at the count at which room was due under the old limit. It then lands near
    // the limit the same takes give when reported at once.
    test::workload w;
    w.take_all = true;
    w.producer_ns = 10;
    w.consumer_ns = 450;
    w.duration_ns = 10'000'000;
    const auto limit_mean = [&](test::report mode) {
        test::workload v = w;
        v.mode = mode;
        sw p({}, at(0));
        return test::drive(p, v).limit_mean;
    };
    const double item = limit_mean(test::report::per_item);
    const double batch = limit_mean(test::report::per_poll);
    CAPTURE(item);
    CAPTURE(batch);
    CHECK(item >= 0.85 * batch);
    CHECK(item <= 1.15 * batch);
}

TEST_CASE("software_limit: a take is work in hand: the limit covers the take or the lead") {
    // A consumer takes up to 64 at once, then works them off (450 ns each), behind a producer at
    // 100 ns per item. Reported after the work (on_completed()), room comes in batches of 64
    // that are gone: the ring must still hold the lead, limit = lead + 64 - 1 (95 here).
    // Reported as takes, the 64 taken are still to be worked off while the producer wakes: they
    // cover the lead, and the limit need only let a take of 64 happen (64), with the same items
    // moved and no longer a worst sojourn.
    for (const std::uint64_t wake : {1'000ULL, 5'000ULL}) {
        CAPTURE(wake);
        test::workload w;
        w.take_all = true;
        w.mode = test::report::per_poll;
        w.producer_ns = 100;
        w.consumer_ns = 450;
        w.wake_ns = wake;
        sw after_work({}, at(0));
        const auto a = test::drive(after_work, w);
        w.timed_takes = true;
        sw takes({}, at(0));
        const auto b = test::drive(takes, w);
        CAPTURE(a.limit_mean);
        CAPTURE(b.limit_mean);
        CHECK(b.limit_mean <= 0.75 * a.limit_mean);
        CHECK(b.limit_mean >= 64.0);
        CHECK(b.taken >= a.taken - a.taken / 200);
        CHECK(b.sojourn_max_ns <= a.sojourn_max_ns);
    }
}

TEST_CASE("software_limit: the parts of one take are one batch at one time (on_taken, same_take)") {
    // channel's receive_batch() completed per item: a consumer takes up to 64 at once (its pops
    // 10 ns apart), then works each off, and reports every item through on_taken(). Marked as
    // parts of one take, they must count as one batch (the limit lands where the same takes
    // reported at once put it, as on_completed() at one time does) and share one time: the
    // clock read at most once per take, and no sojourn sample begun and ended inside a take,
    // so the drain rate is the consumer's. Each reported as a take of its own instead, a probe
    // armed and passed inside one take reads the pops' speed (here the meter 2x the consumer's
    // rate at 5 us per item; on real threads 100x: docs/software_limit.md) and the batch is 1.
    struct row {
        std::uint64_t consumer_ns;
    };
    for (const row r : {row{450}, row{5'000}}) {
        CAPTURE(r.consumer_ns);
        test::workload w;
        w.take_all = true;
        w.lazy_time = true;
        w.pop_ns = 10;
        w.producer_ns = 10;
        w.consumer_ns = r.consumer_ns;
        w.duration_ns = 20'000'000;
        struct result {
            test::outcome o;
            qlimits::software_limit_stats s;
        };
        const auto run = [&w](test::report mode, bool parts) {
            test::workload v = w;
            v.mode = mode;
            v.parts_as_take = parts;
            sw p({}, at(0));
            const auto o = test::drive(p, v);
            return result{o, p.stats()};
        };
        const result parts = run(test::report::per_item, true);
        const result alone = run(test::report::per_item, false);
        const result whole = run(test::report::per_poll, true);
        const double rate = 1e9 / static_cast<double>(r.consumer_ns); // units per second
        CAPTURE(parts.o.limit_mean);
        CAPTURE(alone.o.limit_mean);
        CAPTURE(whole.o.limit_mean);
        CAPTURE(parts.s.drain_rate_per_s);
        CAPTURE(alone.s.drain_rate_per_s);
        CAPTURE(whole.s.drain_rate_per_s);
        CHECK(parts.o.clock_reads <= parts.o.takes);
        CHECK(parts.s.drain_rate_per_s >= 0.8 * rate); // 0.98x and 1.00x measured
        CHECK(parts.s.drain_rate_per_s <= 1.25 * rate);
        CHECK(parts.o.limit_mean >= 0.85 * whole.o.limit_mean);
        CHECK(parts.o.limit_mean <= 1.15 * whole.o.limit_mean);
        CHECK(parts.o.taken >= whole.o.taken - whole.o.taken / 50);
        // Without same_take each item is a take of its own, and a probe armed and passed inside
        // one take reads the pops' speed: at 5 us per item the meter reads 2x the consumer's
        // rate and the limit lands elsewhere. At 450 ns the rate is read right, and the take
        // rule puts both near lead + step (59 vs 64; 0.6x apart before it, by the batch term).
        if (r.consumer_ns == 5'000) {
            CHECK(alone.s.drain_rate_per_s > 1.5 * rate);
            CHECK(std::abs(alone.o.limit_mean - whole.o.limit_mean) > 0.25 * whole.o.limit_mean);
        }
    }
}

TEST_CASE("software_limit: on_taken reads the clock rarely and lands where timed takes do") {
    // Per-item takes (channel's case) and per-poll reports, fast and slow consumers: the same
    // limit, throughput and worst sojourn whether the time is given per take or read on demand;
    // with cheap items and a limit in the tens, far fewer readings than calls. (Takes, both:
    // on_completed() at the same times may differ, since a take's units are reported before
    // the work: "a take is work in hand".)
    struct row {
        test::report mode;
        std::uint64_t producer_ns, consumer_ns, wake_ns;
        double max_reads_per_call;
    };
    for (const row r : {row{test::report::per_item, 30, 50, 1'000, 0.25},
                        row{test::report::per_item, 30, 50, 20'000, 0.5},
                        row{test::report::per_item, 30, 450, 1'000, 0.5},
                        row{test::report::per_item, 400, 5000, 1'000, 1.0},
                        // A woken producer awaited for 5 us at a step of 28: 0.47 readings per
                        // call; 0.58 when the wait read the time at every refresh to keep waiting
                        // (a review's finding, 2026-12-02).
                        row{test::report::per_item, 100, 450, 5'000, 0.5},
                        row{test::report::per_poll, 30, 450, 1'000, 1.0}}) {
        CAPTURE(r.producer_ns);
        CAPTURE(r.consumer_ns);
        CAPTURE(r.wake_ns);
        test::workload w;
        w.mode = r.mode;
        w.producer_ns = r.producer_ns;
        w.consumer_ns = r.consumer_ns;
        w.wake_ns = r.wake_ns;
        w.duration_ns = 10'000'000;
        w.timed_takes = true;
        sw eager({}, at(0));
        const auto a = test::drive(eager, w);
        w.timed_takes = false;
        w.lazy_time = true;
        sw lazy({}, at(0));
        const auto b = test::drive(lazy, w);
        // (Within 2 % and 1 %: a woken producer's post missed by the untimed look moves them
        // by 3-11 %.)
        CHECK(b.limit_mean >= 0.98 * a.limit_mean);
        CHECK(b.limit_mean <= 1.02 * a.limit_mean);
        CHECK(b.taken >= a.taken - a.taken / 100);
        CHECK(b.taken <= a.taken + a.taken / 100);
        CHECK(b.sojourn_max_ns <= a.sojourn_max_ns + a.sojourn_max_ns / 10);
        CHECK(static_cast<double>(b.clock_reads) <=
              r.max_reads_per_call * static_cast<double>(b.reports));
        CHECK(b.clock_reads > 0);
    }
}

TEST_CASE("software_limit: on_taken still cuts a slowed consumer within an eighth of a limit") {
    // Cheap items first (the limit grows to tens, the time is read every limit / 8 takes), then
    // each take costs 50 us: the over-budget cut must come within limit / 8 + 3 takes, not
    // after the whole backlog has drained.
    test::workload w;
    w.producer_ns = 30;
    w.consumer_ns = 450;
    w.duration_ns = 5'000'000;
    w.lazy_time = true;
    sw p({}, at(0));
    (void)test::drive(p, w);
    const std::uint32_t limit_before = p.limit();
    REQUIRE(limit_before >= 32);
    const std::uint64_t cuts_before = p.stats().budget_cuts;
    for (std::uint32_t i = 0; i < 2 * limit_before; ++i) REQUIRE(p.on_queued(1));
    std::uint64_t now = w.duration_ns + 1'000;
    std::uint32_t takes = 0;
    while (p.stats().budget_cuts == cuts_before && takes < 2 * limit_before) {
        now += 50'000;
        REQUIRE(p.on_taken(1, [now]() noexcept { return at(now); }));
        ++takes;
    }
    CAPTURE(limit_before);
    CHECK(takes <= limit_before / 8 + 3);
    CHECK(p.limit() < limit_before);
}

TEST_CASE("software_limit: on_taken gives a running producer room without reading the clock") {
    // A limit that never bites (1024): the producer runs within its room, 16 to 21 items in
    // flight, the consumer takes one at a time. Room must keep coming (never staler than
    // limit / 8 completions: the refresh of a calm producer, set_refresh()), with the time read
    // only when the sojourn probe ends and every limit / 8 takes, not per take (channel's
    // per-item case: a clock read costs more than the ring's own work). Once calm (after the
    // first window, 1 ms: no stop, never more than half the limit in flight), the room is
    // written into the producer's line only every limit / 8 takes, not at every take.
    // Then the same with the ring emptied at every take: an empty ring takes the timed path
    // (its look may close a sample whose time must be right), so one reading per take.
    sw p({.min_limit = 1024, .max_limit = 1024}, at(0));
    std::uint64_t now = 0, reads = 0;
    const auto clock = [&]() noexcept {
        ++reads;
        return at(now);
    };
    std::uint64_t gifts_late = 0; // gifts of room after the first two windows
    const auto take = [&]() {
        now += 50;
        REQUIRE(p.on_taken(1, clock));
        const auto s = p.stats();
        REQUIRE(s.step == 1);
        // Completions since room was last given (0 right after a gift).
        const std::int64_t stale =
            std::int64_t{s.limit} - std::int64_t{p.inflight()} - p.available();
        CHECK(stale >= 0);
        CHECK(stale <= 1024 / 8);
        if (now > 2'000'000 && stale == 0) ++gifts_late;
    };
    REQUIRE(p.on_queued(1));
    std::uint64_t takes = 0, takes_late = 0;
    for (int round = 0; round < 50'000; ++round) {
        const std::uint32_t want = 16 + static_cast<std::uint32_t>(round % 6); // 16 to 21
        while (p.inflight() < want) REQUIRE(p.on_queued(1));
        take();
        ++takes;
        if (now > 2'000'000) ++takes_late;
    }
    CAPTURE(reads);
    CAPTURE(takes);
    CAPTURE(gifts_late);
    CAPTURE(takes_late);
    CHECK(p.limit() == 1024);
    CHECK(reads * 8 <= takes); // 1 in 18 + 1 in 128 expected
    CHECK(p.stats().sojourn_samples > 0); // the backlog is still timed
    CHECK(takes_late >= 10'000);
    CHECK(gifts_late * (1024 / 8) <= takes_late + 1024 / 8); // one gift per limit / 8 takes

    reads = 0;
    while (p.inflight() != 0) take();
    for (int round = 0; round < 1'000; ++round) {
        REQUIRE(p.on_queued(1));
        const std::uint64_t before = reads;
        take();
        CHECK(reads == before + 1);
    }
}

TEST_CASE("software_limit: a calm producer's room is exact again once it nears the limit") {
    // The calm refresh (room every limit / 8 completions, set_refresh()) holds only while the
    // producer stays below half the limit with no stop: a look that sees more in flight ends it
    // at once, and from then on room follows every completion again (step 1: no stops yet).
    // Without that end, a producer that turns fast would meet a room up to limit / 8 old and be
    // held with 7/8 of the limit in flight: stops that the step and the limit would then count.
    for (const bool lazy : {false, true}) {
        CAPTURE(lazy);
        sw p({.min_limit = 256, .max_limit = 256}, at(0));
        std::uint64_t now = 0;
        const auto take = [&]() {
            now += 50;
            if (lazy)
                REQUIRE(p.on_taken(1, [&now]() noexcept { return at(now); }));
            else
                REQUIRE(p.on_completed(1, at(now)));
        };
        // Calm: 4 to 8 in flight for 3 ms (three windows).
        for (int round = 0; round < 60'000; ++round) {
            const std::uint32_t want = 4 + static_cast<std::uint32_t>(round % 5); // 4 to 8
            while (p.inflight() < want) REQUIRE(p.on_queued(1));
            take();
        }
        const auto stale = [&]() {
            return std::int64_t{p.limit()} - std::int64_t{p.inflight()} - p.available();
        };
        std::int64_t most_stale = 0;
        for (int round = 0; round < 2'000; ++round) {
            while (p.inflight() < 8) REQUIRE(p.on_queued(1));
            take();
            most_stale = std::max(most_stale, stale());
        }
        CAPTURE(most_stale);
        CHECK(most_stale > 1); // calm: room given only every limit / 8 = 32 completions
        CHECK(most_stale <= 256 / 8);
        // The ring runs dry (no probe is timing a backlog then), and the producer turns fast:
        // 200 in flight, more than half the limit. The first take reads its count and ends the
        // calm; every take after it leaves the room exact. (Without that end, the calm lasted
        // until the next recompute: here a probe armed at a later look, ending after the 200
        // drained, left the room up to limit / 8 stale for about 200 takes.)
        while (p.inflight() != 0) take();
        while (p.inflight() < 200) REQUIRE(p.on_queued(1));
        take();
        take();
        for (int round = 0; round < 2'000; ++round) {
            while (p.inflight() < 200) REQUIRE(p.on_queued(1));
            take();
            CHECK(stale() == 0);
        }
        CHECK(p.stats().stops == 0);
    }
}

TEST_CASE("software_limit: on_taken equals timed takes for a take-all-per-poll consumer") {
    // Every poll (0.5-2 us) takes everything in flight at once, so every take empties the ring;
    // the producer posts every 5-20 ns while it has room and pauses 200x on 3 % of posts. The
    // untimed look must leave empty rings to the timed path: a gift of room recorded with a stale
    // time made the ring-ran-dry lead samples too long (found in review: limit 53 -> 70,
    // 206 -> 332, 104 -> 141 on these three cases).
    struct row {
        std::uint64_t poll_ns, gap_ns;
        std::uint32_t min_limit;
    };
    for (const row r : {row{1'000, 20, 1}, row{2'000, 10, 64}, row{500, 5, 1}}) {
        CAPTURE(r.poll_ns);
        CAPTURE(r.gap_ns);
        const auto limit_mean = [&r](bool lazy) {
            qlimits::software_limit_config cfg{};
            cfg.min_limit = r.min_limit;
            cfg.wake_cost = std::chrono::nanoseconds{0};
            cfg.sojourn_budget = std::chrono::microseconds{1'000};
            std::uint64_t now = 1'000;
            sw p(cfg, at(now));
            std::uint64_t rng = 1, next_poll = now + r.poll_ns, next_post = now;
            double sum = 0;
            std::uint64_t polls = 0;
            bool all_ok = true; // one CHECK at the end: doctest's per-call cost would dominate
            for (int i = 0; i < 1'000'000; ++i) {
                if (next_post < next_poll) {
                    now = next_post;
                    if (p.available() >= 0) all_ok &= p.on_queued(1);
                    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                    next_post = now + r.gap_ns * ((rng >> 33) % 100 < 3 ? 200 : 1);
                } else {
                    now = next_poll;
                    if (const std::uint32_t n = p.inflight(); n != 0)
                        all_ok &= lazy ? p.on_taken(n, [now]() noexcept { return at(now); })
                                       : p.on_taken(n, at(now));
                    sum += p.limit();
                    ++polls;
                    next_poll = now + r.poll_ns;
                }
            }
            CHECK(all_ok);
            return sum / static_cast<double>(polls);
        };
        const double eager = limit_mean(false);
        const double lazy = limit_mean(true);
        CAPTURE(eager);
        CAPTURE(lazy);
        CHECK(lazy <= 1.05 * eager);
        CHECK(lazy >= 0.95 * eager);
    }
}

TEST_CASE("software_limit: a take's parts never join an older take") {
    // (1) A new take refused for over-completion, then parts of it 5 ms later: they must not use
    // the time of the take before the refusal (budget and window checks would miss 5 ms).
    {
        sw p({}, at(0));
        for (int i = 0; i < 20; ++i) REQUIRE(p.on_queued(1));
        int reads = 0;
        const auto now = [&reads](std::uint64_t ns) {
            return [&reads, ns]() noexcept {
                ++reads;
                return at(ns);
            };
        };
        REQUIRE(p.on_taken(5, now(100)));
        {
            test::contract_probe probe;
            CHECK_FALSE(p.on_taken(100, now(5'000'000)));
            CHECK(probe.count() == 1);
        }
        const int before = reads;
        for (std::uint64_t i = 0; i < 10; ++i) REQUIRE(p.on_taken(1, now(5'000'000 + i), true));
        CHECK(reads > before);
    }
    // (2) A held producer is given room, its post is seen at time T (the lead sample resolved);
    // the next take comes at the same clock reading (a coarse clock). Reported in parts it must
    // give what it gives reported whole: its parts do not extend the older take's lead sample.
    std::uint32_t limits[2] = {0, 0};
    for (const bool parts : {true, false}) {
        qlimits::software_limit_config cfg{};
        cfg.max_limit = 1000;
        sw p(cfg, at(0));
        const auto now = [](std::uint64_t ns) { return [ns]() noexcept { return at(ns); }; };
        const auto fill = [&p] {
            while (p.available() >= 0) REQUIRE(p.on_queued(1));
        };
        std::uint64_t t = 0;
        for (int r = 0; r < 200; ++r) {
            fill();
            t += 1'000;
            REQUIRE(p.on_taken(1, now(t)));
        }
        fill();
        t += 1'000;
        REQUIRE(p.on_taken(1, now(t))); // room for the held producer: its post is awaited
        for (int k = 0; k < 20; ++k) REQUIRE(p.on_queued(1)); // its post
        t += 1'000;
        REQUIRE(p.on_taken(1, now(t))); // the look sees it
        if (parts) {
            REQUIRE(p.on_taken(1, now(t)));
            for (int i = 0; i < 5; ++i) REQUIRE(p.on_taken(1, now(t), true));
        } else {
            REQUIRE(p.on_taken(6, now(t)));
        }
        t += 1'000;
        REQUIRE(p.on_taken(1, now(t)));
        limits[parts ? 0 : 1] = p.limit();
    }
    CHECK(limits[0] == limits[1]);
}

TEST_CASE("software_limit: on_taken refuses over-completion as on_completed does") {
    sw p({}, at(0));
    REQUIRE(p.on_queued(2));
    std::uint64_t reads = 0; // the clock is read once at most per call
    const auto now = [&reads]() noexcept {
        ++reads;
        return at(1'000);
    };
    test::contract_probe probe;
    CHECK_FALSE(p.on_taken(3, now));
    CHECK(probe.count() == 1);
    CHECK(p.inflight() == 2);
    CHECK(p.on_taken(2, now));
    CHECK(p.inflight() == 0);
    CHECK(reads <= 1);
}

namespace {
// Random posts, completions (on_completed or on_taken) and clock steps, with a short budget and
// window on half the seeds so cuts, windows and wake-ups come often. `each` sees the policy
// after every completion call; `extra`, before each, may make calls of its own.
template <class Each, class Extra>
void random_run(std::uint64_t seed, bool takes, Each&& each, Extra&& extra) {
    std::mt19937_64 r(seed);
    qlimits::software_limit_config c{};
    if (r() % 2 != 0) {
        c.sojourn_budget = std::chrono::nanoseconds{1 + static_cast<std::int64_t>(r() % 20'000)};
        c.window = std::chrono::nanoseconds{1 + static_cast<std::int64_t>(r() % 20'000)};
    }
    sw p(c, at(0));
    std::uint64_t t = 0;
    std::uint32_t queued = 0, done = 0;
    for (int i = 0; i < 1'500; ++i) {
        const auto x = r() % 100;
        if (x < 40) {
            if (p.available() >= 0) {
                const auto n = static_cast<std::uint32_t>(1 + r() % 64);
                REQUIRE(p.on_queued(n));
                queued += n;
            }
        } else if (x < 85) {
            const std::uint32_t in = queued - done;
            const auto n = in == 0 ? 0U : static_cast<std::uint32_t>(r() % (in < 8 ? in + 1 : 9));
            extra(p, t);
            if (takes)
                REQUIRE(p.on_taken(n, [&t]() noexcept { return at(t); }));
            else
                REQUIRE(p.on_completed(n, at(t)));
            done += n;
            each(p);
        } else {
            t += r() % 4 == 0 ? r() % 300'000 : r() % 3'000;
        }
    }
}
} // namespace

TEST_CASE("software_limit: a held producer is never kept waiting once room is due") {
    // Room for a held producer is due once inflight <= limit + 1 - step. A producer given room
    // and then held again by a budget cut before it posted was still awaited as woken, and kept
    // held until a step had completed since the cut or the ring ran dry (found by a random
    // search: held at 1 in flight where room was due at 22, on_completed and on_taken).
    for (const bool takes : {false, true}) {
        CAPTURE(takes);
        std::uint64_t held = 0, due_but_held = 0;
        for (std::uint64_t seed = 1; seed <= 300; ++seed) {
            random_run(
                seed, takes,
                [&](const sw& p) {
                    const auto s = p.stats();
                    if (s.available >= 0) return;
                    ++held;
                    if (std::int64_t{s.inflight} <= std::int64_t{s.limit} + 1 - s.step)
                        ++due_but_held;
                },
                [](sw&, std::uint64_t) {});
        }
        CHECK(held > 10'000); // the case at stake is exercised
        CHECK(due_but_held == 0);
    }
    // The reduced case: room given (the producer woken), taken back by a cut before it posts.
    qlimits::software_limit_config c{};
    c.sojourn_budget = std::chrono::nanoseconds{3'201};
    c.window = std::chrono::nanoseconds{5'701};
    sw p(c, at(0));
    REQUIRE(p.on_queued(26));
    REQUIRE(p.on_completed(26, at(238'170)));
    REQUIRE(p.on_queued(1));
    REQUIRE(p.on_completed(1, at(242'108)));
    REQUIRE(p.on_queued(56));
    REQUIRE(p.on_completed(40, at(531'081))); // room given to the held producer
    REQUIRE(p.on_completed(1, at(826'461)));  // a cut takes it back before it posts
    for (std::uint64_t i = 0; i < 15; ++i) {
        REQUIRE(p.on_completed(1, at(826'461 + i)));
        const auto s = p.stats();
        CAPTURE(s.inflight);
        CAPTURE(s.limit);
        CAPTURE(s.step);
        CHECK((s.available >= 0 || std::int64_t{s.inflight} > std::int64_t{s.limit} + 1 - s.step));
    }
}

TEST_CASE("software_limit: a refused completion changes nothing that later calls see") {
    // The refusal read the producer's count into the policy's cached copy before refusing, so a
    // later call took another path (24 of 100 random runs diverged). Two policies get the same
    // calls; one also gets a refused completion before some of them (a new take for on_taken:
    // only the take boundary, which the next call makes anyway, may differ).
    test::contract_probe probe;
    for (const bool takes : {false, true}) {
        CAPTURE(takes);
        for (std::uint64_t seed = 1; seed <= 100; ++seed) {
            CAPTURE(seed);
            std::vector<qlimits::software_limit_stats> plain, refused;
            random_run(
                seed, takes, [&](const sw& p) { plain.push_back(p.stats()); },
                [](sw&, std::uint64_t) {});
            std::mt19937_64 coin(seed * 7919);
            random_run(
                seed, takes, [&](const sw& p) { refused.push_back(p.stats()); },
                [&](sw& p, std::uint64_t t) {
                    if (coin() % 4 != 0) return;
                    const std::uint32_t too_many = p.inflight() + 1;
                    if (takes)
                        CHECK_FALSE(p.on_taken(too_many, [t]() noexcept { return at(t); }));
                    else
                        CHECK_FALSE(p.on_completed(too_many, at(t)));
                });
            REQUIRE(plain.size() == refused.size());
            const auto same = [](const qlimits::software_limit_stats& a,
                                 const qlimits::software_limit_stats& b) {
                return a.limit == b.limit && a.available == b.available && a.step == b.step &&
                       a.lead == b.lead && a.cap == b.cap &&
                       a.drain_rate_per_s == b.drain_rate_per_s &&
                       a.sojourn_samples == b.sojourn_samples && a.stops == b.stops &&
                       a.starvations == b.starvations && a.budget_cuts == b.budget_cuts;
            };
            std::size_t first_difference = plain.size();
            for (std::size_t i = 0; i < plain.size() && first_difference == plain.size(); ++i)
                if (!same(plain[i], refused[i])) first_difference = i;
            CHECK(first_difference == plain.size());
        }
    }
    CHECK(probe.count() > 1'000);
}

TEST_CASE("software_limit: clock jumps near 2^63 ticks are no overflow") {
    // A lead sample halves the time since the last look and adds it to the wait before it; two
    // jumps of 3 x 2^61 ns overflowed that sum (undefined behaviour: UBSan in CI). Now saturated.
    // (min_limit 8: the first jump is over the budget, and a cut below 8 would hold the
    // producer again and end the wait before the sample this is about.)
    sw p({.min_limit = 8}, at(0));
    for (int i = 0; i < 9; ++i) REQUIRE(p.on_queued(1)); // held at the floor of 8
    REQUIRE(p.on_completed(1, at(1)));                    // room given; its post awaited
    const std::uint64_t jump = std::uint64_t{3} << 61;
    REQUIRE(p.on_completed(1, at(1 + jump))); // a look, no post yet
    REQUIRE(p.on_queued(1));
    REQUIRE(p.on_completed(1, at(1 + 2 * jump))); // the post seen: the lead sample
    const auto s = p.stats();
    CHECK(s.limit >= 1);
    CHECK(s.limit <= qlimits::software_limit_config{}.max_limit);
    CHECK(s.inflight == 7);
}

TEST_CASE("software_limit: a clock that steps backwards gives no drain-rate sample") {
    // A consumer that empties the ring at every poll, the producer held at each: the rate comes
    // from the units between two empty moments over the time between. A step of the clock 1 ms
    // backwards made that time a wrapped difference, which wrapped the meter's tick sum: the
    // rate read 0, then 200x too low, and the limit fell from 179 to 17.
    sw p({}, at(0));
    std::uint64_t t = 1'000'000'000;
    const auto poll = [&p](std::uint64_t when) {
        while (p.available() >= 0) REQUIRE(p.on_queued(1));
        REQUIRE(p.on_completed(p.inflight(), at(when)));
    };
    for (int i = 0; i < 200; ++i) poll(t += 5'000);
    const auto before = p.stats();
    REQUIRE(before.drain_rate_per_s > 1e7);
    poll(t - 1'000'000); // the clock steps back 1 ms
    const auto after = p.stats();
    CHECK(after.drain_rate_per_s == before.drain_rate_per_s);
    CHECK(after.limit >= before.limit);
    for (int i = 0; i < 3; ++i) poll(t += 5'000);
    CHECK(p.stats().drain_rate_per_s >= before.drain_rate_per_s / 2);
    CHECK(p.limit() >= before.limit);
}

TEST_CASE("software_limit: after reset it behaves exactly as a new policy") {
    // reset() must forget every estimate and every remembered moment (the last empty-ring
    // moment too, the gap term's stage and back-off): the same workload then gives the same run
    // as on a fresh policy.
    for (const auto mode : {test::report::per_item, test::report::per_poll}) {
        for (const bool take_all : {false, true}) {
          for (const bool bursty : {false, true}) {
            CAPTURE(static_cast<int>(mode));
            CAPTURE(take_all);
            CAPTURE(bursty);
            test::workload w;
            w.mode = mode;
            w.take_all = take_all;
            w.producer_ns = 30;
            w.duration_ns = 5'000'000;
            if (bursty) { // bursts with a pause after each: the gap term measured and tried
                w.burst_items = 512;
                w.burst_gap_ns = 40'000;
                w.duration_ns = 20'000'000;
            }
            sw fresh({}, at(0));
            const auto a = test::drive(fresh, w);
            sw used({}, at(0));
            test::workload other = w;
            other.consumer_ns = 5'000; // different estimates, counters far from 0
            if (bursty) { // ... and bursts on a schedule: a failed trial, gaps off a while
                other.consumer_ns = 300;
                other.burst_gap_ns = 0;
                other.burst_every_ns = 250'000;
            }
            (void)test::drive(used, other);
            (void)test::drive(used, w); // ... and again, so the counters differ from fresh's
            used.reset(at(0));
            const auto b = test::drive(used, w);
            CHECK(b.taken == a.taken);
            CHECK(b.limit_mean == doctest::Approx(a.limit_mean));
            CHECK(b.sojourn_max_ns == a.sojourn_max_ns);
            CHECK(used.stats().gap_stage == fresh.stats().gap_stage);
          }
        }
    }
}

namespace {
// Bursts of 512 at 100 ns into a 4096-slot ring, a 300 ns consumer, 3 us wake-ups, 50 ms.
test::workload bursts_of_512() {
    test::workload w;
    w.producer_ns = 100;
    w.consumer_ns = 300;
    w.wake_ns = 3000;
    w.burst_items = 512;
    w.ring = 4096;
    w.duration_ns = 50'000'000;
    return w;
}
// Items `w` moves when the limit never binds (min_limit = max_limit = 4096).
std::uint64_t taken_unbound(const test::workload& w) {
    qlimits::software_limit_config never_binds;
    never_binds.min_limit = never_binds.max_limit = 4096;
    sw free(never_binds, at(0));
    return test::drive(free, w).taken;
}
} // namespace

TEST_CASE("software_limit: a producer that pauses after each burst gets the pause covered") {
    // Bursts of 512 at 100 ns, a 40 us pause after each burst's last post (closed loop), a 300 ns
    // consumer: to never idle, the ring must hold the pause's worth (~133) when a burst ends.
    // Held to the lead and step alone (~70) the consumer idles in every pause: 0.81x of the
    // throughput without a limit (0.84x per poll, 0.91x taking everything at once). The gap term
    // asks for the idle's worth on top, is tried, and is trusted because the pauses then
    // shrink. Also bursts of 100 with 10 us pauses (0.83x and 0.84x before).
    // Since the lead halves at a window's end instead of being forgotten after two (2026-12-06),
    // the lead alone covers the pause in two variants (lazy time, and bursts of 100 per poll):
    // there the gap term is not asked at the end of the run, and the limit covers the pause.
    struct variant {
        test::report mode;
        bool take_all, lazy;
        std::uint32_t items;
        std::uint64_t pause_ns;
        double at_least; // of the throughput without a limit
        bool gap_term;   // the gap term is what covers the pause
    };
    for (const variant v :
         {variant{test::report::per_item, false, false, 512, 40'000, 0.97, true},
          variant{test::report::per_poll, false, false, 512, 40'000, 0.97, true},
          variant{test::report::per_item, true, false, 512, 40'000, 0.97, true},
          variant{test::report::per_poll, true, false, 512, 40'000, 0.97, true},
          variant{test::report::per_item, false, true, 512, 40'000, 0.97, false},
          variant{test::report::per_item, true, true, 512, 40'000, 0.97, true},
          variant{test::report::per_item, false, false, 100, 10'000, 0.97, true},
          variant{test::report::per_poll, false, false, 100, 10'000, 0.97, false}}) {
        CAPTURE(static_cast<int>(v.mode));
        CAPTURE(v.take_all);
        CAPTURE(v.lazy);
        CAPTURE(v.items);
        test::workload w = bursts_of_512();
        w.mode = v.mode;
        w.take_all = v.take_all;
        w.lazy_time = v.lazy;
        w.burst_items = v.items;
        w.burst_gap_ns = v.pause_ns;
        sw p({}, at(0));
        const auto o = test::drive(p, w);
        CHECK(static_cast<double>(o.taken) >= v.at_least * static_cast<double>(taken_unbound(w)));
        CHECK(o.sojourn_max_ns <= 100'000); // the budget still bounds the wait
        // The limit holds the pause's worth of work when a burst ends.
        CHECK(p.stats().limit >= v.pause_ns / w.consumer_ns);
        if (!v.gap_term) continue;
        // Trusted, or still on trial because no pause has run the ring dry at the grown limit
        // (the pause vanished): either way the term is in force.
        CHECK((p.stats().gap_stage == qlimits::software_gap_stage::trusted ||
               p.stats().gap_stage == qlimits::software_gap_stage::trying));
        CHECK(p.stats().gap > 0);
    }
}

TEST_CASE("software_limit: bursts on a schedule of their own are tried, then ignored a while") {
    // The same bursts started every 250 us whatever the limit (open loop): a larger limit only
    // moves the wait into the ring. Each trial raises the limit for two windows, sees the idle
    // not shrink and the cycles not quicken, and ignores gaps for a back-off that doubles (8,
    // 16, 32, 64 windows): about five trials in 200 ms, not one every ten windows.
    test::workload w = bursts_of_512();
    w.burst_every_ns = 250'000;
    w.duration_ns = 200'000'000;
    sw p({}, at(0));
    std::uint32_t tried_max = 0;
    int trials = 0;
    bool ever_trusted = false;
    auto last = qlimits::software_gap_stage::none;
    const auto o = test::drive(p, w, [&](const sw& q, std::uint64_t) {
        const auto stage = q.stats().gap_stage;
        if (stage == qlimits::software_gap_stage::trying) {
            tried_max = std::max(tried_max, q.limit());
            if (last != stage) ++trials;
        }
        ever_trusted = ever_trusted || stage == qlimits::software_gap_stage::trusted;
        last = stage;
    });
    CHECK(tried_max > 200); // the trials ran, at a larger limit
    CHECK(trials >= 2);
    CHECK(trials <= 6);
    CHECK_FALSE(ever_trusted);
    CHECK(o.limit_mean < 100); // 66 without the gap term; the cap is 333
    CHECK(o.taken == 800 * 512); // every burst moved, as without a limit
}

TEST_CASE("software_limit: a pause the ring's size keeps is trusted when the cycles quicken") {
    // Bursts of 64 through a 64-slot ring, a 100 us pause after each, 10 us wake-ups: a limit
    // above 64 cannot shorten the pause (the ring holds at most the burst), but it spares the
    // producer its stops within the burst, so each burst-and-pause cycle is shorter. The trial
    // sees the cycles move more units per tick and keeps the larger limit (without that test
    // it would see the idle barely shrink, and drop it: 0.92x of the throughput).
    test::workload w;
    w.producer_ns = 100;
    w.consumer_ns = 150;
    w.wake_ns = 10'000;
    w.burst_items = 64;
    w.burst_gap_ns = 100'000;
    w.ring = 64;
    w.duration_ns = 50'000'000;
    sw p({}, at(0));
    const auto o = test::drive(p, w);
    CHECK(static_cast<double>(o.taken) >= 0.95 * static_cast<double>(taken_unbound(w)));
    CHECK(p.stats().gap_stage == qlimits::software_gap_stage::trusted);
}

TEST_CASE("software_limit: a consumer slow to wake gets its wake-up's worth (a dry moment it "
          "works through does not end the busy period)") {
    // An 80 ns consumer that goes to sleep when it finds the ring empty after its work (as NAPI
    // does) and takes 7 us to wake; producers of 100-200 ns per item, a 64-slot ring. Without a
    // limit 35-70 items arrive while the consumer wakes; a limit below that holds the producer
    // through each wake-up. The gap term times the consumer's idle after the ring ran dry behind
    // a producer that the limit held back, but the first dry moment of such a busy period is
    // often one the consumer works through (the producer's next item comes while it still works
    // on the last one). That moment ended the busy period, the real pause that followed was not
    // timed, and the term lapsed: 0.61-0.64x of the throughput without a limit (the lab's
    // veth-bql with ring 64, base-cost 80 ns, producer 129 ns, consumer wake 7.1 us, budget 16:
    // 0.73x; 0.996x after).
    for (const std::uint64_t producer_ns : {100U, 129U, 200U}) {
        CAPTURE(producer_ns);
        test::workload w;
        w.producer_ns = producer_ns;
        w.consumer_ns = 80;
        w.wake_ns = 0;
        w.consumer_wake_ns = 7'000;
        w.poll_budget = 16;
        w.ring = 64;
        w.naps_after_work = true;
        w.duration_ns = 30'000'000;
        sw p({}, at(0));
        const auto o = test::drive(p, w);
        CHECK(static_cast<double>(o.taken) >= 0.95 * static_cast<double>(taken_unbound(w)));
    }
}

namespace {
// Known gap (docs/software_limit.md, "Not met": "A take-all consumer's limit"). The consumer
// takes up to 128 items at once and works them off (172 ns each); the producer posts every
// 20 ns, its wake-up costs nothing, and the policy is told so (wake_cost 0, so the cost model
// asks for a step of 1). A fixed limit of 1 already keeps the consumer busy; software_limit
// settles at the take size, 128, because what it learns at the takes grows with the limit
// itself: the largest take (limit + 1) is the batch term, and a take that empties the ring
// while the producer is held gives a lead sample of twice its units. Measured 2026-12-04: a
// limit of exactly the take size at take sizes 32, 64, 128 and 256.
struct take_all_run {
    std::uint64_t all = 0;  // items moved with the ring as the only limit
    std::uint32_t ref = 1;  // the smallest fixed limit (power of two) that moves 0.97x of them
    test::outcome sw{};     // software_limit's run
    std::uint32_t take = 0; // the consumer's largest take
};
take_all_run take_all_case() {
    const test::workload w{.producer_ns = 20,
                           .consumer_ns = 172,
                           .wake_ns = 0,
                           .consumer_wake_ns = 2'000,
                           .poll_budget = 128,
                           .ring = 4096,
                           .duration_ns = 40'000'000,
                           .take_all = true,
                           .lazy_time = true};
    const auto taken_at = [&w](std::uint32_t limit) {
        qlimits::fixed_limit<clock_ns> f({.limit = limit}, at(0));
        return test::drive(f, w).taken;
    };
    take_all_run r;
    r.take = w.poll_budget;
    r.all = taken_at(w.ring);
    while (r.ref < w.ring && static_cast<double>(taken_at(r.ref)) < 0.97 * static_cast<double>(r.all))
        r.ref *= 2;
    qlimits::software_limit_config c{};
    c.wake_cost = std::chrono::nanoseconds{0};
    sw p(c, at(0));
    r.sw = test::drive(p, w);
    return r;
}

// Known gap (docs/software_limit.md, "Not met": "A capped limit's step"). A fast producer
// (32 ns) and a 411 ns consumer that pays a 10 us call for each wake-up of the producer, which
// then takes 20 us to post again; a 1920-slot ring. The cost model asks for a step past the cap
// (100 us of work), so lead + step - 1 does not fit, and the step is the whole limit: room
// comes with the ring nearly dry, and the consumer idles through every wake-up (0.53x of the
// items without a limit, 2026-12-04). A prototype that gave room while the lead's worth was
// still in flight (step = limit + 1 - lead) moved 0.73x here, and its invariant held, but it
// broke three other tests (take-all consumers with costly wake calls, where the lead is
// overestimated), so it was not kept.
struct capped_step_run {
    std::uint64_t looks = 0, lead_uncovered = 0, taken = 0, unbound = 0;
};
capped_step_run capped_step_case() {
    const test::workload w{.producer_ns = 32,
                           .consumer_ns = 411,
                           .wake_ns = 20'000,
                           .consumer_wake_ns = 51'000,
                           .poll_budget = 15,
                           .ring = 1920,
                           .duration_ns = 40'000'000,
                           .wake_call_ns = 10'000};
    sw p({}, at(0));
    capped_step_run r;
    const auto o = test::drive(p, w, [&](const sw& q, std::uint64_t) {
        const auto s = q.stats();
        ++r.looks;
        // Whenever the limit can hold the lead, room comes with at least the lead in flight.
        if (s.limit >= s.lead && std::int64_t{s.limit} + 1 - s.step < std::int64_t{s.lead})
            ++r.lead_uncovered;
    });
    r.taken = o.taken;
    r.unbound = taken_unbound(w);
    return r;
}
} // namespace

TEST_CASE("software_limit: a consumer that takes everything, from a producer that refills at "
          "once, keeps full throughput at a limit no larger than its take") {
    // What holds today of the known gap below, so a change that makes it worse fails (a
    // review, 2026-12-06: these checks sat in the may_fail case, where nothing could fail).
    const auto r = take_all_case();
    CAPTURE(r.sw.limit_mean);
    CHECK(static_cast<double>(r.sw.taken) >= 0.97 * static_cast<double>(r.all));
    CHECK(r.sw.limit_mean <= 1.25 * r.take);
}

TEST_CASE("software_limit: a consumer that takes everything, from a producer that refills at "
          "once, needs no more than a small fixed limit (known gap)" *
          doctest::may_fail()) {
    // What the policy should do (the gap: take_all_case()); fails today.
    const auto r = take_all_case();
    CAPTURE(r.ref);
    CAPTURE(r.sw.limit_mean);
    // Twice the reference, or the cache floor (8) and as much again.
    CHECK(r.sw.limit_mean <= std::max(2.0 * r.ref, 16.0));
}

TEST_CASE("software_limit: at a capped limit the consumer keeps at least today's half of the "
          "items") {
    // What holds today of the known gap below (0.53x), so a change that makes it worse fails.
    const auto r = capped_step_case();
    REQUIRE(r.looks > 1000);
    CHECK(static_cast<double>(r.taken) >= 0.45 * static_cast<double>(r.unbound));
}

TEST_CASE("software_limit: at a capped limit the step leaves the lead uncovered, and the "
          "consumer idles through each wake-up (known gap)" *
          doctest::may_fail()) {
    // What the policy should do (the gap: capped_step_case()); both fail today.
    const auto r = capped_step_case();
    CHECK(r.lead_uncovered == 0);
    CHECK(static_cast<double>(r.taken) >= 0.65 * static_cast<double>(r.unbound));
}

TEST_CASE("software_limit: 2^32 units and more between two empty moments keep the drain rate") {
    // A review's case (2026-12-05): the rate sample between two empty-ring moments took its
    // units as a 32-bit difference, so a backlog that never ran dry for 2^32 + 6400 units read
    // as 6400 units over the whole time: the rate near 300/s instead of 1e8/s and the limit at
    // 1 for ~94,000 polls. The producer honours available(); each unit costs 10 ns.
    sw p({}, at(0));
    std::uint64_t t = 0;
    const auto fill = [&] {
        while (p.available() >= 0) (void)p.on_queued(static_cast<std::uint32_t>(p.available()) + 1);
    };
    const auto dry_poll = [&] {
        fill();
        t += 10ULL * p.inflight();
        (void)p.on_completed(p.inflight(), at(t));
    };
    for (int i = 0; i < 2000; ++i) dry_poll(); // held at every empty moment
    REQUIRE(p.limit() > 1000);
    const std::uint64_t total = (std::uint64_t{1} << 32) + 6400;
    for (std::uint64_t moved = 0; moved < total;) { // never dry: one unit always left
        fill();
        const std::uint32_t n = std::min<std::uint32_t>(4000, p.inflight() - 1);
        t += 10ULL * n;
        (void)p.on_completed(n, at(t));
        moved += n;
    }
    for (int i = 0; i < 4; ++i) {
        dry_poll();
        CHECK(p.limit() > 1000);
        CHECK(p.stats().drain_rate_per_s > 5e7); // 1e8 units/s
    }
}

TEST_CASE("software_limit: absurd told durations spoil no later sample") {
    // The time told away (wake calls, idle waits) was summed saturating; two idles of
    // nanoseconds::max() pinned the sum, every later difference read 0, and no idle was left
    // out of the rate again: a limit of 1 and 742 items where the same run told normally
    // moves ~47,000 (review, 2026-12-05). The workload: sleepy_take_all().
    test::workload w = sleepy_take_all();
    w.tell_consumer_idle = true;
    sw plain({}, at(0));
    const auto a = test::drive(plain, w);
    sw spoiled({}, at(0));
    spoiled.on_consumer_idle(std::chrono::nanoseconds::max());
    spoiled.on_consumer_idle(std::chrono::nanoseconds::max());
    const auto b = test::drive(spoiled, w);
    CHECK(static_cast<double>(b.taken) > 0.9 * static_cast<double>(a.taken));
    CHECK(spoiled.stats().drain_rate_per_s > 0.5 * plain.stats().drain_rate_per_s);
}

TEST_CASE("software_limit: stats().floor stays within the limit after a budget cut") {
    // The cut lowered the limit and the cap but left the floor shown above both (review,
    // 2026-12-05): limit 1, cap 1, floor 8.
    sw p({}, at(0));
    (void)p.on_queued(8);
    (void)p.on_completed(1, at(1'000));   // arms the probe (7 in flight)
    (void)p.on_completed(1, at(201'000)); // 200 us for one unit: over the 100 us budget
    for (int i = 0; i < 6; ++i) {
        const auto s = p.stats();
        CHECK(s.budget_cuts >= 1);
        CHECK(s.floor <= s.limit);
        CHECK(s.limit <= s.cap);
        (void)p.on_completed(1, at(202'000 + static_cast<std::uint64_t>(i) * 1000));
    }
}
