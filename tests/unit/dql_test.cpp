// Unit tests of qlimits::dql. Every expected value is reasoned from the behaviour description
// (docs/design.md §2), step by step in the comments; none was produced by kernel code.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <string>

#include "qlimits/limits/dql.hpp"
#include "child_death.hpp"
#include "contract_probe.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using dql_ms = qlimits::dql<clock_ms>;
using tp = clock_ms::time_point;
using std::chrono::milliseconds;

tp at(std::int64_t tick) { return tp{milliseconds{tick}}; }

// A dql right after `init H` from the zeroed state (how the trace tests start).
struct fresh {
    dql_ms q{qlimits::zeroed_state};
    explicit fresh(std::int64_t hold) { q.init(milliseconds{hold}, at(0)); }
};
} // namespace

TEST_CASE("dql: zeroed state is the kernel's zero-allocated struct") {
    dql_ms q{qlimits::zeroed_state};
    const auto s = q.state();
    CHECK(s.limit == 0);
    CHECK(s.max_limit == 0);
    CHECK(s.lowest_slack == 0); // not the UINT_MAX sentinel: init has not run
    CHECK(s.hold_time == 0);
    CHECK(q.available() == 0);
}

TEST_CASE("dql: init sets the kernel defaults and resets") {
    fresh f{1000};
    const auto s = f.q.state();
    CHECK(s.min_limit == 0);
    CHECK(s.max_limit == 1'879'048'192U);
    CHECK(s.hold_time == 1000);
    CHECK(s.stall_threshold == 0);
    CHECK(s.lowest_slack == 4'294'967'295U);
    CHECK(s.limit == 0);
}

TEST_CASE("dql: a hold time below 0 or of 2^63 ticks and more is refused by init, set_hold_time, valid") {
    // Review 2026-12-03: init(-1) stored 2^64-1 and the hold window ended before it began.
    fresh f{4};
    const auto before = f.q.state();
    CHECK_FALSE(f.q.init(milliseconds{-1}, at(7)));
    CHECK_FALSE(f.q.set_hold_time(milliseconds{-1}));
    const auto after = f.q.state();
    CHECK(after.hold_time == before.hold_time);
    CHECK(after.slack_start_time == before.slack_start_time);
    CHECK_FALSE(qlimits::dql_config<milliseconds>{.hold_time = milliseconds{-1}}.valid());
    // A clock with an unsigned count: 2^63 ticks and above would compare as negative.
    using ums = std::chrono::duration<std::uint64_t, std::milli>;
    using uclock = qlimits::manual_clock<ums>;
    qlimits::dql<uclock> u{{}, uclock::time_point{}};
    CHECK_FALSE(u.init(ums{std::uint64_t{1} << 63}, uclock::time_point{}));
    CHECK_FALSE(u.set_hold_time(ums{~std::uint64_t{0}}));
    CHECK(u.init(ums{(std::uint64_t{1} << 63) - 1}, uclock::time_point{}));
    CHECK_FALSE(qlimits::dql_config<ums>{.hold_time = ums{~std::uint64_t{0}}}.valid());
    CHECK(qlimits::dql_config<ums>{.hold_time = ums{1000}}.valid());
}

TEST_CASE("dql: config defaults follow a Linux netdev TX queue") {
    const dql_ms::config_type cfg{};
    CHECK(cfg.min_limit == 0);
    CHECK(cfg.max_limit == qlimits::dql_max_limit);
    CHECK(cfg.hold_time == std::chrono::seconds{1});
    CHECK(cfg.stall_threshold.count() == 0);
    CHECK(cfg.valid());
    dql_ms q{cfg, at(0)};
    CHECK(q.limit() == 0);
    CHECK(q.stats().hold_time_ticks == 1000);
}

TEST_CASE("dql: a config min limit becomes the starting limit") {
    dql_ms q{{.min_limit = 3000}, at(0)};
    CHECK(q.limit() == 3000);
    // adj_limit is only written by a completion, as in Linux: avail starts at 0.
    CHECK(q.available() == 0);
    q.on_queued(100, at(0));
    q.on_completed(100, at(1));
    // Nothing was over the limit and nothing is in flight: neither branch; clamp keeps 3000.
    CHECK(q.limit() == 3000);
    CHECK(q.available() == 3000);
}

TEST_CASE("dql: the first enqueue from a zero limit goes over it") {
    fresh f{4};
    f.q.on_queued(1000, at(0));
    CHECK(f.q.available() == -1000);
}

TEST_CASE("dql: limit grows after starvation by what was sent and completed plus the overshoot") {
    fresh f{4};
    f.q.on_queued(1000, at(0));
    f.q.on_queued(1000, at(0));
    // First completion: 2000 in flight over a limit of 0 -> overshoot 2000 remembered, but 1000
    // is still in flight, so the ring was not starved; limit stays 0.
    f.q.on_completed(1000, at(0));
    auto s = f.q.state();
    CHECK(s.limit == 0);
    CHECK(s.prev_ovlimit == 2000);
    CHECK(s.avail() == -1000);
    // Second: everything queued as of the last round is done and that round was over the limit:
    // grow by pos_diff(2000, 2000) + 2000 = 2000; the change clears the stored overshoot.
    f.q.on_completed(1000, at(0));
    s = f.q.state();
    CHECK(s.limit == 2000);
    CHECK(s.prev_ovlimit == 0);
    CHECK(s.adj_limit == 4000);
    CHECK(f.q.available() == 2000);
}

TEST_CASE("dql: overshoot is measured before this call's completions are retired") {
    fresh f{4};
    f.q.on_queued(3000, at(0));
    // in flight before the call is 3000 over a limit of 0: overshoot 3000 and the ring ends
    // empty -> starved; growth pos_diff(3000, 0) + 0 = 3000.
    f.q.on_completed(3000, at(0));
    CHECK(f.q.limit() == 3000);
}

TEST_CASE("dql: slack shrinks the limit only strictly after the hold time") {
    fresh f{4};
    // Reach limit 2000 as above.
    f.q.on_queued(1000, at(0));
    f.q.on_queued(1000, at(0));
    f.q.on_completed(1000, at(0));
    f.q.on_completed(1000, at(0)); // limit 2000, window opened at tick 0
    for (int i = 0; i < 3; ++i) f.q.on_queued(1500, at(0));
    f.q.on_completed(1500, at(1)); // all of the previous round done: no decrease candidate
    f.q.on_queued(1500, at(1));
    f.q.on_completed(1500, at(2)); // candidate: slack pos_diff(2000 + 2500, 3000) = 1500
    CHECK(f.q.state().lowest_slack == 1500);
    CHECK(f.q.limit() == 2000);
    f.q.on_queued(1500, at(4));
    f.q.on_completed(1500, at(4)); // tick 4 = start + hold: not yet (strictly after)
    CHECK(f.q.limit() == 2000);
    f.q.on_queued(1500, at(5));
    f.q.on_completed(1500, at(5)); // tick 5 > 0 + 4: shrink by the lowest slack, 1500
    CHECK(f.q.limit() == 500);
    CHECK(f.q.state().lowest_slack == qlimits::dql_no_slack);
}

TEST_CASE("dql: hold time 0 still needs a tick to pass") {
    fresh f{0};
    f.q.on_queued(1000, at(0));
    f.q.on_queued(1000, at(0));
    f.q.on_completed(1000, at(0));
    f.q.on_completed(1000, at(0)); // limit 2000, window start 0
    for (int i = 0; i < 3; ++i) f.q.on_queued(1500, at(0));
    f.q.on_completed(1500, at(0));
    f.q.on_queued(1500, at(0));
    f.q.on_completed(1500, at(0)); // candidate at tick 0: not after 0 + 0
    CHECK(f.q.limit() == 2000);
    f.q.on_queued(1500, at(1));
    f.q.on_completed(1500, at(1)); // tick 1: after 0 + 0
    CHECK(f.q.limit() == 500);
}

TEST_CASE("dql: per-item completion collapses the limit to 2 (the veth problem)") {
    // A backlogged producer keeps the ring at the limit and one unit completes per call, one
    // call per tick: the slack rule (limit - 2 * 1) drives the limit to 2, where slack is 0.
    dql_ms q{{.min_limit = 0, .hold_time = milliseconds{10}}, at(0)};
    std::int64_t t = 0;
    q.on_queued(1, at(t));
    for (int i = 0; i < 20000; ++i) {
        while (q.available() >= 0) q.on_queued(1, at(t));
        ++t;
        q.on_completed(1, at(t));
    }
    CHECK(q.limit() == 2);
}

TEST_CASE("dql: clamp checks the upper bound first") {
    SUBCASE("limit above max is cut to max") {
        fresh f{4};
        CHECK(f.q.set_max_limit(1500));
        f.q.on_queued(3000, at(0));
        f.q.on_completed(3000, at(0)); // would grow to 3000
        CHECK(f.q.limit() == 1500);
    }
    SUBCASE("min above max: at or above max gives max") {
        fresh f{4};
        CHECK(f.q.set_min_limit(5000));
        CHECK(f.q.set_max_limit(1000));
        f.q.on_queued(3000, at(0));
        f.q.on_completed(3000, at(0)); // grows to 3000 >= max -> max, not min
        CHECK(f.q.limit() == 1000);
    }
    SUBCASE("min above max: below max gives min") {
        fresh f{4};
        CHECK(f.q.set_min_limit(5000));
        CHECK(f.q.set_max_limit(1000));
        f.q.on_queued(500, at(0));
        f.q.on_completed(500, at(0)); // grows to 500 < max -> min
        CHECK(f.q.limit() == 5000);
    }
}

TEST_CASE("dql: a limit change made only by the clamp clears the stored overshoot") {
    fresh f{4};
    f.q.on_queued(1000, at(0));
    f.q.on_queued(1000, at(0));
    CHECK(f.q.set_min_limit(100));
    // Neither branch (1000 still in flight), overshoot 2000; the clamp lifts 0 to 100, a change,
    // so the overshoot is forgotten.
    f.q.on_completed(1000, at(0));
    CHECK(f.q.limit() == 100);
    CHECK(f.q.state().prev_ovlimit == 0);
}

TEST_CASE("dql: set_limit is applied raw and clamped at the next completion") {
    fresh f{4};
    CHECK(f.q.set_max_limit(4000));
    CHECK(f.q.set_limit(9000)); // above max but within sysfs bounds: stored as is
    CHECK(f.q.limit() == 9000);
    f.q.on_queued(100, at(0));
    f.q.on_completed(100, at(0)); // neither branch; clamp 9000 -> 4000
    CHECK(f.q.limit() == 4000);
    CHECK_FALSE(f.q.set_limit(qlimits::dql_max_limit + 1));
    CHECK(f.q.limit() == 4000);
}

TEST_CASE("dql: reset sets limit to min, keeps adj_limit and stall statistics") {
    fresh f{4};
    f.q.on_queued(3000, at(0));
    f.q.on_completed(3000, at(0)); // limit 3000, adj 6000
    CHECK(f.q.set_min_limit(700));
    f.q.on_queued(10, at(1));
    f.q.reset(at(2));
    const auto s = f.q.state();
    CHECK(s.limit == 700);
    CHECK(s.num_queued == 0);
    CHECK(s.num_completed == 0);
    CHECK(s.adj_limit == 6000); // stale until the next completion, as in Linux
    CHECK(f.q.available() == 6000);
    CHECK(s.lowest_slack == qlimits::dql_no_slack);
    CHECK(s.slack_start_time == 2);
    CHECK(s.min_limit == 700);
}

TEST_CASE("dql: init forces min to 0 and turns stall detection off") {
    fresh f{4};
    CHECK(f.q.set_min_limit(700));
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(0)));
    f.q.init(milliseconds{9}, at(3));
    const auto s = f.q.state();
    CHECK(s.min_limit == 0);
    CHECK(s.limit == 0);
    CHECK(s.stall_threshold == 0);
    CHECK(s.hold_time == 9);
}

