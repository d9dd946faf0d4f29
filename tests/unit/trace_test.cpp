// Tests of the public trace aids: parser, replayer, recorder.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/testing/trace.hpp"
#include "contract_probe.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using dql_ms = qlimits::dql<clock_ms>;
using tp = clock_ms::time_point;
using qlimits::testing::limit_line;
using qlimits::testing::limit_op;
using qlimits::testing::parse_limit_line;

tp at(std::int64_t t) { return tp{std::chrono::milliseconds{t}}; }

// The parser's reason for refusing a line, or "accepted".
std::string err(const char* text) {
    const auto r = parse_limit_line(text);
    return r.what == limit_line::kind::error ? std::string(r.error) : std::string("accepted");
}
} // namespace

TEST_CASE("trace: parser reads every directive") {
    const auto q = parse_limit_line("q 1500");
    REQUIRE(q.what == limit_line::kind::directive);
    CHECK(q.directive.op == limit_op::queue);
    CHECK(q.directive.value == 1500);
    CHECK(parse_limit_line("t 18446744073709551615").directive.value == 18446744073709551615ULL);
    CHECK(parse_limit_line("reset").directive.op == limit_op::reset);
    CHECK(parse_limit_line("\tc  7   # trailing comment\r").directive.value == 7);
    CHECK(parse_limit_line("   ").what == limit_line::kind::none);
    CHECK(parse_limit_line("# comment").what == limit_line::kind::none);
}

TEST_CASE("trace: parser rejects malformed lines with a reason") {
    CHECK(err("q") == "missing argument");
    CHECK(err("reset 1") == "too many fields");
    CHECK(err("q 1 2") == "too many fields");
    CHECK(err("q -1") == "bad number (expected unsigned decimal below 2^32)");
    CHECK(err("q 4294967296") == "bad number (expected unsigned decimal below 2^32)");
    CHECK(err("t 18446744073709551616") == "bad number (expected unsigned decimal below 2^64)");
    CHECK(err("q 0x10") == "bad number (expected unsigned decimal below 2^32)");
    CHECK(err("Q 1") == "unknown directive");
    CHECK(err("stall 65536") == "stall threshold out of range (0..65535 ticks)");
    CHECK(err("a b c d e f g h i") == "too many fields");
}

TEST_CASE("trace: a carriage return only ends a line; leading zeros are only zeros") {
    // Review 2026-12-04: a '\r' anywhere separated fields ("q\r10" read as "q 10"), and a
    // number of more than 20 characters was refused whatever its value.
    CHECK(err("q\r10") == "unknown directive");
    CHECK(err("q 1\r0") == "bad number (expected unsigned decimal below 2^32)");
    CHECK(err("q 10\r") == "accepted");
    CHECK(parse_limit_line("q 000000000000000000001").directive.value == 1);
    CHECK(parse_limit_line("t 0000000000000000000018446744073709551615").directive.value ==
          18446744073709551615ULL);
    CHECK(err("t 0000000000000000000018446744073709551616") ==
          "bad number (expected unsigned decimal below 2^64)");
}

TEST_CASE("trace: origin is refused after the first q or c") {
    qlimits::testing::limit_replayer<dql_ms> r;
    CHECK(r.apply({limit_op::origin, 5}).error == nullptr);
    CHECK(r.apply({limit_op::queue, 1}).error == nullptr);
    CHECK(std::string(r.apply({limit_op::origin, 5}).error) == "origin after the first q/c");
}

TEST_CASE("trace: replay reports the failing line and stops") {
    std::string out;
    const char* why = nullptr;
    const auto bad = qlimits::testing::replay_limit_trace<dql_ms>(
        "init 4\nq 10\n\nc 11\nq 1\n", [&out](std::string_view s) { out.append(s); }, false, &why);
    CHECK(bad == 4);
    CHECK(std::string(why) == "over-completion");
    CHECK(out == "0 10 0 0 0 4294967295 -10\n");
}

TEST_CASE("trace: init refuses a hold time dql cannot honour, as hold does") {
    // Review 2026-12-03: `init 2^64-1` was accepted as a hold of -1 tick, which ended the hold
    // window before it began (the limit shrank in the tick the window opened, silently).
    for (const char* line : {"init 18446744073709551615\n", "init 9223372036854775808\n",
                             "hold 9223372036854775808\n"}) {
        CAPTURE(line);
        const char* why = nullptr;
        const auto bad = qlimits::testing::replay_limit_trace<dql_ms>(
            line, [](std::string_view) {}, false, &why);
        CHECK(bad == 1);
        CHECK(std::string(why) == "hold time out of range");
    }
    const char* why = nullptr;
    CHECK(qlimits::testing::replay_limit_trace<dql_ms>(
              "init 9223372036854775807\n", [](std::string_view) {}, false, &why) == 0);
}

