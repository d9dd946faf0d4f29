// RapidCheck properties of the peer policies (vegas_limit, gradient2_limit, aimd_limit) over
// random configurations and random call sequences, through testing::checked<> as a user's
// property test would drive them.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <tuple>
#include <vector>

#include "../unit/contract_probe.hpp"
#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/vegas_limit.hpp"
#include "qlimits/testing/invariants.hpp"

namespace {
using clock_ns = qlimits::manual_clock<std::chrono::nanoseconds>;
using raw_step = std::tuple<std::uint8_t, std::uint32_t, std::uint32_t>;

// A valid configuration from three random numbers: bounds anywhere in [1, 5000] items, an item
// size of 1 (packets) or up to 9000 (bytes), and the rule's own knobs within their ranges.
template <class Config>
Config random_config(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    Config cfg{};
    cfg.min_limit = 1 + a % 100;
    cfg.max_limit = cfg.min_limit + b % 5000;
    cfg.initial_limit = c % 6000; // may be outside the bounds: clamped
    cfg.units_per_item = c % 3 == 0 ? 1 + (a >> 8) % 9000 : 1;
    if constexpr (requires { cfg.smoothing; })
        cfg.smoothing = 0.05 + 0.95 * (b % 100) / 99.0;
    if constexpr (requires { cfg.backoff_ratio; }) {
        cfg.backoff_ratio = 0.5 + 0.49 * (c % 100) / 99.0;
        cfg.timeout = std::chrono::nanoseconds{1 + (b >> 4) % 100'000};
    }
    if constexpr (requires { cfg.probe_multiplier; })
        cfg.probe_multiplier = 1 + (a >> 4) % 40;
    if constexpr (requires { cfg.growth; }) {
        cfg.growth =
            a % 2 == 0 ? qlimits::queue_growth::constant : qlimits::queue_growth::square_root;
        cfg.tolerance = 0.5 + (c % 20) / 10.0;
        cfg.long_window = 1 + (b >> 3) % 700;
    }
    return cfg;
}

// Drive a checked policy with random enqueues (mostly obeying available()), completions (part,
// all, or sometimes more than is in flight), time steps from 0 to 1 s, direct samples (drops,
// 0 ns, huge) and resets. Returns the first broken rule, or nullptr.
template <class Policy>
const char* run(const std::vector<raw_step>& steps, std::uint32_t a, std::uint32_t b,
                std::uint32_t c) {
    using cfg_t = typename Policy::config_type;
    const cfg_t cfg = random_config<cfg_t>(a, b, c);
    if (!cfg.valid())
        return "random_config made an invalid config";
    qlimits::testing::checked<Policy> q{cfg, {}};
    const std::uint64_t lo = std::uint64_t{cfg.min_limit} * cfg.units_per_item;
    const std::uint64_t hi = std::uint64_t{cfg.max_limit} * cfg.units_per_item;
    clock_ns::time_point now{};
    for (const auto& [kind, x, y] : steps) {
        switch (kind % 12) {
        case 0:
        case 1:
        case 2:
        case 3: // enqueue
            if (q.available() < 0 && y % 8 != 0)
                break;
            q.on_queued(x % 16 == 0 ? x : 1 + x % 9000, now);
            break;
        case 4:
        case 5:
        case 6: { // complete
            const std::uint32_t in = q.inflight();
            q.on_completed(y % 5 == 0 ? in + 1 + x % 3 : (y % 2 == 0 ? in : x % (in + 1U)), now);
            break;
        }
        case 7:
        case 8:
        case 9: { // time passes
            static constexpr std::int64_t dts[] = {0,      1,         100,          1000,
                                                   20'000, 1'000'000, 1'000'000'000};
            now = clock_ns::advanced(now, std::chrono::nanoseconds{dts[x % 7]});
            break;
        }
        case 10: { // a sample measured elsewhere
            static constexpr std::int64_t rtts[] = {0, 1, 1000, 50'000, 6'000'000'000};
            q.inner().on_sample(std::chrono::nanoseconds{rtts[x % 5]}, y % 10'000, y % 7 == 0);
            break;
        }
        default:
            if (x % 16 == 0)
                q.reset(now);
            break;
        }
        if (!q.ok())
            return q.failure();
        if (q.limit() < lo || q.limit() > hi)
            return "limit outside [min, max] * units_per_item";
        const auto expected = static_cast<std::int32_t>(q.limit() - q.inflight());
        if (q.available() != expected)
            return "available() != limit - inflight";
    }
    return nullptr;
}
} // namespace

TEST_CASE_TEMPLATE("peer properties: limit within bounds, checked<> invariants hold", Policy,
                   qlimits::vegas_limit<clock_ns>, qlimits::gradient2_limit<clock_ns>,
                   qlimits::aimd_limit<clock_ns>) {
    test::contract_probe probe; // over-completions are refused through a returning handler
    CHECK(rc::check(
        "random configs and call sequences",
        [](const std::vector<raw_step>& steps, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
            const char* failure = run<Policy>(steps, a, b, c);
            RC_ASSERT(failure == nullptr);
        }));
}

TEST_CASE_TEMPLATE("peer properties: a rule stays within its bounds for any sample", Rule,
                   qlimits::vegas_rule, qlimits::gradient2_rule, qlimits::aimd_rule) {
    CHECK(rc::check("random samples",
                    [](const std::vector<std::tuple<std::uint64_t, std::uint32_t, bool>>& samples,
                       std::uint32_t a, std::uint32_t b, std::uint32_t c) {
                        const auto cfg = random_config<typename Rule::config_type>(a, b, c);
                        RC_PRE(cfg.valid());
                        Rule r(cfg);
                        for (const auto& [rtt, inflight, drop] : samples) {
                            const std::uint32_t l = r.on_sample(
                                std::chrono::nanoseconds{static_cast<std::int64_t>(rtt >> 1)},
                                inflight, drop);
                            RC_ASSERT(l == r.limit());
                            RC_ASSERT(l >= cfg.min_limit);
                            RC_ASSERT(l <= cfg.max_limit);
                        }
                    }));
}
