// The test aids compose: a recording of any policy with any clock replays through checked<>,
// other policies and the lab's replayer; the fuzz entry point and the RapidCheck generators
// drive any policy; a recording taken from two threads replays to the same state.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/capture/recorder.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/software_limit.hpp"
#include "qlimits/testing/fuzz.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/rapidcheck.hpp"
#include "qlimits/testing/trace.hpp"
#include "child_death.hpp"
#include "contract_probe.hpp"

namespace {
namespace qt = qlimits::testing;
using dql_ms = qlimits::dql<qlimits::manual_clock<std::chrono::milliseconds>>;
using dql_ns = qlimits::dql<qlimits::manual_clock<std::chrono::nanoseconds>>;

template <class Policy>
std::string replay(std::string_view text, std::size_t* bad = nullptr, bool strict = false,
                   std::vector<std::string>* notes = nullptr) {
    qt::limit_replayer<Policy> r;
    r.set_strict(strict);
    std::string out;
    const char* why = nullptr;
    const std::size_t line = qt::replay_limit_trace(
        r, text, [&out](std::string_view s) { out.append(s); }, false, &why,
        [notes](std::size_t n, const char* note) {
            if (notes) notes->push_back(std::to_string(n) + ": " + note);
        });
    if (bad) *bad = line;
    if (line != 0) out += std::string("error: ") + why + "\n";
    return out;
}

// A workload through a recorded dql with the library's default clock (jiffy_clock): bursts of
// 1500-byte packets, completed in rounds 1 ms apart.
template <class Rec>
void drive(Rec& rec, typename Rec::time_point t0) {
    auto t = t0;
    for (int round = 0; round < 200; ++round) {
        const int burst = 3 + round % 17;
        for (int i = 0; i < burst && rec.available() >= 0; ++i) (void)rec.on_queued(1500, t);
        t += std::chrono::milliseconds{1 + round % 3};
        (void)rec.on_completed(rec.inflight() / (1U + static_cast<unsigned>(round % 2)), t);
    }
}
} // namespace

TEST_CASE("replayer: drives dql with the default jiffy clock exactly as with a manual clock") {
    const std::string trace =
        "init 1000\nq 3000\nt 5\nc 3000\nq 9000\nt 1\nc 4500\nt 2000\nc 4500\n";
    const std::string a = replay<qlimits::dql<>>(trace);
    CHECK(a == replay<dql_ms>(trace));
    CHECK(a.find("error") == std::string::npos);
}

TEST_CASE("replayer: maps trace ticks to a nanosecond policy's duration") {
    qt::limit_replayer<dql_ns> r;
    CHECK(r.apply({qt::limit_op::tick, 3}).error == nullptr);
    CHECK(r.now().time_since_epoch().count() == 3'000'000); // 3 ticks of 1 ms
    qt::limit_replayer<dql_ns> fine;
    CHECK(fine.apply({qt::limit_op::tick_ns, 250}).error == nullptr);
    CHECK(fine.apply({qt::limit_op::tick, 4}).error == nullptr);
    CHECK(fine.now().time_since_epoch().count() == 1000);
    CHECK(std::string(fine.apply({qt::limit_op::tick_ns, 1}).error) ==
          "tick_ns after the first q, c, t, init, hold or stall");
    // A coarser policy truncates, as a kernel reads jiffies: 2.5 ms of 1 us ticks is 2 ms.
    qt::limit_replayer<dql_ms> coarse;
    CHECK(coarse.apply({qt::limit_op::tick_ns, 1000}).error == nullptr);
    CHECK(coarse.apply({qt::limit_op::tick, 2500}).error == nullptr);
    CHECK(coarse.now().time_since_epoch().count() == 2);
    CHECK(qt::parse_limit_line("tick_ns 0").what == qt::limit_line::kind::error);
}

TEST_CASE("recording of a default-clock dql replays through checked<dql<>> line for line") {
    using rec_t = qt::recording<qlimits::dql<>>;
    const qlimits::jiffy_clock::time_point t0{std::chrono::milliseconds{123456}};
    rec_t rec({.min_limit = 1500, .hold_time = std::chrono::milliseconds{20}}, t0);
    drive(rec, t0);
    const std::string& text = rec.sink().text;
    // ms clock: no tick_ns line; the construction time first (dql's stall history is absolute)
    REQUIRE(text.rfind("t 123456\ninit 20\nmin 1500\n", 0) == 0);

    qt::limit_replayer<qt::checked<qlimits::dql<>>> r;
    std::string out;
    const char* why = nullptr;
    const auto bad = qt::replay_limit_trace(
        r, text, [&out](std::string_view s) { out.append(s); }, false, &why,
        [](std::size_t, const char*) { FAIL("no directive may be skipped for dql"); });
    REQUIRE(bad == 0);
    CHECK(r.policy().ok()); // the checker is readable after the replay
    CHECK(r.policy().inner().limit() == rec.limit());
    CHECK(r.policy().inflight() == rec.inflight());
    CHECK(out == replay<qlimits::dql<>>(text)); // the wrapper changes nothing
    CHECK(r.policy().inner().state().num_queued == rec.inner().state().num_queued);
}

TEST_CASE("recording replays through a policy without dql's knobs: skipped with notes") {
    qt::recording<qlimits::dql<>> rec({.stall_threshold = std::chrono::milliseconds{3}},
                                      qlimits::jiffy_clock::time_point{});
    drive(rec, {});
    std::vector<std::string> notes;
    std::size_t bad = 0;
    const std::string out = replay<qlimits::fixed_limit<>>(rec.sink().text, &bad, false, &notes);
    CHECK(bad == 0);
    CHECK(notes == std::vector<std::string>{"1: init: not supported by this policy, skipped",
                                            "2: min: not supported by this policy, skipped",
                                            "3: max: not supported by this policy, skipped",
                                            "5: stall: not supported by this policy, skipped"});
    CHECK(out.find("error") == std::string::npos);
    CHECK(replay<qlimits::unlimited<>>(rec.sink().text, &bad) != "");
    CHECK(bad == 0);
    // Strict: the first unsupported directive is an error.
    CHECK(replay<qlimits::fixed_limit<>>(rec.sink().text, &bad, true).find(
              "error: directive not supported by this policy") != std::string::npos);
    CHECK(bad == 1);
}

