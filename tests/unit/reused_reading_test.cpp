// One clock reading for several completions (detail/coarse_clock.hpp, reused_reading): how
// many completions a reading serves, when it reads anew, and what a channel's dql sees.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "../../examples/rings/spsc_ring.hpp"
#include "contract_probe.hpp"
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
#include "qlimits/capture/recorder.hpp"
#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/trace.hpp"

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

// One item there and back on this thread, `n` times; the clock moves a tick every `per_step`.
template <class Channel>
void send_receive(Channel& ch, int n, int per_step = 1 << 30) {
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k) {
        if (k % per_step == per_step - 1)
            counted_clock::ticks += 1;
        REQUIRE(ch.try_send(std::uint64_t(k)) == qlimits::send_status::ok);
        REQUIRE(ch.try_receive(v));
    }
}
// A stream in steps of 200 completions (stride 16 after the first), then 1600 more: one
// reading per 16 of them.
template <class Channel>
void check_one_read_per_16(Channel& ch) {
    send_receive(ch, 2000, 200);
    counted_clock::reads = 0;
    send_receive(ch, 1600, 200);
    CHECK(counted_clock::reads >= 1600 / 16);
    CHECK(counted_clock::reads <= 1600 / 16 + 1);
}
} // namespace

TEST_CASE("channel: a dql on a coarse clock reads it once per 16 completions in a stream") {
    auto ring = std::make_unique<ring_t>();
    dql_channel ch(*ring, counted_dql::config_type{.min_limit = 1U << 20});
    check_one_read_per_16(ch);
    // An empty poll: the consumer may wait now, so the next completion reads.
    std::uint64_t v = 0;
    CHECK_FALSE(ch.try_receive(v));
    counted_clock::reads = 0;
    send_receive(ch, 1);
    CHECK(counted_clock::reads == 1);
}

TEST_CASE("channel: a checked<dql> takes dql's path there (one reading per 16), checked") {
    // checked<> forwards on_completed(n, seen, now_fn), so a checked dql in a channel is driven
    // as dql is and its rules are verified on that path (before 2026-12-06 it was driven
    // through on_completed(n, now): a reading per completion, and the path dql takes untested).
    using checked_dql = qlimits::testing::checked<counted_dql>;
    static_assert(qlimits::accepts_seen_time<checked_dql>);
    auto ring = std::make_unique<ring_t>();
    qlimits::channel<ring_t, checked_dql, counted_clock> ch(
        *ring, counted_dql::config_type{.min_limit = 1U << 20});
    check_one_read_per_16(ch);
    CHECK(ch.policy().failure() == nullptr);
    CHECK(ch.inflight() == 0);
    // On that path too, a completion of more than is in flight is refused and changes nothing.
    test::contract_probe probe;
    checked_dql p(counted_dql::config_type{}, counted_clock::now());
    REQUIRE(p.on_queued(2));
    const auto now_fn = []() noexcept { return counted_clock::now(); };
    CHECK(p.on_completed(1, counted_clock::now(), now_fn));
    CHECK_FALSE(p.on_completed(2, counted_clock::now(), now_fn));
    CHECK(probe.count() == 1);
    CHECK(p.inflight() == 1);
    CHECK(p.ok());
}

TEST_CASE("channel: a capturing<dql> reads the clock as rarely as the bare dql, and records") {
    // capturing<> is meant for production: wrapping dql must not add a clock read per
    // completion (before 2026-12-06 it did: the seen overload was not forwarded).
    using cap = qlimits::capturing<counted_dql>;
    static_assert(qlimits::accepts_seen_time<cap>);
    qlimits::capture_log log(qlimits::capture_capacity{4096, 4096, 4});
    auto ring = std::make_unique<ring_t>();
    qlimits::channel<ring_t, cap, counted_clock> ch(
        *ring, cap::config_type{{.min_limit = 1U << 20}, &log});
    check_one_read_per_16(ch);
    CHECK(log.item_count() == 3600);
    CHECK(log.completion_count() == 3600);
    CHECK(ch.inflight() == 0);
}

namespace {
// A dql channel with a stall threshold of 4 ticks, after a stream that took the stride to 16.
struct stalls_watched {
    std::unique_ptr<ring_t> ring = std::make_unique<ring_t>();
    dql_channel ch{*ring, counted_dql::config_type{
                              .min_limit = 1U << 20,
                              .stall_threshold = std::chrono::milliseconds{4}}};
    stalls_watched() { send_receive(ch, 2000, 200); }
};
} // namespace

