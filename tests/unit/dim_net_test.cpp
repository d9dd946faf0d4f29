// Unit tests of qlimits::net_dim. Every expected value is reasoned from the behaviour description
// (docs/design.md §5) step by step in the comments; none was produced
// by kernel code.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>

#include "contract_probe.hpp"
#include "qlimits/dim/net_dim.hpp"

namespace {
using namespace std::chrono_literals;
using qlimits::dim_sample;
using qlimits::dim_state;
using qlimits::dim_stats;
using qlimits::dim_tune_state;
using qlimits::dim_tuning;
using qlimits::net_dim;

// Stats that differ only in bytes per ms: doubling is BETTER, halving WORSE, equal SAME.
constexpr dim_stats bytes(std::int32_t bpms) { return dim_stats{100, bpms, 64, 0, 0}; }
constexpr dim_tuning tuning(dim_tune_state t, std::uint8_t ix, std::uint8_t sl, std::uint8_t sr,
                            std::uint8_t tired) {
    return dim_tuning{t, ix, sl, sr, tired};
}
constexpr auto on_top = dim_tune_state::parking_on_top;
constexpr auto tired_park = dim_tune_state::parking_tired;
constexpr auto right = dim_tune_state::going_right;
constexpr auto left = dim_tune_state::going_left;
} // namespace

TEST_CASE("net_dim: a fresh tuner is the kernel's zeroed instance") {
    const net_dim d;
    CHECK(d.state() == dim_state::start_measure);
    CHECK(d.tuning() == tuning(on_top, 0, 0, 0, 0));
    CHECK(d.prev_stats() == dim_stats{});
    CHECK(d.profile() == qlimits::net_dim_rx_eqe_profile);
    CHECK_FALSE(d.pending());
    // With a table, too: index 0, parked on top (the device runs the default, entry 1).
    const net_dim t{qlimits::net_dim_tx_eqe_profile};
    CHECK(t.tuning() == tuning(on_top, 0, 0, 0, 0));
    CHECK(qlimits::net_dim_default_moderation(qlimits::dim_direction::tx,
                                              qlimits::dim_cq_period_mode::start_from_eqe) ==
          qlimits::moderation{8, 128, 0});
}

TEST_CASE("net_dim: a tuner built with a table takes the kernel's first step, right to 1") {
    // Until 2026-12-05 the table's constructor started at index 1, so its first decision left
    // parking to the left (to 0), the opposite of a Linux driver's zeroed tuner.
    const auto first_decision = [](net_dim d) {
        (void)d.on_sample({0us, 0, 0, 0});
        CHECK(d.on_sample({100us, 64, 6400, 640000}));
        return d.tuning();
    };
    const auto kernel = first_decision(net_dim{});
    CHECK(kernel == tuning(right, 1, 0, 1, 1));
    CHECK(first_decision(net_dim{qlimits::net_dim_rx_eqe_profile}) == kernel);
    CHECK(first_decision(net_dim{qlimits::net_dim_rx_eqe_profile, 1}) == tuning(left, 0, 1, 0, 1));
}

TEST_CASE("net_dim: the first sample only opens the window; completions are never copied") {
    net_dim d;
    CHECK_FALSE(d.on_sample({5us, 7, 100, 2000, 99}));
    CHECK(d.state() == dim_state::measure_in_progress);
    CHECK(d.start_sample() == dim_sample{5us, 7, 100, 2000, 0});
    CHECK(d.tuning() == tuning(on_top, 0, 0, 0, 0));
}

TEST_CASE("net_dim: fewer than 64 events since the window opened change nothing") {
    net_dim d;
    (void)d.on_sample({0ns, 10, 0, 0});
    for (std::uint16_t ev = 10; ev < 10 + 64; ++ev) CHECK_FALSE(d.on_sample({1s, ev, 1000, 1000}));
    CHECK(d.start_sample() == dim_sample{0ns, 10, 0, 0, 0});
    CHECK(d.prev_stats() == dim_stats{});
    CHECK(d.state() == dim_state::measure_in_progress);
}