TEST_CASE("recording of a nanosecond policy states its tick and replays exactly") {
    using fixed_ns = qlimits::fixed_limit<qlimits::manual_clock<std::chrono::nanoseconds>>;
    qt::recording<dql_ns> rec({.hold_time = std::chrono::microseconds{50}}, {});
    drive(rec, {});
    REQUIRE(rec.sink().text.rfind("tick_ns 1\ninit 50000\n", 0) == 0);
    qt::limit_replayer<dql_ns> r;
    std::size_t bad = 0;
    CHECK(replay<dql_ns>(rec.sink().text, &bad).find("error") == std::string::npos);
    CHECK(bad == 0);
    const char* why = nullptr;
    REQUIRE(qt::replay_limit_trace(r, rec.sink().text, [](std::string_view) {}, false, &why,
                                   [](std::size_t, const char*) {}) == 0);
    CHECK(r.policy().limit() == rec.limit());
    CHECK(replay<fixed_ns>(rec.sink().text, &bad).find("error") == std::string::npos);
}

TEST_CASE("a locked sink records both sides of a live tx_gate; the replay ends in the same state") {
    struct queue_state {
        std::atomic<bool> off{false};
        bool stopped() const noexcept { return off.load(); }
        void stop() noexcept { off.store(true); }
        void wake() noexcept { off.store(false); }
    };
    using clock = qlimits::steady_clock_source;
    using rec_t = qt::recording<qlimits::dql<clock>, qt::locked_string_sink>;
    queue_state q;
    qlimits::tx_gate<rec_t, queue_state> gate({.hold_time = std::chrono::microseconds{200}},
                                              clock::now());
    std::atomic<std::uint64_t> sent{0};
    std::atomic<bool> done{false};
    std::thread producer([&] {
        for (int i = 0; i < 20000; ++i) {
            while (q.stopped()) std::this_thread::yield();
            (void)gate.sent(q, 100, clock::now());
            sent.fetch_add(100);
        }
        done.store(true);
    });
    std::uint64_t completed = 0;
    while (!done.load() || completed < sent.load()) {
        const std::uint64_t in_flight = sent.load() - completed;
        if (in_flight == 0) continue;
        const auto n = static_cast<std::uint32_t>(in_flight > 700 ? 700 : in_flight);
        gate.completed(q, n, clock::now());
        completed += n;
    }
    producer.join();
    const std::string text = gate.policy().sink().text();
    qt::limit_replayer<qt::checked<qlimits::dql<clock>>> r;
    const char* why = nullptr;
    REQUIRE(qt::replay_limit_trace(r, text, [](std::string_view) {}, false, &why,
                                   [](std::size_t, const char*) {}) == 0);
    CHECK(r.policy().ok());
    CHECK(r.policy().inflight() == 0);
    CHECK(r.policy().limit() == gate.policy().limit());
    CHECK(r.policy().inner().state().num_queued == gate.policy().inner().state().num_queued);
}

TEST_CASE("a recording with a locked sink is built in place in a channel, as the README shows") {
    // Review 2026-12-03: locked_string_sink held a mutex and could not be moved, so the
    // in_place form "(a recording<> with your sink)" did not compile with the sink the README
    // recommends for two threads.
    using rec_t = qt::recording<qlimits::dql<>, qt::locked_string_sink>;
    using ring_t = rings::spsc_ring<std::uint64_t, 64>;
    ring_t ring;
    qlimits::channel<ring_t, rec_t> ch(ring, std::in_place, qt::locked_string_sink{},
                                       rec_t::config_type{}, qlimits::jiffy_clock::now());
    CHECK(ch.try_send(std::uint64_t{7}) == qlimits::send_status::ok);
    std::uint64_t v = 0;
    CHECK(ch.try_receive(v));
    CHECK(v == 7);
    const std::string text = ch.policy().sink().text();
    CHECK(text.find("init 1000\n") != std::string::npos);
    CHECK(text.find("q 1\n") != std::string::npos);
}

namespace {
void marker_handler(const qlimits::contract_violation&) noexcept {}
} // namespace

TEST_CASE("fuzz entry point: library policies keep every invariant on random bytes") {
    const auto before = qlimits::set_contract_handler(&marker_handler);
    std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
    std::vector<std::uint8_t> bytes(4096);
    for (int round = 0; round < 200; ++round) {
        for (auto& b : bytes) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            b = static_cast<std::uint8_t>(seed >> 56);
        }
        const auto d = qt::check_limit_policy_bytes<dql_ns>(bytes.data(), bytes.size());
        CHECK(d.failure == nullptr);
        CHECK(d.steps > 0);
        CHECK(qt::check_limit_policy_bytes<qlimits::fixed_limit<>>(bytes.data(), bytes.size(),
                                                                  {.limit = 3000})
                  .failure == nullptr);
        CHECK(qt::check_limit_policy_bytes<qlimits::unlimited<>>(bytes.data(), bytes.size())
                  .failure == nullptr);
    }
    // Each call installed a returning handler for its duration and restored ours after it.
    const bool restored = qlimits::set_contract_handler(before) == &marker_handler;
    CHECK(restored);
}

namespace {
// A broken policy: it applies a completion of more than is in flight.
struct lenient_fixed : qlimits::fixed_limit<> {
    using qlimits::fixed_limit<>::fixed_limit;
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        if (n > inflight()) n = inflight(); // completes what it can and says ok
        (void)qlimits::fixed_limit<>::on_completed(n, now);
        return true;
    }
};
} // namespace

TEST_CASE("fuzz entry point: finds a policy that accepts an over-completion") {
    const std::uint8_t input[] = {0, 100, 0, 0, 0, /* q 100 */ 4, 0, 0, 0, 0 /* c 101 */};
    const auto r = qt::check_limit_policy_bytes<lenient_fixed>(input, sizeof input);
    REQUIRE(r.failure != nullptr);
    CHECK(std::string(r.failure) == "a completion of more than is in flight was applied");
    CHECK(r.call == 2);
}

namespace {
// A broken policy: its cheaper producer-side look admits one unit past the limit.
struct eager_fixed : qlimits::fixed_limit<> {
    using qlimits::fixed_limit<>::fixed_limit;
    [[nodiscard]] bool may_post() noexcept { return available() >= -1; }
};
} // namespace

