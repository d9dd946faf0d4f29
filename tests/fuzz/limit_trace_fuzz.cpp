// libFuzzer target: the limit-policy trace parser and the dql replay. Any input must end in a
// clean error or a clean replay; after every applied directive the dql's state must satisfy the
// invariants of testing/invariants.hpp, and the peer policies (vegas, gradient2, aimd) replayed
// on the same text keep their limit within bounds and available() == limit - inflight. A
// broken invariant traps (a finding).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/vegas_limit.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/trace.hpp"

namespace {
using dql_ms = qlimits::dql<qlimits::manual_clock<std::chrono::milliseconds>>;
using clock_us = qlimits::manual_clock<std::chrono::microseconds>;

// Replay through a peer (default config) and check its bounds after every applied directive.
template <class Peer>
void replay_peer(std::string_view rest) {
    qlimits::testing::limit_replayer<Peer> r;
    const typename Peer::config_type cfg{};
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        const auto parsed = qlimits::testing::parse_limit_line(line);
        if (parsed.what != qlimits::testing::limit_line::kind::directive) {
            if (parsed.what == qlimits::testing::limit_line::kind::error) return;
            continue;
        }
        if (r.apply(parsed.directive).error != nullptr) return;
        const Peer& p = r.policy();
        if (p.limit() < cfg.min_limit || p.limit() > cfg.max_limit) __builtin_trap();
        if (p.available() != static_cast<std::int32_t>(p.limit() - p.inflight())) __builtin_trap();
    }
}
} // namespace

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

    // 3. The peers on the same text.
    replay_peer<qlimits::vegas_limit<clock_us>>(text);
    replay_peer<qlimits::gradient2_limit<clock_us>>(text);
    replay_peer<qlimits::aimd_limit<clock_us>>(text);
    return 0;
}
