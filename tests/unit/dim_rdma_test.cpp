// Unit tests of qlimits::rdma_dim. Every expected value is reasoned from the behaviour
// description (docs/design.md §5) in the comments; none was produced by
// kernel code.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>

#include "contract_probe.hpp"
#include "qlimits/dim/rdma_dim.hpp"

namespace {
using namespace std::chrono_literals;
using qlimits::dim_sample;
using qlimits::dim_state;
using qlimits::dim_stats;
using qlimits::dim_tune_state;
using qlimits::dim_tuning;
using qlimits::rdma_dim;

constexpr dim_stats comps(std::int32_t cpms, std::int32_t cpe) { return dim_stats{0, 0, 100, cpms, cpe}; }
constexpr dim_tuning tuning(dim_tune_state t, std::uint8_t ix, std::uint8_t sl, std::uint8_t sr) {
    return dim_tuning{t, ix, sl, sr, 0};
}
constexpr auto right = dim_tune_state::going_right;
constexpr auto left = dim_tune_state::going_left;
} // namespace

TEST_CASE("rdma_dim: starts going right at index 0") {
    const rdma_dim r;
    CHECK(r.state() == dim_state::start_measure);
    CHECK(r.tuning() == tuning(right, 0, 0, 0));
    CHECK(r.current_moderation() == qlimits::moderation{1, 0, 1});
    CHECK(r.profile() == qlimits::rdma_dim_default_profile);
}

TEST_CASE("rdma_dim: every call is one event; the window closes on the 64th after its start") {
    rdma_dim r;
    CHECK_FALSE(r.on_completions(5, 0us)); // running: 1 event, 5 comps; opens the window
    CHECK(r.start_sample() == dim_sample{0us, 1, 0, 0, 5});
    for (int i = 1; i <= 63; ++i) CHECK_FALSE(r.on_completions(10, std::chrono::microseconds{10 * i}));
    CHECK(r.start_sample().events == 1); // 63 events: still open
    CHECK(r.running_sample() == dim_sample{630us, 64, 0, 0, 635});
    // The 64th: 640 comps in 640 us -> cpms 1000, epms 100, cpe 1000; prev cpms 0 -> SAME;
    // 1000 > 50 * 0: no snap, no change -> the window reopens here.
    CHECK_FALSE(r.on_completions(10, 640us));
    CHECK(r.prev_stats() == dim_stats{0, 0, 100, 1000, 1000});
    CHECK(r.start_sample() == dim_sample{640us, 65, 0, 0, 645});
    CHECK(r.state() == dim_state::measure_in_progress);
}

TEST_CASE("rdma_dim: a change waits for on_applied(); calls meanwhile still count") {
    rdma_dim r;
    (void)r.on_completions(0, 0us);
    for (int i = 1; i <= 64; ++i) (void)r.on_completions(10, std::chrono::microseconds{10 * i});
    // prev is now cpms 1000. A window of 1280 comps in 640 us: cpms 2000: BETTER -> index 1.
    bool changed = false;
    for (int i = 65; i <= 128; ++i) changed = r.on_completions(20, std::chrono::microseconds{10 * i});
    CHECK(changed);
    CHECK(r.pending());
    CHECK(r.tuning() == tuning(right, 1, 0, 1));
    CHECK(r.current_moderation() == qlimits::moderation{1, 0, 4});
    const auto start = r.start_sample();
    for (int i = 0; i < 200; ++i) CHECK_FALSE(r.on_completions(1, 2ms));
    CHECK(r.start_sample() == start);
    CHECK(r.running_sample().events == static_cast<std::uint16_t>(129 + 200));
    r.on_applied();
    CHECK_FALSE(r.on_completions(3, 3ms)); // re-seeds from the running sample
    CHECK(r.start_sample() == r.running_sample());
    CHECK(r.start_sample().time == 3ms);
}