TEST_CASE("fuzz entry point: drives may_post() and finds one that disagrees with available()") {
    // Limit 64; 64 units in flight with time (op 0), then 1 more: available() is -1. An
    // admitting enqueue with the high bit (op 0x87) asks may_post(), which says yes.
    const std::uint8_t input[] = {0, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0x87, 0, 0, 0, 0};
    const auto r = qt::check_limit_policy_bytes<eager_fixed>(input, sizeof input, {.limit = 64});
    REQUIRE(r.failure != nullptr);
    CHECK(std::string(r.failure) == "may_post() differs from available() >= 0");
    CHECK(r.call == 3);
    // fixed_limit's own may_post() passes the same bytes, and refuses there.
    qt::checked<qlimits::fixed_limit<>> p({.limit = 64}, {});
    CHECK(qt::check_limit_policy_bytes<qlimits::fixed_limit<>>(input, sizeof input, {.limit = 64})
              .failure == nullptr);
    REQUIRE(p.on_queued(65));
    CHECK_FALSE(p.may_post());
    REQUIRE(p.on_completed(1, {}));
    CHECK(p.may_post());
    CHECK(p.ok());
}

namespace {
// unlimited, remembering the most units it ever had in flight.
struct peak_watching_unlimited : qlimits::unlimited<> {
    using base = qlimits::unlimited<>;
    using base::base;
    static inline std::uint32_t peak = 0;
    bool on_queued(std::uint32_t n) noexcept { return note(base::on_queued(n)); }
    bool on_queued(std::uint32_t n, time_point t) noexcept { return note(base::on_queued(n, t)); }
    bool note(bool ok) noexcept {
        if (inflight() > peak) peak = inflight();
        return ok;
    }
};
} // namespace

TEST_CASE("fuzz entry point: never puts 2^31 units in flight (enqueues that would are skipped)") {
    // Kills the mutant fuzz-books. Twenty enqueues of max_object units (2^28 - 1) each, then
    // "complete all": the ninth would pass 2^31 in flight, where a policy's signed 32-bit
    // comparisons no longer hold (and past 2^32 no policy can keep its books), so the driver
    // must skip it and the rest, as its file comment promises.
    std::vector<std::uint8_t> input;
    for (int k = 0; k < 20; ++k)
        input.insert(input.end(), {1, 0xFF, 0xFF, 0xFF, 0x8F}); // op 1, any size: 0x0FFFFFFF
    input.insert(input.end(), {3, 0, 0, 0, 0});                 // complete all in flight
    peak_watching_unlimited::peak = 0;
    const auto r =
        qt::check_limit_policy_bytes<peak_watching_unlimited>(input.data(), input.size());
    CHECK(r.failure == nullptr);
    CHECK(r.steps == 21);
    CHECK(peak_watching_unlimited::peak == 8U * 0x0FFFFFFFU); // eight fit below 2^31
}

TEST_CASE("fuzz entry point: a broken invariant prints the rule and traps") {
    // Kills the mutant fuzz-report: libFuzzer sees a finding only as a crash.
    const std::uint8_t input[] = {0, 100, 0, 0, 0, /* q 100 */ 4, 0, 0, 0, 0 /* c 101 */};
    const auto end = test_support::run_in_child(
        [&] { (void)qt::fuzz_limit_policy<lenient_fixed>(input, sizeof input); });
    CHECK(end.signaled); // SIGILL or SIGTRAP, depending on the compiler's trap
    CHECK(end.stderr_text.find("qlimits fuzz: invariant broken at call 2: a completion of more "
                               "than is in flight was applied") != std::string::npos);
}

TEST_CASE("rapidcheck generators: valid traces replay through every policy, checked") {
    // How many traces took dql's completion counter across 2^32 (trace_shape::origins).
    static int wrapped = 0;
    wrapped = 0;
    const auto ok = rc::check("generated traces are valid for dql, fixed and unlimited", [] {
        const auto trace = *qt::gen::limit_trace();
        qt::limit_replayer<qt::checked<dql_ms>> d;
        qt::limit_replayer<qt::checked<qlimits::fixed_limit<>>> f;
        qt::limit_replayer<qt::checked<qlimits::unlimited<>>> u;
        for (const auto& step : trace) {
            RC_ASSERT(d.apply(step).error == nullptr);
            RC_ASSERT(f.apply(step).error == nullptr);
            RC_ASSERT(u.apply(step).error == nullptr);
        }
        RC_ASSERT(d.policy().ok());
        RC_ASSERT(f.policy().ok());
        RC_ASSERT(u.policy().ok());
        const auto restarts = [](const qt::limit_directive& x) {
            return x.op == qt::limit_op::reset || x.op == qt::limit_op::init;
        };
        if (!trace.empty() && trace.front().op == qt::limit_op::origin &&
            std::none_of(trace.begin(), trace.end(), restarts) &&
            d.policy().inner().state().num_completed < trace.front().value)
            ++wrapped;
        // The text form parses back to the same directives.
        const std::string text = qt::gen::to_text(trace);
        std::size_t bad = 0;
        RC_ASSERT(replay<dql_ms>(text, &bad).find("error") == std::string::npos);
    });
    CHECK(ok);
    // Review 2026-12-03: without an origin near 2^32 the generated traces never wrapped.
    CHECK(wrapped > 0);
    CHECK(rc::check("generated configs are valid", [] {
        RC_ASSERT((*qt::gen::dql_config<std::chrono::milliseconds>()).valid());
        RC_ASSERT((*qt::gen::fixed_config()).valid());
    }));
}

TEST_CASE("rapidcheck generators: traces shaped for a finer clock replay through dql on it") {
    // Review 2026-12-04: `stall a % 300` (trace ticks, 1 ms) is above 65535 ticks of a
    // microsecond or nanosecond dql, which refuses it; the shape's policy_tick_ns bounds it.
    using dql_us = qlimits::dql<qlimits::manual_clock<std::chrono::microseconds>>;
    static int stalls = 0;
    stalls = 0;
    CHECK(rc::check("traces for 1 us and 1 ns ticks are valid for dql on such clocks", [] {
        const auto us = *qt::gen::limit_trace({.policy_tick_ns = 1000});
        const auto ns = *qt::gen::limit_trace({.policy_tick_ns = 1});
        qt::limit_replayer<qt::checked<dql_us>> a;
        qt::limit_replayer<qt::checked<dql_ns>> b;
        for (const auto& step : us) {
            if (const char* why = a.apply(step).error) RC_FAIL(why);
            if (step.op == qt::limit_op::stall && step.value != 0) ++stalls;
        }
        for (const auto& step : ns)
            if (const char* why = b.apply(step).error) RC_FAIL(why);
        RC_ASSERT(a.policy().ok());
        RC_ASSERT(b.policy().ok());
    }));
    CHECK(stalls > 0); // the microsecond traces still set thresholds other than off
    // The default shape (1 ms ticks) is what it was: thresholds up to 299.
    std::vector<qt::gen::detail::raw_step> steps{{10, 299, 2}};
    const auto trace = qt::gen::detail::realize(steps, qt::gen::trace_shape{.origins = false});
    REQUIRE(trace.size() == 1);
    CHECK(trace[0].op == qt::limit_op::stall);
    CHECK(trace[0].value == 299);
    CHECK(qt::gen::detail::realize(steps, {.origins = false, .policy_tick_ns = 1})[0].value == 0);
}

