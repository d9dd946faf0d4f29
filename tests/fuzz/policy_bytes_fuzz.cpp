// libFuzzer target: the public entry point testing::fuzz_limit_policy (testing/fuzz.hpp) over
// every limit policy the library has. The first byte picks the policy and its configuration; the rest
// drives it. A broken invariant traps (a finding).
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/software_limit.hpp"
#include "qlimits/limits/vegas_limit.hpp"
#include "qlimits/testing/fuzz.hpp"

namespace {
using ns_clock = qlimits::manual_clock<std::chrono::nanoseconds>;
using ms_clock = qlimits::manual_clock<std::chrono::milliseconds>;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t pick = data[0];
    ++data;
    --size;
    namespace qt = qlimits::testing;
    switch (pick % 8) {
    case 0:
        return qt::fuzz_limit_policy<qlimits::dql<ms_clock>>(
            data, size, {.min_limit = pick, .stall_threshold = std::chrono::milliseconds{pick % 8}});
    case 1:
        return qt::fuzz_limit_policy<qlimits::dql<ns_clock>>(
            data, size, {.hold_time = std::chrono::microseconds{pick}});
    case 2:
        return qt::fuzz_limit_policy<qlimits::fixed_limit<ns_clock>>(data, size,
                                                                     {.limit = 64U * pick});
    case 3:
        return qt::fuzz_limit_policy<qlimits::unlimited<ns_clock>>(data, size);
    case 4: { // a small budget and window so the time-driven paths run
        qlimits::software_limit_config cfg{};
        cfg.sojourn_budget = std::chrono::microseconds{1 + pick % 64};
        cfg.window = std::chrono::microseconds{50};
        cfg.learn_wake_cost = (pick & 64) != 0;
        if ((pick & 128) != 0) cfg.wake_cost = std::chrono::nanoseconds{0}; // learn below 2 us
        return qt::fuzz_limit_policy<qlimits::software_limit<ns_clock>>(data, size, cfg);
    }
    case 5:
        return qt::fuzz_limit_policy<qlimits::vegas_limit<ns_clock>>(data, size);
    case 6:
        return qt::fuzz_limit_policy<qlimits::gradient2_limit<ns_clock>>(data, size);
    default:
        return qt::fuzz_limit_policy<qlimits::aimd_limit<ns_clock>>(data, size);
    }
}