TEST_CASE("dql: counters wrap at 2^32 with identical limits") {
    auto run = [](std::uint32_t origin) {
        fresh f{4};
        f.q.rebase(origin);
        std::uint32_t limits = 0;
        std::int64_t t = 0;
        for (int round = 0; round < 200; ++round) {
            for (int k = 0; k < 1 + round % 5; ++k) f.q.on_queued(1500, at(t));
            t += round % 3;
            f.q.on_completed(f.q.inflight() / 2 + (round % 4 == 0 ? f.q.inflight() / 2 : 0),
                             at(t));
            limits = limits * 31 + f.q.limit();
        }
        return limits;
    };
    CHECK(run(0) == run(0xFFFF'FFFFU - 5000));
    CHECK(run(0) == run(0x8000'0000U));
}

TEST_CASE("dql: positive difference of 2^31 or more counts as zero") {
    CHECK(qlimits::detail::pos_diff(0x8000'0000U, 0) == 0);
    CHECK(qlimits::detail::pos_diff(0x7FFF'FFFFU, 0) == 0x7FFF'FFFFU);
}

TEST_CASE("dql: an enqueue above the maximum object is refused and counted") {
    fresh f{4};
    f.q.on_queued(10, at(0));
    const auto before = f.q.state();
    CHECK_FALSE(f.q.on_queued(qlimits::dql_max_object + 1, at(0)));
    const auto after = f.q.state();
    CHECK(after.num_queued == before.num_queued);
    CHECK(after.last_obj_cnt == 10); // not even the last object size changes
    CHECK(f.q.stats().rejected_enqueues == 1);
    CHECK(f.q.on_queued(qlimits::dql_max_object, at(0))); // the maximum itself is fine
    f.q.reset(at(1));
    CHECK(f.q.stats().rejected_enqueues == 1); // a lifetime count, kept as documented
}

TEST_CASE("dql: zero-sized calls are real operations") {
    fresh f{4};
    f.q.on_queued(500, at(0));
    f.q.on_queued(0, at(0));
    CHECK(f.q.state().last_obj_cnt == 0);
    f.q.on_queued(0, at(0));
    // c 0 with 500 over a zero limit and still in flight: neither branch, but the overshoot is
    // recorded; the next completion that drains the ring grows the limit by it.
    f.q.on_completed(0, at(0));
    CHECK(f.q.state().prev_ovlimit == 500);
    f.q.on_completed(500, at(0));
    CHECK(f.q.limit() == 500);
}

TEST_CASE("dql: over-completion is refused through the contract handler") {
    test::contract_probe probe;
    fresh f{4};
    f.q.on_queued(100, at(0));
    const auto before = f.q.state();
    CHECK_FALSE(f.q.on_completed(101, at(1)));
    CHECK(probe.count() == 1);
    CHECK(std::string(probe.last().where) == "dql::on_completed");
    const auto after = f.q.state();
    CHECK(after.num_completed == before.num_completed);
    CHECK(after.limit == before.limit);
    CHECK(after.last_reap == before.last_reap);
    CHECK(f.q.on_completed(100, at(1)));
}

TEST_CASE("dql: the default contract handler aborts with a clear message") {
    const auto end = test_support::run_in_child([] {
        dql_ms q{{}, at(0)};
        q.on_completed(1, at(0)); // nothing in flight
    });
    CHECK(end.signaled);
    CHECK(end.signal == SIGABRT);
    CHECK(end.stderr_text.find("contract violated in dql::on_completed: over-completion") !=
          std::string::npos);
}

TEST_CASE("dql: an invalid config is a contract violation and falls back to the defaults") {
    test::contract_probe probe;
    dql_ms q{{.max_limit = qlimits::dql_max_limit + 1}, at(0)};
    CHECK(probe.count() == 1);
    CHECK(q.stats().max_limit == qlimits::dql_max_limit);
    CHECK_FALSE(dql_ms::config_type{.hold_time = milliseconds{-1}}.valid());
    CHECK_FALSE(dql_ms::config_type{.stall_threshold = milliseconds{65536}}.valid());
    CHECK(dql_ms::config_type{.min_limit = 10, .max_limit = 5}.valid()); // as sysfs allows
}

TEST_CASE("dql: setters refuse values sysfs refuses and leave the state alone") {
    fresh f{4};
    CHECK_FALSE(f.q.set_max_limit(qlimits::dql_max_limit + 1));
    CHECK_FALSE(f.q.set_min_limit(0xFFFF'FFFFU));
    CHECK(f.q.stats().max_limit == qlimits::dql_max_limit);
    CHECK(f.q.stats().min_limit == 0);
    CHECK_FALSE(f.q.set_hold_time(milliseconds{-5}));
    CHECK_FALSE(f.q.set_stall_threshold(milliseconds{70000}, at(0)));
    CHECK(f.q.stats().hold_time_ticks == 4);
}

TEST_CASE("dql: stall detected when nothing completes for the threshold after a post") {
    fresh f{1000};
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(0)));
    f.q.on_queued(100, at(1));
    f.q.on_completed(100, at(11)); // post at tick 1 lies in [0 + 1, 11 - 4]: stall of 10 ticks
    CHECK(f.q.stats().stall_count == 1);
    CHECK(f.q.stats().stall_max == 10);
}

TEST_CASE("dql: no stall for a post in the same tick as the previous scan") {
    fresh f{1000};
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(0)));
    f.q.on_queued(100, at(0)); // tick 0 = last_reap: ignored
    f.q.on_completed(100, at(10));
    CHECK(f.q.stats().stall_count == 0);
}

TEST_CASE("dql: no stall for a post in the second half of the gap") {
    fresh f{1000};
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(0)));
    f.q.on_queued(100, at(8)); // window ends at now - 4 = 6
    f.q.on_completed(100, at(10));
    CHECK(f.q.stats().stall_count == 0);
}

TEST_CASE("dql: a threshold below sysfs's 4 ticks is accepted and counts ordinary traffic") {
    // README: 1 to 3 ticks are taken, though sysfs refuses them; at 1 a ring that posts and
    // completes once a tick counts every completion as a stall; from 4 on it counts none.
    for (const int thr : {1, 4}) {
        fresh f{1000};
        CHECK(f.q.set_stall_threshold(milliseconds{thr}, at(0)));
        for (int t = 1; t <= 100; ++t) {
            f.q.on_queued(100, at(t));
            f.q.on_completed(100, at(t));
        }
        CHECK(f.q.stats().stall_count == (thr == 1 ? 100U : 0U));
    }
}

TEST_CASE("dql: a late post pushes an early one out of the stall history") {
    // README: a post counts only while it is in the 256 ticks that end with the newest post's
    // 64-tick word; a post at +980 moves that window past the one at +10.
    for (const bool late : {false, true}) {
        fresh f{1000};
        CHECK(f.q.set_stall_threshold(milliseconds{100}, at(0)));
        f.q.on_queued(100, at(10));
        if (late) f.q.on_queued(100, at(980));
        f.q.on_completed(late ? 200 : 100, at(1000));
        CHECK(f.q.stats().stall_count == (late ? 0U : 1U));
    }
}

TEST_CASE("dql: stall history is kept only while a threshold is set") {
    fresh f{1000};
    f.q.on_queued(100, at(1)); // threshold 0: not recorded
    CHECK(f.q.state().history[0] == 0);
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(5))); // watching starts now
    CHECK(f.q.state().last_reap == 5);
    f.q.on_completed(100, at(20));
    CHECK(f.q.stats().stall_count == 0);
}

TEST_CASE("dql: changing between two non-zero thresholds keeps the scan start") {
    fresh f{1000};
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(3)));
    CHECK(f.q.set_stall_threshold(milliseconds{10}, at(7)));
    CHECK(f.q.state().last_reap == 3);
}

