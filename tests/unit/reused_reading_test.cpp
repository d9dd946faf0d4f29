// One clock reading for several completions (detail/coarse_clock.hpp, reused_reading): how
// many completions a reading serves, when it reads anew, and what a channel's dql sees.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/clock.hpp"
#include "qlimits/detail/coarse_clock.hpp"

namespace {
// A millisecond clock the test moves by hand and that counts its readings.
struct counted_clock {
    using duration = std::chrono::milliseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<counted_clock, duration>;
    static inline std::int64_t ticks = 1000;
    static inline std::uint64_t reads = 0;
    [[nodiscard]] static time_point now() noexcept {
        ++reads;
        return time_point{duration{ticks}};
    }
};
} // namespace

// The channel reads counted_clock as it reads a coarse clock (as jiffy_clock on Linux). Only
// this file names counted_clock, so no other translation unit sees another definition.
template <>
struct qlimits::detail::adapter_clock<counted_clock> {
    static constexpr bool coarse = true;
    [[nodiscard]] static counted_clock::time_point now() noexcept { return counted_clock::now(); }
};

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"

namespace {
using reading = qlimits::detail::reused_reading<counted_clock>;
std::int64_t tick_count(counted_clock::time_point t) { return t.time_since_epoch().count(); }
// A function of the library's name beside the clock: argument-dependent lookup finds it for
// an unqualified call ticks_of(now), and a dql that called it would see every time as 0 (the
// stall test below would then find no stall). The library calls qlimits::ticks_of.
[[maybe_unused]] std::uint64_t ticks_of(counted_clock::time_point) { return 0; }

// `per_step` completions for each of `steps` steps of `step` ticks; returns the completions
// that saw a value older than the clock's.
int stream(reading& r, int steps, int per_step, std::int64_t step = 1) {
    int stale = 0;
    for (int s = 0; s < steps; ++s) {
        counted_clock::ticks += step;
        for (int k = 0; k < per_step; ++k)
            stale += tick_count(r.now()) < counted_clock::ticks ? 1 : 0;
    }
    return stale;
}
} // namespace

TEST_CASE("reused_reading: every completion reads while each sees the value move") {
    reading r;
    counted_clock::reads = 0;
    CHECK(stream(r, 100, 1) == 0);
    CHECK(counted_clock::reads == 100);
    CHECK(r.stride() == 1);
}

TEST_CASE("reused_reading: a fast stream reads once per 16 completions, a step late at most "
          "15 of them") {
    reading r;
    (void)stream(r, 3, 1000, 4); // 1000 completions per 4 ms tick (4 us each)
    CHECK(r.stride() == 16);
    counted_clock::reads = 0;
    const int stale = stream(r, 10, 1000, 4);
    CHECK(counted_clock::reads >= 10 * 1000 / 16);
    CHECK(counted_clock::reads <= 10 * 1000 / 16 + 1);
    // After each step, up to 15 completions reuse the reading before it.
    CHECK(stale <= 10 * 15);
    CHECK(stale >= 10); // ... and some do: the reading is really reused
}

TEST_CASE("reused_reading: the stride is an eighth of the completions a step held") {
    reading r;
    (void)stream(r, 4, 64);
    CHECK(r.stride() == 8);
    (void)stream(r, 4, 32);
    CHECK(r.stride() == 4);
    (void)stream(r, 4, 12); // 12 / 8 rounds down to 1
    CHECK(r.stride() == 1);
    (void)stream(r, 4, 100000);
    CHECK(r.stride() == 16); // capped
}

TEST_CASE("reused_reading: a step missed between readings (a slow-down) reads at once") {
    reading r;
    (void)stream(r, 3, 1000);
    REQUIRE(r.stride() == 16);
    // Now 10 ticks pass between completions: at most 15 completions reuse the last reading,
    // and from the first new one on, every completion reads.
    int stale = 0;
    int first_fresh = -1;
    for (int k = 0; k < 40; ++k) {
        counted_clock::ticks += 10;
        const bool old = tick_count(r.now()) < counted_clock::ticks;
        stale += old ? 1 : 0;
        if (!old && first_fresh < 0)
            first_fresh = k;
    }
    CHECK(first_fresh >= 0);
    CHECK(first_fresh <= 15);
    CHECK(stale == first_fresh);
    CHECK(r.stride() == 1);
}