TEST_CASE("rapidcheck generators: enqueues stay within a max_units below the packet sizes") {
    // Review 2026-12-06: every test used max_units of 65536 or more, so the clamp of the
    // fixed packet sizes (up to 65536) to a smaller max_units was never seen.
    const std::vector<qt::gen::detail::raw_step> steps{
        {0, 5, 1},    // a packet size: sizes[5] = 65536
        {0, 2, 1},    // sizes[2] = 1500
        {0, 1000, 0}, // any size allowed: 1000 % (100 + 1) = 91
    };
    const auto trace = qt::gen::detail::realize(steps, {.max_units = 100, .origins = false});
    REQUIRE(trace.size() == 3);
    for (const auto& d : trace)
        CHECK(d.op == qt::limit_op::queue);
    CHECK(trace[0].value == 100);
    CHECK(trace[1].value == 100);
    CHECK(trace[2].value == 91);
}

namespace {
// A user's sink with state of its own: it appends to a string the test owns, under the test's
// mutex (so it is lockable, and safe with two threads).
struct external_sink {
    std::string* text;
    std::mutex* m;
    void operator()(std::string_view s) { text->append(s); }
    void lock() { m->lock(); }
    void unlock() { m->unlock(); }
};
} // namespace

TEST_CASE("adapters take a pre-built policy: a recording with the user's own sink") {
    struct queue_state {
        bool off = false;
        bool stopped() const noexcept { return off; }
        void stop() noexcept { off = true; }
        void wake() noexcept { off = false; }
    };
    using clock = qlimits::manual_clock<std::chrono::milliseconds>;
    std::string text;
    std::mutex m;
    queue_state q;
    qlimits::tx_gate<qt::recording<qlimits::dql<clock>, external_sink>, queue_state> gate(
        std::in_place, external_sink{&text, &m}, qlimits::dql_config<std::chrono::milliseconds>{},
        clock::time_point{});
    for (int i = 0; i < 10; ++i) (void)gate.sent(q, 1500);
    gate.completed(q, 15000, clock::time_point{std::chrono::milliseconds{2}});
    CHECK(text.find("q 1500\n") != std::string::npos);
    CHECK(text.find("t 2\nc 15000\n") != std::string::npos);
    qt::limit_replayer<qt::checked<qlimits::dql<clock>>> r;
    REQUIRE(qt::replay_limit_trace(r, text, [](std::string_view) {}, false, nullptr,
                                   [](std::size_t, const char*) {}) == 0);
    CHECK(r.policy().limit() == gate.policy().limit());

    // channel: two threads through a recorded fixed_limit whose sink is the user's.
    using ring_t = rings::spsc_ring<std::uint64_t, 64>;
    using fixed_ns = qlimits::fixed_limit<qlimits::steady_clock_source>;
    std::string ch_text;
    ring_t ring;
    qlimits::channel<ring_t, qt::recording<fixed_ns, external_sink>> ch(
        ring, std::in_place, external_sink{&ch_text, &m}, qlimits::fixed_limit_config{.limit = 8},
        qlimits::steady_clock_source::now());
    constexpr std::uint64_t n = 20000;
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n; ++i) (void)ch.send(std::uint64_t{i});
        ch.close();
    });
    std::uint64_t got = 0, item = 0;
    while (ch.receive(item)) CHECK(item == got++);
    producer.join();
    CHECK(got == n);
    std::lock_guard<std::mutex> g(m);
    qt::limit_replayer<qt::checked<fixed_ns>> rf;
    REQUIRE(qt::replay_limit_trace(rf, ch_text, [](std::string_view) {}, false, nullptr,
                                   [](std::size_t, const char*) {}) == 0);
    CHECK(rf.policy().ok());
    CHECK(rf.policy().inflight() == ch.policy().inflight());
}

