// Unit tests of the completion-side sojourn probe and drain meter.
#include <doctest/doctest.h>

#include <cstdint>
#include <deque>
#include <limits>

#include "qlimits/limits/sojourn_probe.hpp"

TEST_CASE("sojourn probe: times the backlog seen at arming until it has drained") {
    qlimits::sojourn_probe p;
    CHECK_FALSE(p.armed());
    CHECK_FALSE(p.arm(10, 10, 100)); // nothing in flight: nothing to time
    CHECK_FALSE(p.armed());
    CHECK(p.arm(15, 10, 100)); // 5 units waiting at t = 100
    CHECK(p.armed());
    CHECK_FALSE(p.on_completed(12, 105));
    CHECK_FALSE(p.on_completed(14, 120));
    CHECK(p.on_completed(16, 130)); // a batch completion passes the mark
    CHECK_FALSE(p.armed());
    CHECK(p.last().sojourn == 30);
    CHECK(p.last().drained == 6);
    CHECK(p.last().backlog == 5);
    CHECK(p.samples() == 1);
    CHECK_FALSE(p.on_completed(20, 140)); // disarmed: nothing more
    CHECK(p.samples() == 1);
}

TEST_CASE("sojourn probe: counters wrap at 2^32 and time at 2^64") {
    qlimits::sojourn_probe p;
    const std::uint32_t q = 3; // queued wrapped past 2^32; completed has not yet
    const std::uint32_t c = std::numeric_limits<std::uint32_t>::max() - 4;
    const std::uint64_t t0 = std::numeric_limits<std::uint64_t>::max() - 9;
    CHECK(p.arm(q, c, t0));
    CHECK(p.last().backlog == 0);
    CHECK_FALSE(p.on_completed(c + 5, t0 + 5)); // 2^32 - 5 + 5 = 0: one short of the mark
    CHECK(p.on_completed(c + 8, t0 + 20));      // time wrapped too
    CHECK(p.last().sojourn == 20);
    CHECK(p.last().drained == 8);
    CHECK(p.last().backlog == 8);
}

TEST_CASE("sojourn probe: a clock going backwards gives 0, a counter going backwards is refused") {
    qlimits::sojourn_probe p;
    CHECK(p.arm(10, 0, 1000));
    CHECK(p.on_completed(10, 900));
    CHECK(p.last().sojourn == 0);
    // queued "below" completed (a backlog of 2^31 or more) is taken as nothing to time.
    CHECK_FALSE(p.arm(0, 10, 0));
    CHECK_FALSE(p.armed());
    CHECK(p.arm(5, 0, 0));
    p.disarm();
    CHECK_FALSE(p.on_completed(5, 1));
}

TEST_CASE("sojourn probe: on a FIFO it reads the wait of an item arriving at arming time") {
    // A simulated FIFO: one unit arrives every 3 ticks, the consumer takes one every 5 ticks,
    // so the backlog grows; arm at some completion and compare with the true wait of the item
    // queued right after the arming (it is served right after the mark).
    qlimits::sojourn_probe p;
    std::deque<std::uint64_t> fifo; // arrival times
    std::uint32_t queued = 0, completed = 0;
    std::uint64_t next_arrival = 0, next_service = 5;
    bool checked = false;
    std::uint64_t arm_time = 0;
    for (std::uint64_t t = 0; t < 400 && !checked; ++t) {
        if (t == next_arrival) {
            fifo.push_back(t);
            ++queued;
            next_arrival += 3;
        }
        if (t == next_service && !fifo.empty()) {
            const std::uint64_t born = fifo.front();
            fifo.pop_front();
            ++completed;
            next_service += 5;
            if (p.on_completed(completed, t)) {
                // The last item counted at arming was born at or before arm_time and left now.
                CHECK(p.last().sojourn == t - arm_time);
                CHECK(born <= arm_time);
                CHECK(t - born >= p.last().sojourn);
                CHECK(t - born < p.last().sojourn + 3); // at most one arrival gap older
                checked = true;
            }
            if (t == 100) {
                CHECK(p.arm(queued, completed, t));
                arm_time = t;
            }
        }
    }
    CHECK(checked);
}

TEST_CASE("drain meter: units per tick over windows, independent of how the pieces come") {
    qlimits::drain_meter per_item(100), per_batch(100), coarse(100);
    // 2 units per tick: per item (1 unit / half a tick, as 1 unit per tick pairs) ...
    for (int i = 0; i < 100; ++i) per_item.add(2, 1);
    // ... in batches of 64 units over 32 ticks ...
    for (int i = 0; i < 4; ++i) per_batch.add(64, 32);
    // ... and with a coarse clock: many pieces of 0 ticks, then one of 50.
    for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 100; ++k) coarse.add(1, 0);
        coarse.add(0, 50);
    }
    CHECK(per_item.windows() == 1);
    CHECK(per_batch.windows() == 1);
    CHECK(coarse.windows() == 1);
    const std::uint64_t two = std::uint64_t{2} << qlimits::drain_meter::rate_shift;
    CHECK(per_item.rate_fp() == two);
    CHECK(per_batch.rate_fp() == two);
    CHECK(coarse.rate_fp() == two);
    CHECK(per_item.units_in(50) == 100);
}

TEST_CASE("drain meter: slow rates stay nonzero, no rate before a window, saturation") {
    qlimits::drain_meter m(0); // taken as 1
    CHECK(m.window_ticks() == 1);
    CHECK(m.rate_fp() == 0);
    CHECK(m.units_in(1000) == 0);
    CHECK_FALSE(m.add(1, 0));
    CHECK(m.add(0, 1000)); // one unit in 1000 ticks
    CHECK(m.rate_fp() == (std::uint64_t{1} << 32) / 1000);
    CHECK(m.units_in(1000) == 0); // rounded down
    CHECK(m.units_in(100000) == 99);
    CHECK(m.add(std::numeric_limits<std::uint32_t>::max(), 1));
    CHECK(m.units_in(std::numeric_limits<std::uint64_t>::max()) ==
          std::numeric_limits<std::uint64_t>::max() >> 32);
    m.set_window(10);
    CHECK_FALSE(m.add(5, 5));
    m.restart();
    CHECK_FALSE(m.add(5, 5)); // the open window was forgotten
    CHECK(m.add(5, 5));
    CHECK(m.rate_fp() == (std::uint64_t{1} << 32));
    // A window of 2^32 units or more is clamped to 2^32 - 1 before the shift, never wrapped
    // (review 2026-12-06: the case above adds exactly 2^32 - 1, below the clamp).
    constexpr std::uint64_t most = std::numeric_limits<std::uint32_t>::max();
    CHECK_FALSE(m.add(std::numeric_limits<std::uint32_t>::max(), 5));
    CHECK(m.add(std::numeric_limits<std::uint32_t>::max(), 5));
    CHECK(m.rate_fp() == (most << 32) / 10);
}

TEST_CASE("sojourn probe: elapsed and drained while armed tell an over-budget sample early") {
    qlimits::sojourn_probe p;
    CHECK(p.arm(100, 40, 1000));
    CHECK(p.elapsed(1500) == 500);
    CHECK(p.elapsed(900) == 0); // clock went backwards
    CHECK(p.drained(55) == 15);
    CHECK_FALSE(p.on_completed(55, 1500));
}