TEST_CASE("net_dim: the event gap is taken modulo 2^16") {
    net_dim d;
    (void)d.on_sample({0ns, 65530, 0, 0});
    CHECK_FALSE(d.on_sample({1ms, 57, 0, 0})); // 57 - 65530 mod 2^16 = 63
    CHECK(d.start_sample().events == 65530);
    CHECK_FALSE(d.on_sample({1ms, 58, 0, 0})); // 64: decides (zero rates: SAME, no change)
    CHECK(d.start_sample().events == 58);      // ... and the window reopened here
    CHECK(d.start_sample().time == 1ms);
}

TEST_CASE("net_dim: 64 events over 0 us keep the window open") {
    net_dim d;
    (void)d.on_sample({10us, 0, 0, 0});
    CHECK_FALSE(d.on_sample({10us, 64, 6400, 640000}));
    CHECK(d.start_sample().time == 10us); // not re-seeded
    CHECK(d.tuning() == tuning(on_top, 0, 0, 0, 0));
    CHECK(d.prev_stats() == dim_stats{});
    // 999 ns later is still 0 us
    CHECK_FALSE(d.on_sample({10us + 999ns, 64, 6400, 640000}));
    CHECK(d.start_sample().time == 10us);
    // 1 ms later the same window decides: 6400 pkts, 640000 bytes in 1000 us vs zero stats:
    // BETTER -> leave parking to the right (index 0) -> index 1
    CHECK(d.on_sample({1010us, 64, 6400, 640000}));
    CHECK(d.prev_stats() == dim_stats{6400, 640000, 64, 0, 0});
}

TEST_CASE("net_dim: a decision that moves the index waits for on_applied()") {
    net_dim d;
    (void)d.on_sample({0ns, 0, 0, 0});
    REQUIRE(d.on_sample({1ms, 64, 6400, 640000})); // BETTER vs zero: index 0 -> 1
    CHECK(d.pending());
    CHECK(d.state() == dim_state::apply_new_profile);
    CHECK(d.tuning() == tuning(right, 1, 0, 1, 1));
    CHECK(d.current_moderation() == qlimits::moderation{8, 256, 0});
    CHECK(d.start_sample().time == 0ns); // the start is not re-seeded by a changing decision
    // Until the driver applies, samples are ignored entirely (even a full window later).
    CHECK_FALSE(d.on_sample({2ms, 128, 1, 1}));
    CHECK_FALSE(d.on_sample({3ms, 192, 99999, 99999999}));
    CHECK(d.start_sample().time == 0ns);
    CHECK(d.tuning() == tuning(right, 1, 0, 1, 1));
    CHECK(d.state() == dim_state::apply_new_profile);
    // Applied: the next sample only opens a new window at its own time.
    d.on_applied();
    CHECK(d.state() == dim_state::start_measure);
    CHECK_FALSE(d.on_sample({4ms, 200, 7000, 700000}));
    CHECK(d.start_sample() == dim_sample{4ms, 200, 7000, 700000, 0});
    CHECK(d.state() == dim_state::measure_in_progress);
}

TEST_CASE("net_dim: a decision that keeps the index reopens the window at the deciding sample") {
    net_dim d;
    (void)d.on_sample({0ns, 0, 0, 0});
    CHECK_FALSE(d.on_sample({1ms, 64, 0, 0})); // zero rates vs zero stats: SAME, stays parked
    CHECK(d.state() == dim_state::measure_in_progress);
    CHECK(d.start_sample() == dim_sample{1ms, 64, 0, 0, 0});
}