TEST_CASE("dql: stall length is truncated to 16 bits before the maximum") {
    fresh f{1000};
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(0)));
    f.q.on_queued(1, at(1));
    f.q.on_completed(1, at(1 + 70000)); // history word of tick 1 is still the newest: found
    CHECK(f.q.stats().stall_count == 1);
    CHECK(f.q.stats().stall_max == static_cast<std::uint16_t>(70000)); // 4464
}

TEST_CASE("dql: stale history words are cleared when the head moves on") {
    fresh f{1000};
    CHECK(f.q.set_stall_threshold(milliseconds{8}, at(0)));
    f.q.on_queued(1, at(1)); // word 0, bit 1
    CHECK(f.q.state().history[0] == 0x2U);
    f.q.on_queued(1, at(258)); // word 4 reuses slot 0: slots 1, 2, 3, 0 cleared, then bit 2 set
    const auto s = f.q.state();
    CHECK(s.history[0] == 0x4U);
    CHECK(s.history_head == 4);
    f.q.on_queued(1, at(330)); // word 5: only slot 1 lies between: slot 0 keeps its bit
    CHECK(f.q.state().history[0] == 0x4U);
    CHECK(f.q.state().history[1] == (std::uint64_t{1} << (330 % 64)));
}

TEST_CASE("dql: producer state lives on its own cache line") {
    // Two lines at least: the producer line and the completion line.
    CHECK(sizeof(dql_ms) >= 2 * qlimits::cache_line_size);
    CHECK(alignof(dql_ms) == qlimits::cache_line_size);
}