TEST_CASE("checked<> and capturing<> forward a timed wake call; a trace recording does not") {
    using sw_ns = qlimits::software_limit<qlimits::manual_clock<std::chrono::nanoseconds>>;
    static_assert(qlimits::accepts_wake_call<qt::checked<sw_ns>>);
    static_assert(qlimits::accepts_wake_call<qlimits::capturing<sw_ns>>);
    static_assert(!qlimits::accepts_wake_call<qt::checked<dql_ms>>);
    static_assert(!qlimits::accepts_wake_call<qlimits::capturing<dql_ms>>);
    // The trace format has no line for a wake call: a recorded policy runs as it would untold,
    // so that its replay makes the same decisions.
    static_assert(!qlimits::accepts_wake_call<qt::recording<sw_ns>>);
    qt::checked<sw_ns> c({}, sw_ns::time_point{});
    for (int i = 0; i < 64; ++i) c.on_wake_call(std::chrono::microseconds{40});
    CHECK(c.ok());
    CHECK(c.stats().wake_cost_ns > 35'000); // reached the policy: the cost in force follows
}

TEST_CASE("checked<> and capturing<> forward a timed consumer sleep; a trace recording does not") {
    using sw_ns = qlimits::software_limit<qlimits::manual_clock<std::chrono::nanoseconds>>;
    static_assert(qlimits::accepts_consumer_idle<sw_ns>);
    static_assert(qlimits::accepts_consumer_idle<qt::checked<sw_ns>>);
    static_assert(qlimits::accepts_consumer_idle<qlimits::capturing<sw_ns>>);
    static_assert(!qlimits::accepts_consumer_idle<qt::checked<dql_ms>>);
    static_assert(!qlimits::accepts_consumer_idle<qlimits::capturing<dql_ms>>);
    // No trace line for it either: a recorded policy runs as it would untold.
    static_assert(!qlimits::accepts_consumer_idle<qt::recording<sw_ns>>);
    qt::checked<sw_ns> c({}, sw_ns::time_point{});
    REQUIRE(c.on_queued(4, sw_ns::time_point{}));
    c.on_consumer_idle(std::chrono::microseconds{-3});
    c.on_consumer_idle(std::chrono::microseconds{40});
    CHECK(c.on_completed(4, sw_ns::time_point{std::chrono::microseconds{50}}));
    CHECK(c.ok());
    CHECK(c.inflight() == 0);
}

TEST_CASE("checked<software_limit> forwards on_taken: the time read as rarely, the books checked") {
    using sw_ns = qlimits::software_limit<qlimits::manual_clock<std::chrono::nanoseconds>>;
    static_assert(qlimits::accepts_lazy_time<qt::checked<sw_ns>>);
    static_assert(qlimits::accepts_take_parts<qt::checked<sw_ns>>);
    const sw_ns::config_type cfg{.min_limit = 1024, .max_limit = 1024};
    qt::checked<sw_ns> c(cfg, sw_ns::time_point{});
    sw_ns bare(cfg, sw_ns::time_point{});
    std::uint64_t now = 0, reads_checked = 0, reads_bare = 0, takes = 0;
    // A backlog of 16 to 21 (never empty), one take at a time.
    for (int round = 0; round < 5'000; ++round) {
        while (c.inflight() < 16U + static_cast<std::uint32_t>(round % 6)) {
            REQUIRE(c.on_queued(1));
            REQUIRE(bare.on_queued(1));
        }
        now += 50;
        const auto at = sw_ns::time_point{std::chrono::nanoseconds{now}};
        if (round % 3 == 0) { // a take of its own
            REQUIRE(c.on_taken(1, [&]() noexcept { ++reads_checked; return at; }));
            REQUIRE(bare.on_taken(1, [&]() noexcept { ++reads_bare; return at; }));
            ++takes;
        } else { // a part of the previous take (same_take forwarded)
            REQUIRE(c.on_taken(1, [&]() noexcept { ++reads_checked; return at; }, true));
            REQUIRE(bare.on_taken(1, [&]() noexcept { ++reads_bare; return at; }, true));
        }
    }
    CHECK(c.ok());
    CHECK(reads_checked == reads_bare); // the wrapper adds no clock reading
    CHECK(reads_checked * 8 <= takes * 3);
    CHECK(c.limit() == bare.limit());
    CHECK(c.available() == bare.available());
    // An over-completion through on_taken is refused and the books stay right.
    const auto zero = []() noexcept { return sw_ns::time_point{}; };
    while (c.inflight() != 0) REQUIRE(c.on_taken(1, zero));
    REQUIRE(c.on_queued(2));
    {
        test::contract_probe probe;
        CHECK_FALSE(c.on_taken(3, zero));
        CHECK_FALSE(c.on_taken(3, zero, true));
        CHECK(probe.count() == 2);
    }
    CHECK(c.ok());
    CHECK(c.inflight() == 2);
}

TEST_CASE("channel over checked<software_limit<>> uses on_taken and keeps the books") {
    using ring_t = rings::spsc_ring<std::uint64_t, 64>;
    using pol = qt::checked<qlimits::software_limit<>>;
    ring_t ring;
    qlimits::channel<ring_t, pol> ch(ring, pol::config_type{});
    std::uint64_t v = 0, sum = 0, sent = 0;
    for (std::uint64_t i = 1; i <= 10'000; ++i) {
        if (ch.try_send(std::uint64_t{i}) == qlimits::send_status::ok) sent += i;
        while (ch.try_receive(v)) sum += v;
    }
    CHECK(sum == sent);
    CHECK(ch.policy().ok());
    CHECK(ch.policy().inflight() == 0);
}

TEST_CASE("checked<> and recording<> pass wants_post_time() on: the stall detector in a channel") {
    using clock = qlimits::manual_clock<std::chrono::milliseconds>;
    using namespace std::chrono_literals;
    static_assert(qlimits::asks_post_time<qt::checked<dql_ms>>);
    static_assert(qlimits::asks_post_time<qt::recording<dql_ms>>);
    static_assert(!qlimits::asks_post_time<qt::checked<qlimits::fixed_limit<clock>>>);
    using ring_t = rings::spsc_ring<int, 8>;
    clock::set(clock::time_point{0ms});
    ring_t r1, r2;
    qlimits::channel<ring_t, qt::checked<dql_ms>> checked_ch(r1, {.stall_threshold = 10ms});
    qlimits::channel<ring_t, qt::recording<dql_ms>> recorded_ch(
        r2, {.stall_threshold = 10ms});
    int out = 0;
    clock::advance(1ms);
    REQUIRE(checked_ch.try_send(1) == qlimits::send_status::ok);
    REQUIRE(recorded_ch.try_send(1) == qlimits::send_status::ok);
    clock::advance(30ms);
    REQUIRE(checked_ch.try_receive(out));
    REQUIRE(recorded_ch.try_receive(out));
    CHECK(checked_ch.policy().ok());
    CHECK(checked_ch.stats().policy.stall_count == 1);
    CHECK(recorded_ch.stats().policy.stall_count == 1);
    // The trace has the post's time, so its replay finds the same stall.
    qt::limit_replayer<dql_ms> rep;
    const char* why = nullptr;
    REQUIRE(qt::replay_limit_trace(
                rep, recorded_ch.policy().sink().text, [](std::string_view) {}, false, &why,
                [](std::size_t, const char*) {}) == 0);
    CHECK(rep.policy().stats().stall_count == 1);
}

TEST_CASE("recording: dql's stall detector replays alike from any start tick") {
    // dql keeps its post history in words of 64 absolute ticks; a recording started at tick 1
    // and replayed from 0 saw another stall (live stall_max 20, replayed 274). The recording
    // now writes its start as `t T0`, so trace time is the policy's own.
    using ms = qlimits::manual_clock<std::chrono::milliseconds>;
    using tp = ms::time_point;
    using namespace std::chrono_literals;
    for (const std::int64_t start : {1, 37, 63, 64, 1000}) {
        CAPTURE(start);
        qt::recording<qlimits::dql<ms>> rec({.stall_threshold = 30ms}, tp{std::chrono::milliseconds{start}});
        rec.on_queued(10, tp{std::chrono::milliseconds{start + 1}});
        rec.on_queued(10, tp{std::chrono::milliseconds{start + 255}});
        rec.on_completed(5, tp{std::chrono::milliseconds{start + 275}});
        rec.on_queued(10, tp{std::chrono::milliseconds{start + 400}});
        rec.on_completed(15, tp{std::chrono::milliseconds{start + 460}});
        qt::limit_replayer<qlimits::dql<ms>> r;
        const char* why = nullptr;
        REQUIRE(qt::replay_limit_trace(r, rec.sink().text, [](std::string_view) {}, true, &why,
                                       [](std::size_t, const char*) {}) == 0);
        CHECK(r.policy().stats().stall_max == rec.stats().stall_max);
        CHECK(r.policy().stats().stall_count == rec.stats().stall_count);
        CHECK(r.policy().state().limit == rec.inner().state().limit);
    }
}

TEST_CASE("recording: a nanosecond dql's hold time of 2^32 ticks or more reads back") {
    using clk = qlimits::manual_clock<std::chrono::nanoseconds>;
    qt::recording<qlimits::dql<clk>> rec({.hold_time = std::chrono::seconds{5}}, {});
    rec.on_queued(100, clk::time_point{});
    REQUIRE(rec.sink().text.find("init 5000000000\n") != std::string::npos);
    std::size_t bad = 0;
    CHECK(replay<qlimits::dql<clk>>(rec.sink().text, &bad).find("error") == std::string::npos);
    CHECK(bad == 0);
    CHECK(qt::parse_limit_line("hold 18446744073709551615").what == qt::limit_line::kind::directive);
    // A tick length after a duration was converted with the old one is refused.
    qt::limit_replayer<dql_ns> r;
    CHECK(r.apply({qt::limit_op::hold, 5}).error == nullptr);
    CHECK(std::string(r.apply({qt::limit_op::tick_ns, 1000}).error) ==
          "tick_ns after the first q, c, t, init, hold or stall");
}

TEST_CASE("recording: a refused completion is a comment, and the trace replays") {
    test::contract_probe probe;
    using ms = qlimits::manual_clock<std::chrono::milliseconds>;
    qt::recording<qlimits::dql<ms>> rec({}, {});
    rec.on_queued(10, {});
    CHECK_FALSE(rec.on_completed(11, {})); // more than is in flight: refused, nothing changes
    CHECK(rec.on_completed(10, {}));
    CHECK(rec.sink().text.find("# refused: c 11\n") != std::string::npos);
    std::size_t bad = 0;
    const std::string out = replay<qlimits::dql<ms>>(rec.sink().text, &bad);
    CHECK(bad == 0);
    CHECK(out.find("error") == std::string::npos);
    CHECK(probe.count() == 1);
}

namespace {
// A policy that refuses an over-completion as the contract says, but raises its limit first:
// a refused call that changes what the caller sees.
struct leaky_limit : qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>> {
    using base = qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>>;
    using base::base;
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        if (n > inflight()) {
            set_limit(limit() + 1);
            return false;
        }
        return base::on_completed(n, now);
    }
};
} // namespace