TEST_CASE("reused_reading: a tick read in truncated milliseconds (3, 4 or 5) keeps the stride") {
    reading r;
    const std::int64_t moves[] = {4, 4, 3, 5, 4, 3, 5, 4};
    for (int round = 0; round < 4; ++round)
        for (const std::int64_t m : moves)
            (void)stream(r, 1, 1000, m);
    CHECK(r.stride() == 16);
}

TEST_CASE("reused_reading: forget() makes the next completion read") {
    reading r;
    (void)stream(r, 3, 1000);
    REQUIRE(r.stride() == 16);
    counted_clock::reads = 0;
    (void)r.now();
    (void)r.now();
    const auto before = counted_clock::reads;
    r.forget();
    counted_clock::ticks += 1;
    CHECK(tick_count(r.now()) == counted_clock::ticks);
    CHECK(counted_clock::reads == before + 1);
}

TEST_CASE("reused_reading: a source that goes backwards is read every time") {
    reading r;
    (void)stream(r, 3, 1000);
    REQUIRE(r.stride() == 16);
    counted_clock::ticks -= 100;
    for (int k = 0; k < 16; ++k)
        (void)r.now();
    CHECK(r.stride() == 1);
    CHECK(tick_count(r.now()) == counted_clock::ticks);
}

namespace {
using counted_dql = qlimits::dql<counted_clock>;
using ring_t = rings::spsc_ring<std::uint64_t, 1024>;
using dql_channel = qlimits::channel<ring_t, counted_dql, counted_clock>;

// One item there and back on this thread, `n` times; clock advanced by `step` every `per_step`.
void send_receive(dql_channel& ch, int n, int per_step = 1 << 30) {
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k) {
        if (k % per_step == per_step - 1)
            counted_clock::ticks += 1;
        REQUIRE(ch.try_send(std::uint64_t(k)) == qlimits::send_status::ok);
        REQUIRE(ch.try_receive(v));
    }
}
} // namespace

TEST_CASE("channel: a dql on a coarse clock reads it once per 16 completions in a stream") {
    auto ring = std::make_unique<ring_t>();
    dql_channel ch(*ring, counted_dql::config_type{.min_limit = 1U << 20});
    send_receive(ch, 2000, 200); // steps of 200 completions: stride 16 after the first
    counted_clock::reads = 0;
    send_receive(ch, 1600, 200);
    CHECK(counted_clock::reads >= 1600 / 16);
    CHECK(counted_clock::reads <= 1600 / 16 + 1);
    // An empty poll: the consumer may wait now, so the next completion reads.
    std::uint64_t v = 0;
    CHECK_FALSE(ch.try_receive(v));
    counted_clock::reads = 0;
    send_receive(ch, 1);
    CHECK(counted_clock::reads == 1);
}

TEST_CASE("channel: a stall during a consumer's pause is found by the first new reading, whole") {
    auto ring = std::make_unique<ring_t>();
    const counted_dql::config_type cfg{.min_limit = 1U << 20,
                                       .stall_threshold = std::chrono::milliseconds{4}};
    dql_channel ch(*ring, cfg);
    send_receive(ch, 2000, 200);
    // A last completion that reads the clock (after an empty poll), at tick T; the next 15
    // reuse its reading.
    std::uint64_t v = 0;
    REQUIRE_FALSE(ch.try_receive(v));
    send_receive(ch, 1);
    REQUIRE(ch.policy().stats().stall_count == 0);
    // Posted at T + 1, then the consumer pauses for 10 ticks with the items in the ring (no
    // empty poll tells the channel).
    counted_clock::ticks += 1;
    for (std::uint64_t k = 0; k < 20; ++k)
        REQUIRE(ch.try_send(std::uint64_t{k}) == qlimits::send_status::ok);
    counted_clock::ticks += 10;
    int taken = 0;
    while (ch.policy().stats().stall_count == 0 && taken < 20) {
        REQUIRE(ch.try_receive(v));
        ++taken;
    }
    CHECK(ch.policy().stats().stall_count == 1);
    // 15 completions reuse tick T (no gap seen), the 16th reads T + 11 and finds the stall...
    CHECK(taken == 16);
    // ... whole: from the post at T + 1 to T + 11.
    CHECK(ch.policy().stats().stall_max == 10);
}