TEST_CASE("dql: may_post() sees a fall of adj_limit that its last reading does not show") {
    // may_post() answers from its last reading of adj_limit while that shows room. The reading
    // is a lower bound only while adj_limit grows; when the limit falls by more than a round
    // completes (here the max bound is lowered), the completion must make the next ask read
    // again, or the producer would post on room that is gone.
    fresh f{1000};
    CHECK(f.q.set_min_limit(1000));
    f.q.on_queued(100);
    CHECK(f.q.on_completed(100, at(1))); // limit 1000 (clamped up to min), adj_limit 1100
    CHECK(f.q.available() == 1000);
    CHECK(f.q.may_post()); // reads 1100
    f.q.on_queued(500);
    CHECK(f.q.set_min_limit(0));
    CHECK(f.q.set_max_limit(10));
    CHECK(f.q.on_completed(1, at(2))); // limit 1000 -> 10 by the clamp: adj_limit 1110 -> 111
    CHECK(f.q.available() == 111 - 600);
    CHECK_FALSE(f.q.may_post());
    // Growth again: a reading that shows no room is refreshed every time.
    CHECK(f.q.on_completed(499, at(3)));
    CHECK(f.q.may_post() == (f.q.available() >= 0));
}

TEST_CASE("dql: may_post() agrees with available() >= 0 on every step, whatever the caller does") {
    // Random calls, near the 32-bit wrap: admitting posts and posts that do not ask (up to
    // nearly 2^31 in flight, and far more than 2^32 posted between two asks), completions of
    // any size, bounds and limit written (falls of adj_limit), reset, hold times short enough
    // for the slack branch to shrink the limit. may_post() is asked on some steps only, so its
    // reading is often old when it is asked. (It seldom reaches a reset that keeps an adj_limit
    // 2^31 from the restarted counters with 2^30 posted after it: "after reset(), the first
    // completion makes may_post() read adj_limit again" does.)
    fresh f{3};
    f.q.rebase(0xFFFF'0000U);
    std::uint32_t x = 2463534242U;
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return x;
    };
    std::int64_t tick = 0;
    int asked = 0, said_yes = 0;
    for (int step = 0; step < 200000; ++step) {
        const std::uint32_t r = next();
        const std::uint32_t inflight = f.q.inflight();
        switch (r % 16) {
        case 0:
            CHECK(f.q.set_max_limit(next() % 5000));
            break;
        case 1:
            CHECK(f.q.set_min_limit(next() % 3000));
            break;
        case 2:
            CHECK(f.q.set_limit(next() % 4000));
            break;
        case 3:
            if (next() % 64 == 0) f.q.reset(at(tick));
            break;
        case 4: case 5: case 6: { // a post that does not ask, large ones included
            const std::uint32_t n = (r >> 8) % 4 == 0 ? qlimits::dql_max_object : next() % 2000;
            if (inflight + std::uint64_t{n} < 0x7FFF'0000U) f.q.on_queued(n);
            break;
        }
        case 7: case 8: case 9: case 10: // a post that asks first
            if (f.q.may_post()) f.q.on_queued(1 + next() % 1500);
            break;
        default: // a completion: all, or part, of what is in flight
            if (inflight > 0) {
                tick += static_cast<std::int64_t>(next() % 3);
                const std::uint32_t n = (r >> 8) % 4 == 0 ? inflight : 1 + next() % inflight;
                REQUIRE(f.q.on_completed(n, at(tick)));
            }
        }
        if (next() % 8 == 0) {
            ++asked;
            const bool yes = f.q.may_post();
            said_yes += yes ? 1 : 0;
            REQUIRE(yes == (f.q.available() >= 0));
        }
    }
    // Both answers came up often (the test is not all one way).
    CHECK(said_yes > asked / 10);
    CHECK(asked - said_yes > asked / 10);
}

TEST_CASE("dql: may_post() stays exact for a caller that posts without asking, near 2^31 in flight") {
    // A caller may post without asking while the consumer completes; between two asks its
    // posts can then run 2^31 past may_post()'s last reading of adj_limit. Room computed from
    // that reading wraps: the answer must come from a fresh reading, never from the wrap.
    fresh f{1000};
    CHECK(f.q.set_max_limit(0)); // limit 0: adj_limit is the completed count
    f.q.on_queued(1);
    CHECK(f.q.on_completed(1, at(1)));
    CHECK(f.q.may_post()); // room 0: reads adj_limit = 1
    for (int i = 0; i < 8; ++i) f.q.on_queued(qlimits::dql_max_object); // 2^31 - 8 in flight
    const auto churn = [&](std::uint32_t units) { // complete and post back, in small rounds
        for (std::uint32_t done = 0; done < units; done += 1U << 20) {
            REQUIRE(f.q.on_completed(1U << 20, at(1)));
            f.q.on_queued(1U << 20);
        }
    };
    // 2^31 + 1016 posted past the reading: as signed 32-bit, the room from it looks positive.
    churn(1024);
    CHECK(f.q.available() == -static_cast<std::int64_t>(0x7FFF'FFF8U));
    CHECK_FALSE(f.q.may_post());
    // 2^28 + 2^20 completed since that (fresh) reading, none of them lowering adj_limit: the
    // room from it, 0x6FF0'0008 as unsigned, looks like room under any bound below
    // dql_max_limit; the completion path's bump after 2^28 of growth forces a fresh reading.
    CHECK(f.q.may_post() == false);
    churn((1U << 28) + (1U << 20));
    CHECK(f.q.inflight() == 0x7FFF'FFF8U);
    CHECK_FALSE(f.q.may_post());
}

TEST_CASE("dql: after reset(), the first completion makes may_post() read adj_limit again") {
    // reset() keeps adj_limit (as Linux does) while the counters restart at 0, so the next
    // completion's adj_limit can lie 2^31 or more below the kept one: by a signed difference
    // that looks like growth, and a reading of the kept value would show room that is not
    // there (found by the policy_bytes fuzzer, 2026-12-05).
    fresh f{1000};
    f.q.rebase(0x8000'0000U);
    f.q.on_queued(100);
    CHECK(f.q.on_completed(100, at(1))); // adj_limit just above 2^31
    f.q.reset(at(2));
    CHECK_FALSE(f.q.may_post()); // the kept adj_limit reads as no room; this reads it
    f.q.on_queued(qlimits::dql_max_object);
    f.q.on_queued(qlimits::dql_max_object);
    CHECK(f.q.on_completed(10, at(3))); // limit 0 after reset: adj_limit 10
    CHECK(f.q.available() < 0);
    CHECK_FALSE(f.q.may_post());
}
