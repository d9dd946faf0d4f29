// libFuzzer target: the DIM trace parser and the net_dim / rdma_dim replay. Any input must end
// in a clean error (with a reason) or a clean replay; after every applied directive the tuner's
// state must be sane (index in range, tiredness bounded, RDMA never parked, output well formed).
// A broken invariant traps (a finding).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qlimits/testing/dim_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // 1. The whole-trace entry point the lab uses.
    std::size_t bytes = 0;
    const char* why = nullptr;
    const std::size_t bad = qlimits::testing::replay_dim_trace(
        text, [&bytes](std::string_view s) { bytes += s.size(); }, &why);
    if (bad != 0 && why == nullptr) __builtin_trap();

    // 2. Directive by directive, checking the state after each.
    qlimits::testing::dim_replayer r;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        const auto parsed = qlimits::testing::parse_dim_line(line);
        if (parsed.what == qlimits::testing::dim_line::kind::error) {
            if (parsed.error == nullptr) __builtin_trap();
            break;
        }
        if (parsed.what == qlimits::testing::dim_line::kind::none) continue;
        if (r.apply(parsed.directive) != nullptr) {
            if (!r.output().empty()) __builtin_trap(); // nothing printed for a bad line
            break;
        }
        const std::string_view out = r.output();
        if (!out.empty() && out.back() != '\n') __builtin_trap();
        if (!r.has_mode()) continue;
        if (r.is_rdma()) {
            const auto& t = r.rdma();
            if (t.profile_ix() >= 9 || t.tired() != 0) __builtin_trap();
            if (t.tune_state() != qlimits::dim_tune_state::going_right &&
                t.tune_state() != qlimits::dim_tune_state::going_left)
                __builtin_trap();
            if (t.pending()) __builtin_trap(); // the replayer always applies at once
        } else {
            const auto& t = r.net();
            if (t.profile_ix() >= 5 || t.tired() > 10) __builtin_trap();
            if (t.pending()) __builtin_trap();
        }
    }
    return 0;
}