TEST_CASE("channel: with the stall detector on, each completion's time is read") {
    stalls_watched w;
    dql_channel& ch = w.ch;
    REQUIRE(ch.policy().stats().stall_count == 0);
    // Posted one tick after the last completion, then the consumer pauses for 10 ticks with
    // the items in the ring (no empty poll tells the channel): the first completion finds the
    // stall, whole (from the post to the completion).
    counted_clock::ticks += 1;
    for (std::uint64_t k = 0; k < 20; ++k)
        REQUIRE(ch.try_send(std::uint64_t{k}) == qlimits::send_status::ok);
    counted_clock::ticks += 10;
    std::uint64_t v = 0;
    REQUIRE(ch.try_receive(v));
    CHECK(ch.policy().stats().stall_count == 1);
    CHECK(ch.policy().stats().stall_max == 10);
}

TEST_CASE("channel: no stall is seen where completions slowed down to one a tick") {
    // A review's reproducer (2026-12-06): with readings reused over 16 completions, a
    // consumer slowing from many completions a tick to one kept the old reading for up to 15
    // completions while the producer marked fresh posts, and the next reading saw a gap of 8
    // ticks with posts in it: a stall that never happened.
    stalls_watched w;
    dql_channel& ch = w.ch;
    for (std::uint64_t k = 0; k < 30; ++k)
        REQUIRE(ch.try_send(std::uint64_t{k}) == qlimits::send_status::ok);
    std::uint64_t v = 0;
    for (int k = 0; k < 40; ++k) {
        counted_clock::ticks += 1;
        REQUIRE(ch.try_send(std::uint64_t(k)) == qlimits::send_status::ok);
        REQUIRE(ch.try_receive(v));
    }
    CHECK(ch.policy().stats().stall_count == 0);
    CHECK(ch.policy().stats().stall_max == 0);
}

TEST_CASE("channel: a hold window starts when it starts, not at a reading from before a pause") {
    // A review's reproducer (2026-12-06): a starved completion after a consumer's pause of 500
    // ticks started the window at the reused reading from before the pause, and the limit
    // then shrank 501 ticks after it, not after the hold time of 1000.
    auto ring = std::make_unique<ring_t>();
    dql_channel ch(*ring, counted_dql::config_type{.min_limit = 1U << 20});
    send_receive(ch, 2000, 200);
    REQUIRE(ch.policy().set_min_limit(0));
    REQUIRE(ch.policy().set_max_limit(8));
    // A completion that reads (after an empty poll): the next 15 reuse its reading. It also
    // brings the limit down to 8.
    std::uint64_t v = 0;
    REQUIRE_FALSE(ch.try_receive(v));
    send_receive(ch, 1);
    REQUIRE(ch.limit() == 8);
    int sent = 0;
    while (ch.try_send(std::uint64_t{7}) == qlimits::send_status::ok)
        ++sent;
    REQUIRE(sent == 9); // over the limit by one
    counted_clock::ticks += 500;
    std::array<std::uint64_t, 32> out{};
    REQUIRE(ch.try_receive_batch(out, qlimits::completion::per_batch) == 9);
    // Starved (over the limit and now empty): the window starts now.
    CHECK(ch.policy().state().slack_start_time ==
          static_cast<std::uint64_t>(counted_clock::ticks));
}

TEST_CASE("dql: on_completed(n, seen, now_fn) is on_completed(n, now) where seen is now") {
    // Two dqls, the same calls: one told the time, one given it as `seen` and now_fn.
    counted_dql a(counted_dql::config_type{.hold_time = std::chrono::milliseconds{20}},
                  counted_clock::time_point{});
    counted_dql b(counted_dql::config_type{.hold_time = std::chrono::milliseconds{20}},
                  counted_clock::time_point{});
    std::uint64_t x = 12345;
    const auto next = [&x](std::uint64_t m) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return (x >> 33) % m;
    };
    std::int64_t now = 0;
    for (int k = 0; k < 20000; ++k) {
        now += static_cast<std::int64_t>(next(3));
        const counted_clock::time_point t{std::chrono::milliseconds{now}};
        const auto q = static_cast<std::uint32_t>(next(40));
        REQUIRE(a.on_queued(q, t) == b.on_queued(q, t));
        const auto c = static_cast<std::uint32_t>(next(a.inflight() + 1));
        REQUIRE(a.on_completed(c, t) == b.on_completed(c, t, [t]() noexcept { return t; }));
        const auto sa = a.state(), sb = b.state();
        REQUIRE(sa.limit == sb.limit);
        REQUIRE(sa.slack_start_time == sb.slack_start_time);
        REQUIRE(sa.lowest_slack == sb.lowest_slack);
        REQUIRE(sa.adj_limit == sb.adj_limit);
    }
    CHECK(a.limit() > 0);
}