TEST_CASE("checked<>: a refused call that changes the limit is reported") {
    qt::checked<leaky_limit> c({.limit = 10}, {});
    CHECK(c.on_queued(5));
    CHECK(c.ok());
    CHECK_FALSE(c.on_completed(6, {}));
    CHECK_FALSE(c.ok());
    CHECK(std::string(c.failure()) == "a refused call changed the limit, available() or inflight()");
    CHECK(c.failed_at_call() == 2);
    // The bare fixed_limit refuses the same call without a change: no failure.
    test::contract_probe probe;
    qt::checked<leaky_limit::base> fine({.limit = 10}, {});
    CHECK(fine.on_queued(5));
    CHECK_FALSE(fine.on_completed(6, {}));
    CHECK(fine.ok());
}

TEST_CASE("gen::limit_trace keeps what it puts in flight below 2^31 units") {
    // Enqueues of up to dql's max_object (2^28 - 1): before, twenty of them put 5.4e9 units
    // "in flight" and the completion of them all was written as `c 5368709100`, above 2^32, an
    // over-completion for every policy.
    std::vector<qt::gen::detail::raw_step> steps;
    for (int i = 0; i < 20; ++i) steps.emplace_back(0, 0xFFFFFFFFU, 0); // b % 4 == 0: any size
    steps.emplace_back(4, 0, 0);                                          // complete everything
    const auto trace = qt::gen::detail::realize(steps, {.max_units = qlimits::dql_max_object});
    std::uint64_t inflight = 0;
    for (const auto& d : trace) {
        if (d.op == qt::limit_op::queue) inflight += d.value;
        if (d.op == qt::limit_op::complete) {
            REQUIRE(d.value <= inflight);
            inflight -= d.value;
        }
        CHECK(inflight < (std::uint64_t{1} << 31));
    }
    std::size_t bad = 0;
    CHECK(replay<qlimits::fixed_limit<>>(qt::gen::to_text(trace), &bad).find("error") ==
          std::string::npos);
    CHECK(bad == 0);
}

namespace {
// A policy whose takes lose a unit each: on_completed is right, on_taken is not.
struct lossy_takes : qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>> {
    using base = qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>>;
    using base::base;
    template <class Now>
        requires std::is_nothrow_invocable_r_v<time_point, const Now&>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return base::on_completed(n == 0 ? 0 : n - 1, now());
    }
};
static_assert(qlimits::accepts_lazy_time<lossy_takes>);
} // namespace

TEST_CASE("fuzz: check_limit_policy_bytes drives on_taken() where the policy has it") {
    // Before, the fuzzer called only on_completed(), so a broken on_taken() was never seen.
    // The first byte's top bits choose the report: 0x00 on_completed, 0x80 on_taken.
    const std::uint8_t enqueue_then_take[] = {0x80, 100, 0, 0, 0, 0x03, 0, 0, 0, 0};
    const auto taken = qt::check_limit_policy_bytes<lossy_takes>(enqueue_then_take,
                                                                 sizeof enqueue_then_take);
    REQUIRE(taken.failure != nullptr);
    CHECK(std::string(taken.failure) == "inflight() differs from queued - completed (mod 2^32)");
    std::uint8_t completed[sizeof enqueue_then_take];
    std::copy(std::begin(enqueue_then_take), std::end(enqueue_then_take), completed);
    completed[0] = 0x00;
    CHECK(qt::check_limit_policy_bytes<lossy_takes>(completed, sizeof completed).failure ==
          nullptr);
    // software_limit through each report style: no broken rule.
    for (const unsigned first : {0x00U, 0x80U, 0xC0U}) {
        std::vector<std::uint8_t> bytes;
        std::uint32_t x = 2463534242U;
        for (int k = 0; k < 4000; ++k) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            bytes.push_back(static_cast<std::uint8_t>(x));
        }
        bytes[0] = static_cast<std::uint8_t>((bytes[0] & 0x3FU) | first);
        CAPTURE(first);
        CHECK(qt::check_limit_policy_bytes<
                  qlimits::software_limit<qlimits::manual_clock<std::chrono::nanoseconds>>>(
                  bytes.data(), bytes.size())
                  .failure == nullptr);
    }
}