TEST_CASE("net_dim: parked on top, SAME stays and the reference stays frozen") {
    net_dim d;
    CHECK(d.decide(bytes(1000)));            // BETTER vs zero: right, index 1
    CHECK(d.decide(bytes(1000)));            // SAME: turn left, step to 0
    CHECK(d.tuning() == tuning(left, 0, 1, 1, 2));
    CHECK_FALSE(d.decide(bytes(1200)));      // BETTER, going left at 0: edge -> park on top
    CHECK(d.tuning() == tuning(on_top, 0, 0, 0, 0));
    CHECK(d.prev_stats() == bytes(1200));    // refreshed by the decision that entered parking
    CHECK_FALSE(d.decide(bytes(1300)));      // 100*100/1200 = 8: SAME
    CHECK(d.prev_stats() == bytes(1200));    // frozen
    CHECK_FALSE(d.decide(bytes(1320)));      // 120*100/1200 = 10: SAME
    CHECK(d.prev_stats() == bytes(1200));
    // 132*100/1200 = 11 against the frozen 1200 (against 1320 it would be 0): BETTER -> leave
    // parking to the right (index 0) and step
    CHECK(d.decide(bytes(1332)));
    CHECK(d.tuning() == tuning(right, 1, 0, 1, 1));
    CHECK(d.prev_stats() == bytes(1332)); // refreshed by the decision that left parking
}

TEST_CASE("net_dim: leaving parking goes left above index 0 and steps at once") {
    net_dim d;
    REQUIRE(d.set_profile_ix(3));
    CHECK(d.decide(bytes(1000))); // BETTER vs zero
    CHECK(d.tuning() == tuning(left, 2, 1, 0, 1));
    net_dim w;
    REQUIRE(w.set_profile_ix(2));
    CHECK(w.decide(bytes(-5))); // a negative current bpms is still "not zero": BETTER
    CHECK(w.tuning() == tuning(left, 1, 1, 0, 1));
    // A WORSE window also leaves parking (anything but SAME).
    net_dim x;
    REQUIRE(x.set_profile_ix(4));
    CHECK(x.decide(bytes(1000)));                  // left: 3
    CHECK(x.decide(bytes(1000)));                  // SAME: turn right (steps_right 0), step: 4
    CHECK(x.tuning() == tuning(right, 4, 1, 1, 2));
    CHECK_FALSE(x.decide(bytes(2000)));            // BETTER at the right edge: park on top
    CHECK(x.tuning() == tuning(on_top, 4, 0, 0, 0));
    CHECK(x.decide(bytes(1000)));                  // WORSE: leave parking left, step: 3
    CHECK(x.tuning() == tuning(left, 3, 1, 0, 1));
}

TEST_CASE("net_dim: a window that is not BETTER turns the search") {
    net_dim d;
    CHECK(d.decide(bytes(1000))); // right: 1
    CHECK(d.decide(bytes(2000))); // BETTER: keep right: 2
    CHECK(d.tuning() == tuning(right, 2, 0, 2, 2));
    CHECK(d.decide(bytes(1000))); // WORSE: turn left (steps_left 0); not on top (sl 0); step: 1
    CHECK(d.tuning() == tuning(left, 1, 1, 2, 3));
}

TEST_CASE("net_dim: one step back after several forward is the top: park on top") {
    net_dim d;
    REQUIRE(d.set_profile_ix(2));
    CHECK(d.decide(bytes(1000))); // leave parking left: 1 (sl 1)
    CHECK(d.decide(bytes(2000))); // BETTER: left: 0 (sl 2)
    CHECK(d.tuning() == tuning(left, 0, 2, 0, 2));
    CHECK(d.decide(bytes(1000))); // WORSE: turn right (sr 0); on top needs sr == 1: no; step: 1
    CHECK(d.tuning() == tuning(right, 1, 2, 1, 3));
    CHECK_FALSE(d.decide(bytes(2000))); // BETTER: no turn; sl 2 > 1 and sr == 1: on top
    CHECK(d.tuning() == tuning(on_top, 1, 0, 0, 0));
    CHECK(d.prev_stats() == bytes(2000));
}

TEST_CASE("net_dim: the mirror top test going left") {
    net_dim d;
    CHECK(d.decide(bytes(1000)));  // right: 1 (sr 1)
    CHECK(d.decide(bytes(2000)));  // right: 2 (sr 2)
    CHECK(d.decide(bytes(1000)));  // WORSE: turn left (sl 0), not on top (sl 0), step: 1 (sl 1)
    CHECK(d.tuning() == tuning(left, 1, 1, 2, 3));
    CHECK_FALSE(d.decide(bytes(2000))); // BETTER: going left, sr 2 > 1 and sl == 1: on top
    CHECK(d.tuning() == tuning(on_top, 1, 0, 0, 0));
}

