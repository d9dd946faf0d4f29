// RapidCheck properties of dql over random valid traces, using the public test aids
// (testing/trace.hpp and testing/invariants.hpp) the way a user's property test would.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/trace.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using dql_ms = qlimits::dql<clock_ms>;
using raw_step = std::tuple<std::uint8_t, std::uint32_t, std::uint32_t>;

// Turn raw random numbers into a valid trace: completions never exceed what is in flight, the
// producer mostly obeys available() (sometimes not), and configuration changes, resets, inits,
// stall thresholds and oversized enqueues all appear. Returns the trace text.
// direct (if given): the state line after each q and c, from the policy called directly, in
// the replayer's verbose format (written here independently of it, as the oracle).
std::string realize(const std::vector<raw_step>& steps, const char** failure,
                    std::string* direct = nullptr) {
    qlimits::testing::checked<dql_ms> q{{.hold_time = std::chrono::milliseconds{4}}, {}};
    clock_ms::time_point now{};
    std::string text = "init 4\n";
    q.inner().init(std::chrono::milliseconds{4}, now);
    q.resync();
    const auto line = [&text](const char* op, std::uint64_t v) {
        text += op;
        text += ' ';
        text += std::to_string(v);
        text += '\n';
    };
    const auto snap = [&q, direct] {
        if (direct == nullptr) return;
        const qlimits::dql_state st = q.inner().state();
        for (const std::uint32_t v : {st.limit, st.num_queued, st.num_completed, st.adj_limit,
                                      st.prev_ovlimit, st.lowest_slack})
            *direct += std::to_string(v) + ' ';
        *direct += std::to_string(st.avail()) + ' ' + std::to_string(st.stall_count) + ' ' +
                   std::to_string(st.stall_max) + '\n';
    };
    static constexpr std::uint32_t sizes[] = {0, 1, 64, 1500, 1500, 9000, 65536};
    for (const auto& [kind, a, b] : steps) {
        switch (kind % 16) {
        case 0: case 1: case 2: case 3: case 4: { // enqueue, obeying avail 7 times in 8
            if (q.available() < 0 && b % 8 != 0) break;
            const std::uint32_t n = a % 64 == 0 ? (a >> 6) % (1U << 20) : sizes[a % 7];
            q.on_queued(n, now);
            line("q", n);
            snap();
            break;
        }
        case 5: case 6: case 7: case 8: { // complete part or all of what is in flight
            const std::uint32_t inflight = q.inflight();
            const std::uint32_t n = b % 3 == 0 ? inflight : a % (inflight + 1U);
            q.on_completed(n, now);
            line("c", n);
            snap();
            break;
        }
        case 9: case 10: { // time passes
            static constexpr std::uint64_t dts[] = {0, 1, 1, 2, 3, 5, 250, 1001};
            const std::uint64_t dt = dts[a % 8];
            now = clock_ms::advanced(now, std::chrono::milliseconds{static_cast<std::int64_t>(dt)});
            line("t", dt);
            break;
        }
        case 11: { // bounds; sometimes min > max
            const std::uint32_t v = a % 4 == 0 ? b % qlimits::dql_max_limit : b % 20000;
            if (a % 2 == 0) {
                q.inner().set_min_limit(v);
                line("min", v);
            } else {
                q.inner().set_max_limit(v);
                line("max", v);
            }
            break;
        }
        case 12: {
            const std::uint32_t h = a % 5 == 0 ? 1000 : a % 11;
            q.inner().set_hold_time(std::chrono::milliseconds{h});
            line("hold", h);
            break;
        }
        case 13: {
            const std::uint32_t s = a % 3 == 0 ? 0 : a % 300;
            q.inner().set_stall_threshold(std::chrono::milliseconds{s}, now);
            line("stall", s);
            break;
        }
        case 14:
            if (a % 4 == 0) {
                q.inner().init(std::chrono::milliseconds{a % 9}, now);
                line("init", a % 9);
            } else {
                q.reset(now);
                text += "reset\n";
            }
            q.resync();
            break;
        default: // an enqueue above the maximum object: refused, counted
            q.on_queued(qlimits::dql_max_object + 1 + a % 1000, now);
            line("q", qlimits::dql_max_object + 1 + a % 1000);
            snap();
            break;
        }
    }
    *failure = q.failure();
    return text;
}

struct replay_result {
    std::string out;
    std::size_t bad_line;
};

replay_result replay(const std::string& trace) {
    replay_result r{{}, 0};
    const char* why = nullptr;
    r.bad_line = qlimits::testing::replay_limit_trace<dql_ms>(
        trace, [&r](std::string_view s) { r.out.append(s); }, true, &why);
    return r;
}

