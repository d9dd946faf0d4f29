// libFuzzer target: the limit-policy trace parser and the dql replay. Any input must end in a
// clean error or a clean replay; after every applied directive the dql's state must satisfy the
// invariants of testing/invariants.hpp. A broken invariant traps (a finding).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/trace.hpp"

namespace {
using dql_ms = qlimits::dql<qlimits::manual_clock<std::chrono::milliseconds>>;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // 1. The whole-trace entry point the lab uses.
    std::size_t bytes = 0;
    const char* why = nullptr;
    const std::size_t bad = qlimits::testing::replay_limit_trace<dql_ms>(
        text, [&bytes](std::string_view s) { bytes += s.size(); }, true, &why);
    if (bad != 0 && why == nullptr) __builtin_trap(); // an error always has a reason

    // 2. Directive by directive, checking the state after each.
    qlimits::testing::limit_replayer<dql_ms> r;
    std::string_view rest = text;
    char line_buf[256];
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
        const auto before = r.policy().state();
        const auto step = r.apply(parsed.directive);
        if (step.error != nullptr) {
            // A refused directive must leave the counters alone.
            const auto after = r.policy().state();
            if (after.num_queued != before.num_queued || after.num_completed != before.num_completed)
                __builtin_trap();
            break;
        }
        const auto s = r.policy().state();
        if (qlimits::testing::check_dql_state(
                s, parsed.directive.op == qlimits::testing::limit_op::complete) != nullptr)
            __builtin_trap();
        if (r.policy().inflight() != s.num_queued - s.num_completed) __builtin_trap();
        if (step.printed && r.state_line(line_buf, sizeof line_buf, true) == 0) __builtin_trap();
    }
    return 0;
}