TEST_CASE("dql: `seen` only delays a window's end; the times kept are now_fn()'s") {
    using tp = counted_clock::time_point;
    const auto at = [](std::int64_t ms) { return tp{std::chrono::milliseconds{ms}}; };
    counted_dql p(counted_dql::config_type{.hold_time = std::chrono::milliseconds{10}}, at(0));
    int reads = 0;
    std::int64_t clock_now = 0;
    const auto now_fn = [&]() noexcept {
        ++reads;
        return at(clock_now);
    };
    // Starved at its first completion (limit 0, 4 queued): the window starts at now_fn's time.
    REQUIRE(p.on_queued(4, at(0)));
    clock_now = 5;
    REQUIRE(p.on_completed(4, at(0), now_fn));
    CHECK(p.state().slack_start_time == 5);
    CHECK(reads == 1);
    // Keep the ring busy across rounds: the slack branch, which needs no time until the end
    // (from the second round on: the first after the growth has no earlier busy round).
    REQUIRE(p.on_queued(p.limit() + 20, at(5)));
    REQUIRE(p.on_completed(1, at(5), now_fn));
    reads = 0;
    const std::uint32_t limit_before = p.limit();
    clock_now = 100; // the window (10 ticks from 5) is long over...
    REQUIRE(p.on_completed(1, at(6), now_fn)); // ... but `seen` says 6: not yet
    CHECK(p.limit() == limit_before);
    CHECK(reads == 0);
    REQUIRE(p.on_completed(1, at(16), now_fn)); // `seen` past 15: the window ends
    CHECK(p.limit() < limit_before);
    CHECK(p.state().slack_start_time == 100); // the new window starts at the time read
    CHECK(reads == 1);
}

TEST_CASE("reused_reading: a single tick skipped (a move of two) resets the stride") {
    reading r;
    (void)stream(r, 3, 1000);
    REQUIRE(r.stride() == 16);
    counted_clock::ticks += 2;
    for (int k = 0; k < 16; ++k)
        (void)r.now();
    CHECK(r.stride() == 1);
}

TEST_CASE("reused_reading: the step is the smallest move (3, 4, 5, then a skip of 8)") {
    reading r;
    const std::int64_t moves[] = {4, 3, 5, 4};
    for (int round = 0; round < 3; ++round)
        for (const std::int64_t m : moves)
            (void)stream(r, 1, 1000, m);
    REQUIRE(r.stride() == 16);
    counted_clock::ticks += 5;
    for (int k = 0; k < 16; ++k)
        (void)r.now();
    REQUIRE(r.stride() == 16); // the last move was 5: no skip (the smallest, 3, is the step)
    counted_clock::ticks += 8;
    for (int k = 0; k < 16; ++k)
        (void)r.now();
    CHECK(r.stride() == 1); // 8 >= 2 x 3 (but not 2 x 5, the last move)
}

TEST_CASE("peer_policy and recording<> on a user's clock call qlimits::ticks_of") {
    // The decoy ticks_of above returns 0 for every time: a peer or a recording that found it
    // would time every sojourn as 0 and write no time steps.
    using tp = counted_clock::time_point;
    const auto at = [](std::int64_t ms) { return tp{std::chrono::milliseconds{ms}}; };
    qlimits::aimd_limit<counted_clock> p(
        {.initial_limit = 10, .min_limit = 1, .timeout = std::chrono::milliseconds{50}}, at(0));
    REQUIRE(p.on_queued(10));
    REQUIRE(p.on_completed(1, at(10)));
    REQUIRE(p.on_completed(9, at(100)));
    CHECK(p.stats().samples == 1);
    CHECK(p.stats().last_sojourn_ns == 90'000'000);

    qlimits::testing::recording<counted_dql> rec(counted_dql::config_type{}, at(7));
    REQUIRE(rec.on_queued(3, at(7)));
    REQUIRE(rec.on_completed(3, at(12)));
    const std::string& text = rec.sink().text;
    CHECK(text.find("t 7\n") != std::string::npos);
    CHECK(text.find("t 5\n") != std::string::npos);
}

TEST_CASE("reused_reading: current() reads only when now() reused an older reading") {
    reading r;
    (void)stream(r, 3, 1000);
    REQUIRE(r.stride() == 16);
    r.forget();
    counted_clock::reads = 0;
    (void)r.now(); // reads
    CHECK(tick_count(r.current()) == counted_clock::ticks);
    CHECK(counted_clock::reads == 1); // the reading now() just took
    counted_clock::ticks += 1;
    CHECK(tick_count(r.now()) == counted_clock::ticks - 1); // reused
    CHECK(tick_count(r.current()) == counted_clock::ticks);  // read
    CHECK(counted_clock::reads == 2);
    CHECK(tick_count(r.now()) == counted_clock::ticks); // the next completions reuse it
    CHECK(counted_clock::reads == 2);
}