std::vector<std::string> field(const std::string& out, std::size_t index) {
    std::vector<std::string> v;
    std::size_t pos = 0;
    while (pos < out.size()) {
        const auto nl = out.find('\n', pos);
        const std::string line = out.substr(pos, nl - pos);
        std::size_t start = 0;
        for (std::size_t k = 0; k < index; ++k) start = line.find(' ', start) + 1;
        v.push_back(line.substr(start, line.find(' ', start) - start));
        pos = nl + 1;
    }
    return v;
}
// A policy that forgets to refuse over-completion (for the checker's own test).
struct leaky {
    using config_type = qlimits::dql_config<std::chrono::milliseconds>;
    using time_point = clock_ms::time_point;
    using stats_type = std::uint32_t;
    static constexpr std::uint32_t max_object = qlimits::dql_max_object;
    std::uint32_t q = 0, c = 0;
    leaky(const config_type&, time_point) noexcept {}
    bool on_queued(std::uint32_t n) noexcept { return q += n, true; }
    bool on_queued(std::uint32_t n, time_point) noexcept { return on_queued(n); }
    bool on_completed(std::uint32_t n, time_point) noexcept { return c += n, true; }
    void reset(time_point) noexcept { q = c = 0; }
    [[nodiscard]] std::int64_t available() const noexcept { return 1; }
    [[nodiscard]] std::uint32_t limit() const noexcept { return 1; }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return q - c; }
    [[nodiscard]] stats_type stats() const noexcept { return 0; }
};
} // namespace

TEST_CASE("dql properties: invariants hold over random valid traces") {
    CHECK(rc::check("limit in [min,max] after completions; avail and inflight consistent",
                    [](const std::vector<raw_step>& steps) {
                        const char* failure = nullptr;
                        realize(steps, &failure);
                        RC_ASSERT(failure == nullptr);
                    }));
}

TEST_CASE("dql properties: replay is deterministic and agrees with direct calls") {
    CHECK(rc::check("replaying the same trace twice gives the same lines",
                    [](const std::vector<raw_step>& steps) {
                        const char* failure = nullptr;
                        const std::string trace = realize(steps, &failure);
                        const auto a = replay(trace);
                        const auto b = replay(trace);
                        RC_ASSERT(a.bad_line == 0U);
                        RC_ASSERT(a.out == b.out);
                    }));
}

TEST_CASE("dql properties: replaying a trace gives the states the direct calls gave") {
    // Review 2026-12-03: the test above compares the replay only with itself; a replayer that
    // reset dql at time 0 instead of the trace's time passed it and the whole suite.
    CHECK(rc::check("replay's verbose state lines equal the direct calls' states",
                    [](const std::vector<raw_step>& steps) {
                        const char* failure = nullptr;
                        std::string direct;
                        const std::string trace = realize(steps, &failure, &direct);
                        const auto r = replay(trace);
                        RC_ASSERT(r.bad_line == 0U);
                        RC_ASSERT(r.out == direct);
                    }));
}

TEST_CASE("dql properties: origin V gives the same limits as origin 0") {
    CHECK(rc::check("counters translated by V leave every limit unchanged",
                    [](const std::vector<raw_step>& steps, std::uint32_t drawn) {
                        const char* failure = nullptr;
                        const std::string trace = realize(steps, &failure);
                        // Half the cases start just below 2^32, so the counters wrap inside
                        // the trace: RapidCheck's uint32 values are small at small sizes and
                        // almost never came near it (0 of 300 runs wrapped; review 2026-12-03).
                        const std::uint32_t origin =
                            drawn % 2 == 0 ? drawn : 0U - (drawn >> 1) % 300'000U;
                        // init resets the counters, so the origin goes right after it.
                        const std::string shifted =
                            "init 4\norigin " + std::to_string(origin) + "\n" + trace.substr(7);
                        const auto a = replay(trace);
                        const auto b = replay(shifted);
                        RC_ASSERT(b.bad_line == 0U);
                        RC_ASSERT(field(a.out, 0) == field(b.out, 0)); // limit
                        RC_ASSERT(field(a.out, 4) == field(b.out, 4)); // prev_ovlimit
                        RC_ASSERT(field(a.out, 5) == field(b.out, 5)); // lowest_slack
                        RC_ASSERT(field(a.out, 7) == field(b.out, 7)); // stall_cnt
                    }));
}

TEST_CASE("dql properties: the checker catches a broken policy") {
    // A policy that forgets to refuse over-completion must be reported, so the checks above
    // are not vacuous.
    static_assert(qlimits::limit_policy<leaky>);
    qlimits::testing::checked<leaky> p{{}, {}};
    p.on_queued(5);
    p.on_completed(6, {});
    CHECK_FALSE(p.ok());
    CHECK(p.failed_at_call() == 2);
    CHECK(std::string(p.failure()) == "a completion of more than is in flight was applied");
}