TEST_CASE("test aids: the trace generator takes any step bound, up to 2^64 - 1") {
    // Review 2026-12-05: a bound of 2^64 - 1 made its + 1 wrap to 0 (SIGFPE), and no step could
    // exceed 2^32 - 1 whatever the bound said.
    using qt::gen::detail::raw_step;
    const std::vector<raw_step> steps{raw_step{7, 5, 1}, raw_step{8, 0xffffffffU, 0xffffffffU}};
    qt::gen::trace_shape shape;
    shape.origins = false;
    shape.max_step_ticks = ~std::uint64_t{0};
    const auto any = qt::gen::detail::realize(steps, shape);
    REQUIRE(any.size() == 2);
    CHECK(any[0].value == (std::uint64_t{1} << 32) + 5);
    CHECK(any[1].value == ~std::uint64_t{0});
    shape.max_step_ticks = std::uint64_t{1} << 40;
    for (const auto& d : qt::gen::detail::realize(steps, shape))
        CHECK(d.value <= shape.max_step_ticks);
    shape.max_step_ticks = 1001; // the default: the map of every existing seed is unchanged
    CHECK(qt::gen::detail::realize(steps, shape)[0].value == 5);
}

TEST_CASE("test aids: a replay through capturing<dql> starts from dql's all-zero state") {
    // Review 2026-12-05: capturing<> had no zeroed_state constructor, so the replayer built it
    // with dql's default config while printing dql's state lines (another limit from line 1).
    const auto lines = [](auto tag) {
        using P = typename decltype(tag)::type;
        std::string out;
        const char* why = nullptr;
        CHECK(qt::replay_limit_trace<P>("q 1500\nt 5\nc 1500\n",
                                        [&out](std::string_view s) { out.append(s); }, true,
                                        &why) == 0);
        return out;
    };
    const std::string bare = lines(std::type_identity<dql_ms>{});
    CHECK(lines(std::type_identity<qlimits::capturing<dql_ms>>{}) == bare);
    CHECK(lines(std::type_identity<qt::checked<dql_ms>>{}) == bare);
}

namespace {
// unlimited whose take-back skips the policy's check: it applies any amount.
struct loose_unqueue : qlimits::unlimited<qlimits::manual_clock<std::chrono::milliseconds>> {
    using base = qlimits::unlimited<qlimits::manual_clock<std::chrono::milliseconds>>;
    using base::base;
    std::uint32_t taken_back = 0;
    void on_unqueued(std::uint32_t n) noexcept { taken_back += n; }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return base::inflight() - taken_back; }
};
// fixed_limit counting its take-backs.
struct counting_unqueue : qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>> {
    using base = qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>>;
    using base::base;
    int unqueues = 0;
    void on_unqueued(std::uint32_t n) noexcept {
        ++unqueues;
        base::on_unqueued(n);
    }
};
} // namespace

TEST_CASE("checked<> forwards on_unqueued() and known-counted completions, and checks them") {
    // Review 2026-12-05: checked<> forwarded neither, so channel<checked<fixed_limit>> counted
    // after the push while channel<fixed_limit> counts first: the checked run never took the
    // counts-first path, nor saw a take-back of more than is in flight.
    using fixed_ms = qlimits::fixed_limit<qlimits::manual_clock<std::chrono::milliseconds>>;
    static_assert(qlimits::accepts_unqueue<qt::checked<fixed_ms>>);
    static_assert(qlimits::accepts_known_counted<qt::checked<fixed_ms>>);
    static_assert(qlimits::accepts_unqueue<qt::checked<qlimits::unlimited<>>>);
    test::contract_probe probe;
    qt::checked<fixed_ms> p({.limit = 10}, {});
    REQUIRE(p.on_queued(6));
    p.on_unqueued(2);
    CHECK(p.inflight() == 4);
    CHECK(p.on_completed(3, {}, qlimits::known_counted));
    CHECK(p.inflight() == 1);
    p.on_unqueued(2); // one more than in flight: fixed_limit refuses it, as it should
    CHECK(probe.count() == 1);
    CHECK(p.inflight() == 1);
    CHECK(p.ok());
    // A caller that breaks the known-counted promise is caught (the policy trusts it).
    CHECK(p.on_completed(2, {}, qlimits::known_counted));
    CHECK(std::string(p.failure()) == "a known-counted completion of more than is in flight");

    // A policy that applies a take-back of more than is in flight is caught.
    qt::checked<loose_unqueue> l({}, {});
    REQUIRE(l.on_queued(1));
    l.on_unqueued(1);
    CHECK(l.ok());
    l.on_unqueued(1);
    REQUIRE(l.failure() != nullptr);
    CHECK(std::string(l.failure()) == "an on_unqueued() of more than is in flight was applied");
    CHECK(l.failed_at_call() == 3);
}

TEST_CASE("channel<checked<fixed_limit>> counts first and takes back on a full ring, as channel<fixed_limit>") {
    rings::spsc_ring<std::uint64_t, 4> ring;
    qlimits::channel<decltype(ring), qt::checked<counting_unqueue>> ch(ring, {.limit = 100});
    for (std::uint64_t i = 0; i < 4; ++i)
        REQUIRE(ch.try_send(std::uint64_t{i}) == qlimits::send_status::ok);
    CHECK(ch.try_send(std::uint64_t{4}) == qlimits::send_status::ring_full); // counted, taken back
    CHECK(ch.policy().inner().unqueues == 1);
    CHECK(ch.policy().inflight() == 4);
    std::uint64_t v = 0;
    for (int i = 0; i < 4; ++i)
        REQUIRE(ch.try_receive(v));
    CHECK(ch.policy().inflight() == 0);
    CHECK(ch.policy().ok());
}