TEST_CASE("net_dim: ten steps without parking on top make the search tired") {
    net_dim d;
    CHECK(d.decide(bytes(1000))); // right: 1, tired 1
    // Equal windows: each decision turns and steps (1 <-> 0), tired +1, never on top (the
    // counter of the new direction was just cleared, the other one is 1).
    for (std::uint8_t t = 2; t <= 10; ++t) {
        CHECK(d.decide(bytes(1000)));
        const std::uint8_t ix = t % 2 == 0 ? 0 : 1;
        CHECK(d.tuning() == tuning(ix == 0 ? left : right, ix, 1, 1, t));
    }
    // Tired == 10: the step is refused before any edge test: park tired, counters cleared.
    CHECK_FALSE(d.decide(bytes(1000)));
    CHECK(d.tuning() == tuning(tired_park, 0, 0, 0, 10));
    // Ten decisions count down without comparing (even a much better window); stats refresh.
    for (std::uint8_t t = 9; t >= 1; --t) {
        CHECK_FALSE(d.decide(bytes(4000 + t)));
        CHECK(d.tuning() == tuning(tired_park, 0, 0, 0, t));
        CHECK(d.prev_stats() == bytes(4000 + t));
    }
    CHECK(d.decide(bytes(1))); // tired 0: leave parking (index 0: right), step
    CHECK(d.tuning() == tuning(right, 1, 0, 1, 1));
}

TEST_CASE("net_dim: tiredness is tested before the edge") {
    net_dim d;
    // Right to the edge: 1, 2, 3, 4 (tired 4).
    std::int32_t b = 1000;
    for (int i = 0; i < 4; ++i) {
        CHECK(d.decide(bytes(b)));
        b *= 2;
    }
    b /= 2;
    CHECK(d.tuning() == tuning(right, 4, 0, 4, 4));
    // Equal windows: 3, 4, 3, 4, 3, 4 (tired 10), going right at the edge.
    for (int i = 0; i < 6; ++i) CHECK(d.decide(bytes(b)));
    CHECK(d.tuning() == tuning(right, 4, 1, 1, 10));
    // BETTER at the edge with tired 10: TOO_TIRED wins over ON_EDGE -> parked tired, not on top.
    CHECK_FALSE(d.decide(bytes(b * 2)));
    CHECK(d.tuning() == tuning(tired_park, 4, 0, 0, 10));
}

TEST_CASE("net_dim: a swapped table changes only the numbers") {
    net_dim d;
    (void)d.on_sample({0ns, 0, 0, 0});
    REQUIRE(d.on_sample({1ms, 64, 6400, 640000}));
    const auto before = d.tuning();
    const auto start = d.start_sample();
    CHECK(d.set_profile(qlimits::net_dim_rx_cqe_profile));
    CHECK(d.tuning() == before);
    CHECK(d.start_sample() == start);
    CHECK(d.pending());
    CHECK(d.current_moderation() == qlimits::moderation{8, 128, 0});
    constexpr qlimits::net_dim_profile mine{{3, 3, 0}, {30, 30, 0}, {300, 300, 0}, {3000, 3, 0},
                                            {30000, 3, 0}};
    CHECK(d.set_profile(mine));
    CHECK(d.current_moderation() == qlimits::moderation{30, 30, 0});
}

TEST_CASE("net_dim: an index out of range is refused") {
    test::contract_probe probe;
    net_dim d;
    CHECK_FALSE(d.set_profile_ix(5));
    CHECK(probe.count() == 1);
    CHECK(d.profile_ix() == 0);
    CHECK(d.set_profile_ix(4));
    CHECK(d.current_moderation() == qlimits::moderation{256, 256, 0});
    const net_dim bad{qlimits::net_dim_rx_eqe_profile, 9};
    CHECK(probe.count() == 2);
    CHECK(bad.profile_ix() == 0);
}
