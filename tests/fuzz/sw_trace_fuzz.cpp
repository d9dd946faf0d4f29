// libFuzzer target: software_limit driven by arbitrary limit traces (the replay's format, on a
// nanosecond clock so budgets, windows and samples all act), wrapped in testing::checked. Any
// input must end in a clean error or a clean replay; after every applied directive the checked
// invariants hold, the limit stays within [min_limit, max_limit], and available() is the room
// published minus what is queued (never wrapping past the signed 32-bit range while the trace
// obeys it). The same trace also drives an unchecked twin through on_taken() (the time read on
// demand): the same books and a limit within the same bounds. A broken rule traps (a finding).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qlimits/limits/software_limit.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/trace.hpp"

namespace {
using sw_ns = qlimits::software_limit<qlimits::manual_clock<std::chrono::nanoseconds>>;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // 1. The whole-trace entry point `qlimits-lab replay sw` uses.
    const char* why = nullptr;
    const std::size_t bad = qlimits::testing::replay_limit_trace<sw_ns>(
        text, [](std::string_view) {}, false, &why);
    if (bad != 0 && why == nullptr) __builtin_trap(); // an error always has a reason

    // 2. Directive by directive through checked<>, with a small budget so every path runs.
    qlimits::software_limit_config cfg{};
    cfg.sojourn_budget = std::chrono::microseconds{5};
    cfg.window = std::chrono::microseconds{50};
    qlimits::testing::checked<sw_ns> p(cfg, {});
    // The same trace through on_taken() (the time read on demand): the same books, a limit
    // within the same bounds.
    sw_ns lazy(cfg, {});
    std::uint64_t now = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        const auto parsed = qlimits::testing::parse_limit_line(line);
        if (parsed.what == qlimits::testing::limit_line::kind::error) {
            if (parsed.error == nullptr) __builtin_trap();
            break;
        }
        if (parsed.what == qlimits::testing::limit_line::kind::none) continue;
        const auto& d = parsed.directive;
        const auto at = sw_ns::time_point{std::chrono::nanoseconds{static_cast<std::int64_t>(now)}};
        const auto v = static_cast<std::uint32_t>(d.value);
        switch (d.op) {
        case qlimits::testing::limit_op::tick: now += d.value % 1'000'000'000; break;
        case qlimits::testing::limit_op::queue:
            (void)p.on_queued(v);
            (void)lazy.on_queued(v);
            break;
        case qlimits::testing::limit_op::complete:
            if (v > p.inflight()) return 0; // the replay's over-completion: a clean stop
            (void)p.on_completed(v, at);
            if (!lazy.on_taken(v, [at]() noexcept { return at; })) __builtin_trap();
            break;
        case qlimits::testing::limit_op::reset:
            p.reset(at);
            lazy.reset(at);
            break;
        default: break; // dql's configuration directives do not apply
        }
        if (!p.ok()) __builtin_trap();
        if (p.limit() < cfg.min_limit || p.limit() > cfg.max_limit) __builtin_trap();
        if (lazy.limit() < cfg.min_limit || lazy.limit() > cfg.max_limit) __builtin_trap();
        if (lazy.inflight() != p.inflight()) __builtin_trap();
    }
    return 0;
}