TEST_CASE("trace: an init dql refuses is refused, with a clock whose ticks are unsigned") {
    // With a signed clock the conversion refuses every hold dql would (2^63 ticks or more)
    // first; with unsigned ticks it passes holds up to 2^64 - 1, and dql's own refusal must
    // still stop the replay (mutant trace-init-refused).
    using ms_u = std::chrono::duration<std::uint64_t, std::milli>;
    using dql_u = qlimits::dql<qlimits::manual_clock<ms_u>>;
    for (const char* line : {"init 9223372036854775808\n", "init 18446744073709551615\n"}) {
        CAPTURE(line);
        qlimits::testing::limit_replayer<dql_u> r;
        const char* why = nullptr;
        const auto bad = qlimits::testing::replay_limit_trace(
            r, line, [](std::string_view) {}, false, &why, [](std::size_t, const char*) {});
        CHECK(bad == 1);
        CHECK(std::string(why ? why : "") == "hold time out of range");
    }
}

TEST_CASE("trace: a hold that overflows the policy's finer clock is refused, not wrapped") {
    // Review 2026-12-04: durations were converted to the policy's ticks modulo 2^64, as times
    // are, so through a nanosecond dql `init 18446744073710` (x 10^6 ns: just past 2^64) ran as
    // a hold of 448384 ns while the smaller `init 18446744073709` was refused.
    using dql_ns = qlimits::dql<qlimits::manual_clock<std::chrono::nanoseconds>>;
    for (const char* line : {"init 18446744073709\n", "init 18446744073710\n",
                             "hold 36893488147420\n", "init 9223372036855\n"}) {
        CAPTURE(line);
        qlimits::testing::limit_replayer<dql_ns> r;
        const char* why = nullptr;
        const auto bad = qlimits::testing::replay_limit_trace(
            r, line, [](std::string_view) {}, false, &why, [](std::size_t, const char*) {});
        CHECK(bad == 1);
        CHECK(std::string(why) == "hold time out of range");
    }
    // The largest hold that fits 2^63 - 1 ns is kept exactly.
    qlimits::testing::limit_replayer<dql_ns> r;
    const char* why = nullptr;
    CHECK(qlimits::testing::replay_limit_trace(r, "init 9223372036854\n",
                                               [](std::string_view) {}, false, &why,
                                               [](std::size_t, const char*) {}) == 0);
    CHECK(r.policy().stats().hold_time_ticks == 9'223'372'036'854'000'000ULL);
}

TEST_CASE("trace: a recording of a call earlier than the last one replays to the same state") {
    // Two threads through a locked sink: the producer read its clock at 300 and took the lock
    // first, the consumer read 150 and came second. The recording wrote no `t` line for the
    // consumer's call, so the replay completed at 300 and the stall detector saw another
    // history (review, 2026-12-04: stall_count 1 live, 0 replayed).
    qlimits::testing::recording<dql_ms> rec{
        {.stall_threshold = std::chrono::milliseconds{100}}, at(0)};
    rec.on_queued(1, at(0));
    rec.on_completed(1, at(0));
    rec.on_queued(1, at(10));
    rec.on_queued(1, at(300));
    rec.on_completed(1, at(150));
    rec.on_completed(1, at(400));
    const std::string& text = rec.sink().text;
    CHECK(text.find("t 18446744073709551466\n") != std::string::npos); // 150 ticks back
    qlimits::testing::limit_replayer<dql_ms> r;
    const char* why = nullptr;
    CHECK(qlimits::testing::replay_limit_trace(r, text, [](std::string_view) {}, true, &why,
                                               [](std::size_t, const char*) {}) == 0);
    const auto live = rec.inner().stats();
    const auto replayed = r.policy().stats();
    CHECK(live.stall_count == 1);
    CHECK(replayed.stall_count == live.stall_count);
    CHECK(replayed.stall_max == live.stall_max);
    CHECK(replayed.limit == live.limit);
    CHECK(r.policy().state().adj_limit == rec.inner().state().adj_limit);
}

TEST_CASE("trace: a recording of an invalid config writes the defaults the policy runs with") {
    // Review 2026-12-03: the preamble wrote the rejected values, so the replay diverged.
    test::contract_probe probe;
    qlimits::testing::recording<dql_ms> rec{{.min_limit = qlimits::dql_max_limit + 1}, at(0)};
    CHECK(probe.count() == 1);
    rec.on_queued(1000, at(0));
    rec.on_completed(1000, at(1));
    CHECK(rec.sink().text.rfind("init 1000\nmin 0\nmax 1879048192\nreset\nstall 0\n", 0) == 0);
    std::string replayed;
    const char* why = nullptr;
    CHECK(qlimits::testing::replay_limit_trace<dql_ms>(
              rec.sink().text, [&replayed](std::string_view s) { replayed.append(s); }, false,
              &why) == 0);
    const auto s = rec.inner().state();
    CHECK(replayed.substr(replayed.rfind('\n', replayed.size() - 2) + 1) ==
          std::to_string(s.limit) + ' ' + std::to_string(s.num_queued) + ' ' +
              std::to_string(s.num_completed) + ' ' + std::to_string(s.adj_limit) + ' ' +
              std::to_string(s.prev_ovlimit) + ' ' + std::to_string(s.lowest_slack) + ' ' +
              std::to_string(s.avail()) + '\n');
}