TEST_CASE("rapidcheck generators: an init does not let the policies that skip it pass 2^31 in flight") {
    // Review 2026-12-05: `init` resets dql alone, but the generator zeroed its one count there;
    // three rounds of seven max_object enqueues with an init between them put ~2^32 units in
    // flight in fixed_limit, unlimited and software_limit, and the final `c` of "all in
    // flight" then stopped their replay as an over-completion.
    qt::gen::trace_shape shape;
    shape.max_units = qlimits::software_max_object;
    shape.origins = false;
    std::vector<qt::gen::detail::raw_step> steps;
    for (int g = 0; g < 3; ++g) {
        for (int i = 0; i < 7; ++i)
            steps.emplace_back(0, qlimits::software_max_object, 0); // q 268435455
        if (g < 2)
            steps.emplace_back(10, 0, 0); // init 0
    }
    steps.emplace_back(4, 0, 0); // c: everything in flight
    const auto trace = qt::gen::detail::realize(steps, shape);
    const std::string text = qt::gen::to_text(trace);
    std::size_t bad = 0;
    (void)replay<qt::checked<dql_ms>>(text, &bad);
    CHECK(bad == 0);
    const auto clean = [&](auto& r) {
        for (const auto& step : trace)
            if (r.apply(step).error != nullptr)
                return false;
        return r.policy().ok();
    };
    qt::limit_replayer<qt::checked<qlimits::fixed_limit<>>> f;
    qt::limit_replayer<qt::checked<qlimits::software_limit<>>> s;
    qt::limit_replayer<qt::checked<peak_watching_unlimited>> u;
    peak_watching_unlimited::peak = 0;
    CHECK(clean(f));
    CHECK(clean(s));
    CHECK(clean(u));
    CHECK(peak_watching_unlimited::peak < (1U << 31));
    CHECK(peak_watching_unlimited::peak >= 7U * qlimits::software_max_object);
}

namespace {
// fixed_limit counting its known-counted completions (static: the fuzz driver owns the policy).
struct tagged_fixed : qlimits::fixed_limit<> {
    using base = qlimits::fixed_limit<>;
    using base::base;
    using base::on_completed;
    static inline int tagged = 0;
    bool on_completed(std::uint32_t n, time_point t, qlimits::known_counted_t k) noexcept {
        ++tagged;
        return base::on_completed(n, t, k);
    }
};
} // namespace

TEST_CASE("fuzz entry point: drives on_unqueued() and known-counted completions where a policy has them") {
    // Review 2026-12-05: the fuzzer drove neither, so a take-back of more than is in flight
    // (which fixed_limit then applied) was never tried.
    const std::uint8_t take_back_too_much[] = {0, 10, 0, 0, 0, /* q 10 */ 0xC4, 0, 0, 0, 0};
    const auto loose = qt::check_limit_policy_bytes<loose_unqueue>(take_back_too_much,
                                                                   sizeof take_back_too_much);
    REQUIRE(loose.failure != nullptr);
    CHECK(std::string(loose.failure) == "an on_unqueued() of more than is in flight was applied");
    CHECK(loose.call == 2);
    CHECK(qt::check_limit_policy_bytes<qlimits::fixed_limit<>>(take_back_too_much,
                                                               sizeof take_back_too_much)
              .failure == nullptr);
    // Style 2 (first byte 0b10......): completions within what is in flight are known-counted.
    const std::uint8_t known[] = {0x80, 10, 0, 0, 0, /* q 10 */ 0x84, 3, 0, 0, 0, /* take back 3 */
                                  3, 0, 0, 0, 0 /* complete all */};
    tagged_fixed::tagged = 0;
    const auto r = qt::check_limit_policy_bytes<tagged_fixed>(known, sizeof known);
    CHECK(r.failure == nullptr);
    CHECK(r.steps == 3);
    CHECK(tagged_fixed::tagged == 1);
}

namespace {
// software_limit counting the calls the fuzz driver promises for it: takes in parts, timed wake
// calls and consumer idle waits (static: the fuzz driver owns the policy).
struct tagged_sw : qlimits::software_limit<> {
    using base = qlimits::software_limit<>;
    using base::base;
    static inline int parts = 0, wake_calls = 0, idles = 0;
    template <class Now>
    bool on_taken(std::uint32_t n, Now&& now) noexcept {
        return base::on_taken(n, now);
    }
    template <class Now>
    bool on_taken(std::uint32_t n, Now&& now, bool same_take) noexcept {
        parts += same_take ? 1 : 0;
        return base::on_taken(n, now, same_take);
    }
    void on_wake_call(duration d) noexcept {
        ++wake_calls;
        base::on_wake_call(d);
    }
    void on_consumer_idle(duration d) noexcept {
        ++idles;
        base::on_consumer_idle(d);
    }
};
} // namespace

TEST_CASE("fuzz entry point: drives takes in parts, wake calls and idle waits where a policy has them") {
    // Review 2026-12-06: the file comment promises all three for software_limit; no test saw
    // them (a driver that never made them passed).
    static_assert(qlimits::accepts_take_parts<tagged_sw> && qlimits::accepts_wake_call<tagged_sw> &&
                  qlimits::accepts_consumer_idle<tagged_sw>);
    // Style 3 (first byte 0b11......): the second report of each pair is a part of the first.
    const std::uint8_t bytes[] = {0xC0, 10, 0, 0, 0, /* q 10 */ 2, 3, 0, 0, 0, /* take 3 */
                                  3,    0,  0, 0, 0, /* the rest, as its part */
                                  0x45, 100, 0, 0, 0, /* a wake call told */
                                  0x25, 100, 0, 0, 0 /* an idle wait told */};
    tagged_sw::parts = tagged_sw::wake_calls = tagged_sw::idles = 0;
    const auto r = qt::check_limit_policy_bytes<tagged_sw>(bytes, sizeof bytes);
    CHECK(r.failure == nullptr);
    CHECK(r.steps == 5);
    CHECK(tagged_sw::parts == 1);
    CHECK(tagged_sw::wake_calls == 1);
    CHECK(tagged_sw::idles == 1);
}

TEST_CASE("rapidcheck generators: without resets, an init never shuts enqueues out for good") {
    // Review 2026-12-05 (of the fix above): with resets off, an init while ~2^31 was held
    // stranded it in the policies that skip init, and every later enqueue was dropped.
    qt::gen::trace_shape shape;
    shape.max_units = qlimits::dql_max_object;
    shape.resets = false;
    shape.origins = false;
    std::vector<qt::gen::detail::raw_step> steps;
    for (int i = 0; i < 8; ++i) steps.emplace_back(0, qlimits::dql_max_object, 0);
    for (int i = 0; i < 7; ++i) steps.emplace_back(0, 0, 1);
    steps.emplace_back(10, 5, 0); // init 5
    for (int i = 0; i < 50; ++i) steps.emplace_back(0, 1, 1);
    const auto trace = qt::gen::detail::realize(steps, shape);
    std::size_t late_queues = 0;
    for (std::size_t i = 16; i < trace.size(); ++i)
        late_queues += trace[i].op == qt::limit_op::queue ? 1U : 0U;
    CHECK(late_queues >= 40);
    qt::limit_replayer<qt::checked<qlimits::fixed_limit<>>> f;
    for (const auto& step : trace) REQUIRE(f.apply(step).error == nullptr);
    CHECK(f.policy().ok());
}