TEST_CASE("channel: with the stall detector on, one reading per completion, not two") {
    // A review (2026-12-06): at one completion a tick the channel read for `seen` and dql read
    // again for the time it keeps.
    stalls_watched w;
    std::uint64_t v = 0;
    REQUIRE_FALSE(w.ch.try_receive(v));
    counted_clock::reads = 0;
    for (int k = 0; k < 100; ++k) {
        counted_clock::ticks += 1;
        REQUIRE(w.ch.try_send(std::uint64_t(k)) == qlimits::send_status::ok); // reads: a post
        REQUIRE(w.ch.try_receive(v));                                          // reads once
    }
    CHECK(counted_clock::reads == 200);
}

TEST_CASE("dql: a `seen` from before the window began does not end it (hold near 2^63)") {
    // A review (2026-12-06): time_after(seen, start + hold) with seen before start and a hold
    // near 2^63 overflowed and ended the window at once (the limit fell from 50 to 2).
    using tp = counted_clock::time_point;
    const auto at = [](std::int64_t ms) { return tp{std::chrono::milliseconds{ms}}; };
    counted_dql p(counted_dql::config_type{.hold_time = std::chrono::milliseconds{INT64_MAX}},
                  at(0));
    std::int64_t clock_now = 1000;
    const auto now_fn = [&]() noexcept { return at(clock_now); };
    REQUIRE(p.on_queued(50, at(1000)));
    REQUIRE(p.on_completed(50, at(1000), now_fn)); // starved: grows to 50, window from 1000
    REQUIRE(p.limit() == 50);
    REQUIRE(p.state().slack_start_time == 1000);
    REQUIRE(p.on_queued(200, at(1000)));
    for (int k = 0; k < 10; ++k)
        REQUIRE(p.on_completed(1, at(999), now_fn)); // busy rounds, `seen` before the start
    CHECK(p.limit() == 50);
}

namespace {
// A user policy whose three-argument on_completed takes a flag: a function pointer converts
// to bool, so a probe of that kind took it for accepts_seen_time, and a channel of it on a
// coarse clock no longer compiled (a review, 2026-12-06).
struct flag_policy : qlimits::unlimited<counted_clock> {
    static constexpr bool uses_time = true; // so the channel reads the clock for it
    using qlimits::unlimited<counted_clock>::unlimited;
    using qlimits::unlimited<counted_clock>::on_completed;
    bool on_completed(std::uint32_t n, time_point now, bool) noexcept {
        return on_completed(n, now);
    }
};
} // namespace
static_assert(!qlimits::accepts_seen_time<flag_policy>);
static_assert(qlimits::accepts_seen_time<counted_dql>);

TEST_CASE("channel: a policy with on_completed(n, now, bool) gets a reading per completion") {
    auto ring = std::make_unique<ring_t>();
    qlimits::channel<ring_t, flag_policy, counted_clock> ch(*ring);
    std::uint64_t v = 0;
    counted_clock::reads = 0;
    for (std::uint64_t k = 0; k < 10; ++k) {
        REQUIRE(ch.try_send(std::uint64_t{k}) == qlimits::send_status::ok);
        REQUIRE(ch.try_receive(v));
    }
    CHECK(counted_clock::reads == 10);
    CHECK(ch.inflight() == 0);
}

TEST_CASE("dql: with the stall detector on, a window's end is judged by the time read") {
    // The stall detector keeps every completion's time, so the reading is made anyway and
    // the window ends on time, not at `seen`.
    using tp = counted_clock::time_point;
    const auto at = [](std::int64_t ms) { return tp{std::chrono::milliseconds{ms}}; };
    counted_dql p(counted_dql::config_type{.hold_time = std::chrono::milliseconds{10},
                                           .stall_threshold = std::chrono::milliseconds{200}},
                  at(0));
    std::int64_t clock_now = 5;
    const auto now_fn = [&]() noexcept { return at(clock_now); };
    REQUIRE(p.on_queued(4, at(0)));
    REQUIRE(p.on_completed(4, at(0), now_fn)); // starved: window from 5
    REQUIRE(p.on_queued(p.limit() + 20, at(5)));
    REQUIRE(p.on_completed(1, at(5), now_fn));
    const std::uint32_t limit_before = p.limit();
    clock_now = 100;
    REQUIRE(p.on_completed(1, at(6), now_fn)); // `seen` says 6, the clock 100: ended
    CHECK(p.limit() < limit_before);
    CHECK(p.state().slack_start_time == 100);
}