TEST_CASE("trace: a recording replays to the same state lines") {
    qlimits::testing::recording<dql_ms> rec{
        {.min_limit = 3000, .hold_time = std::chrono::milliseconds{10},
         .stall_threshold = std::chrono::milliseconds{20}},
        at(100)};
    std::string direct;
    const auto line = [&] {
        const auto s = rec.inner().state();
        direct += std::to_string(s.limit) + ' ' + std::to_string(s.num_queued) + ' ' +
                  std::to_string(s.num_completed) + ' ' + std::to_string(s.adj_limit) + ' ' +
                  std::to_string(s.prev_ovlimit) + ' ' + std::to_string(s.lowest_slack) + ' ' +
                  std::to_string(s.avail()) + ' ' + std::to_string(s.stall_count) + ' ' +
                  std::to_string(s.stall_max) + '\n';
    };
    std::int64_t t = 100;
    for (int round = 0; round < 300; ++round) {
        if (round % 3 == 0) ++t; // a post after the last completion's tick can count as a stall
        for (int k = 0; k < 1 + round % 7; ++k) {
            if (rec.available() < 0) break;
            rec.on_queued(1500, at(t));
            line();
        }
        t += round % 4 == 0 ? 0 : 1 + round % 30;
        rec.on_completed(round % 5 == 0 ? rec.inflight() : rec.inflight() / 2, at(t));
        line();
    }
    std::string replayed;
    const char* why = nullptr;
    const auto bad = qlimits::testing::replay_limit_trace<dql_ms>(
        rec.sink().text, [&replayed](std::string_view s) { replayed.append(s); }, true, &why);
    CHECK(bad == 0);
    CHECK(replayed == direct);
    CHECK(rec.sink().text.rfind("t 100\ninit 10\nmin 3000\nmax 1879048192\nreset\nstall 20\n", 0) ==
          0); // the construction time first (dql's stall history is in absolute ticks)
    CHECK(rec.inner().stats().stall_count > 0); // the workload does stall now and then
}

TEST_CASE("trace: a q the policy refuses is replayed as refused, with a note") {
    // Review 2026-12-05: `q 268435456` (dql_max_object + 1) was refused by the policy and
    // printed without a word; the c completing it then read as an over-completion. It stays a
    // refused call (a recording of one replays to the same state) and says so.
    qlimits::testing::limit_replayer<dql_ms> r;
    const auto step = r.apply({limit_op::queue, 268435456});
    CHECK(step.error == nullptr);
    CHECK(step.printed);
    REQUIRE(step.note != nullptr);
    CHECK(std::string(step.note).find("q refused by the policy") == 0);
    CHECK(r.policy().inflight() == 0);
    CHECK(r.apply({limit_op::queue, 268435455}).note == nullptr);
    qlimits::testing::limit_replayer<qlimits::fixed_limit<clock_ms>> f;
    CHECK(f.apply({limit_op::queue, 268435456}).note != nullptr);
}

TEST_CASE("trace: tick_ns after init, hold or stall is refused whatever the policy") {
    // Review 2026-12-05: dql refused it, fixed_limit (which skips init) took it.
    for (const char* first : {"init 5\n", "hold 5\n", "stall 5\n"}) {
        CAPTURE(first);
        const std::string text = std::string(first) + "tick_ns 7\nq 1\n";
        const char* why = nullptr;
        CHECK(qlimits::testing::replay_limit_trace<dql_ms>(text, [](std::string_view) {}, false,
                                                           &why) == 2);
        why = nullptr;
        CHECK(qlimits::testing::replay_limit_trace<qlimits::fixed_limit<clock_ms>>(
                  text, [](std::string_view) {}, false, &why) == 2);
        REQUIRE(why != nullptr);
        CHECK(std::string(why) == "tick_ns after the first q, c, t, init, hold or stall");
    }
}

TEST_CASE("trace: a stall threshold past the policy's range after tick_ns says whose ticks") {
    // Review 2026-12-05: `stall 65535` in a trace of 1 s ticks is 65535 s, past dql's 65535
    // jiffies; the message said 0..65535 ticks, which the trace's value is within.
    const char* why = nullptr;
    CHECK(qlimits::testing::replay_limit_trace<dql_ms>("tick_ns 1000000000\nstall 65535\n",
                                                       [](std::string_view) {}, false, &why) == 2);
    REQUIRE(why != nullptr);
    CHECK(std::string(why) == "stall threshold out of range (0..65535 of the policy's ticks)");
    why = nullptr;
    CHECK(qlimits::testing::replay_limit_trace<dql_ms>("tick_ns 1000000000\nstall 65\n",
                                                       [](std::string_view) {}, false, &why) == 0);
}