TEST_CASE("rdma_dim: completions are summed modulo 2^32 (the argument truncated)") {
    rdma_dim r;
    (void)r.on_completions(0xFFFF'FFFFULL, 0us);
    (void)r.on_completions(0x1'0000'0002ULL, 1us);
    CHECK(r.running_sample().comps == 1U); // 0xFFFFFFFF + 2 mod 2^32
}

TEST_CASE("rdma_dim: BETTER steps right, WORSE turns and steps, the edge turns") {
    rdma_dim r;
    std::int32_t c = 100;
    CHECK_FALSE(r.decide(comps(c, c))); // prev cpms 0: SAME; cpe 100 > 0: no snap
    for (std::uint8_t ix = 1; ix <= 8; ++ix) {
        c *= 2;
        CHECK(r.decide(comps(c, 100))); // cpms doubles: BETTER -> right
        CHECK(r.tuning() == tuning(right, ix, 0, ix));
    }
    // BETTER at index 8: the step hits the edge and turns instead (no parking in RDMA).
    c *= 2;
    CHECK_FALSE(r.decide(comps(c, 100)));
    CHECK(r.tuning() == tuning(left, 8, 0, 8));
    // BETTER going left: step left.
    c *= 2;
    CHECK(r.decide(comps(c, 100)));
    CHECK(r.tuning() == tuning(left, 7, 1, 8));
    // WORSE going left: turn right (steps_right 0), then step right.
    CHECK(r.decide(comps(c / 2, 100)));
    CHECK(r.tuning() == tuning(right, 8, 1, 1));
    // WORSE at index 8 going right: turn left (steps_left 0), step left.
    CHECK(r.decide(comps(c / 4, 100)));
    CHECK(r.tuning() == tuning(left, 7, 1, 1));
}

TEST_CASE("rdma_dim: WORSE at an edge turns twice") {
    rdma_dim r;
    CHECK_FALSE(r.decide(comps(100, 100)));
    // WORSE going right at 0: turn left (steps_left 0); the left step at 0 is an edge: turn
    // right again (steps_right 0). Index unchanged.
    CHECK_FALSE(r.decide(comps(50, 100)));
    CHECK(r.tuning() == tuning(right, 0, 0, 0));
}

TEST_CASE("rdma_dim: SAME with a low completions-per-event ratio snaps to index 0") {
    rdma_dim r;
    CHECK_FALSE(r.decide(comps(20, 20)));
    CHECK(r.decide(comps(40, 40)));
    CHECK(r.decide(comps(80, 80)));
    CHECK(r.tuning() == tuning(right, 2, 0, 2));
    // cpms 80 -> 85 is 6%, but cpe 80 -> 100 is 25%: BETTER, a step right to index 3.
    CHECK(r.decide(comps(85, 100)));
    CHECK(r.tuning() == tuning(right, 3, 0, 3));
    // Both within 10% (6% and 5%): SAME; cpe 105 <= 50 * 3 -> snap to 0; direction and step
    // counters untouched.
    CHECK(r.decide(comps(85, 105)));
    CHECK(r.tuning() == tuning(right, 0, 0, 3));
    CHECK(r.prev_stats() == comps(85, 105));
    // SAME with the ratio above 50 * index: nothing moves.
    CHECK(r.decide(comps(85, 105)) == false);
    CHECK(r.decide(comps(170, 105)));  // BETTER: right to 1 (steps_right 4)
    CHECK(r.tuning() == tuning(right, 1, 0, 4));
    CHECK_FALSE(r.decide(comps(170, 110))); // SAME; 110 > 50: stays
    CHECK(r.tuning() == tuning(right, 1, 0, 4));
}

TEST_CASE("rdma_dim: previous cpms 0 makes every window SAME") {
    rdma_dim r;
    REQUIRE(r.set_profile_ix(5));
    // prev cpms 0 -> SAME; cpe 250 <= 50 * 5 -> snap to 0
    CHECK(r.decide(comps(1000, 250)));
    CHECK(r.profile_ix() == 0);
    rdma_dim q;
    REQUIRE(q.set_profile_ix(5));
    CHECK_FALSE(q.decide(comps(1000, 251))); // 251 > 250: no snap
    CHECK(q.profile_ix() == 5);
}

TEST_CASE("rdma_dim: the u16 event gap quirk decides early when the counter wraps") {
    // With no completions every decision is SAME at index 0 (no change), so windows chain:
    // starts at events 1, 65, ..., 1 + 64k. The start at 65473 (k = 1023) is followed by the
    // counter wrapping to 0 after 63 calls: 0 - 65473 as int is negative, as u32 huge, so the
    // window closes one event early, at 63 events.
    rdma_dim r;
    std::int64_t t = 0;
    for (int call = 1; call <= 65535; ++call) (void)r.on_completions(0, std::chrono::microseconds{++t});
    CHECK(r.running_sample().events == 65535);
    CHECK(r.start_sample().events == 65473);
    (void)r.on_completions(0, std::chrono::microseconds{++t}); // events wrap to 0
    CHECK(r.start_sample().events == 0);                      // a decision happened: re-seeded
    CHECK(r.start_sample().time == std::chrono::microseconds{65536});
    // The stats were rated over 63 us as if 64 events: epms = ceil(64000 / 63) = 1016.
    CHECK(r.prev_stats().epms == 1016);
}

TEST_CASE("rdma_dim: decisions never park and never get tired") {
    rdma_dim r;
    for (int i = 0; i < 40; ++i) {
        (void)r.decide(comps(100 + (i % 3) * 50, 100 - (i % 5) * 10));
        CHECK(r.tune_state() != dim_tune_state::parking_on_top);
        CHECK(r.tune_state() != dim_tune_state::parking_tired);
        CHECK(r.profile_ix() < 9);
        CHECK(r.tired() == 0);
    }
}

TEST_CASE("rdma_dim: index and table validation") {
    test::contract_probe probe;
    rdma_dim r;
    CHECK_FALSE(r.set_profile_ix(9));
    CHECK(probe.count() == 1);
    CHECK(r.set_profile_ix(8));
    CHECK(r.current_moderation() == qlimits::moderation{32, 0, 32});
}
