// qlimits-lab replay POLICY [-v]: read a trace (docs/design.md §6) on stdin and print the
// state after every q/c (limit policies) or s/c (dim). A thin shell over
// qlimits/testing/trace.hpp and qlimits/testing/dim_trace.hpp, where the formats' edge cases
// are documented.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/software_limit.hpp"
#include "qlimits/limits/vegas_limit.hpp"
#include "qlimits/testing/dim_trace.hpp"
#include "qlimits/testing/trace.hpp"

namespace lab {
namespace {
using tick_clock = qlimits::manual_clock<std::chrono::milliseconds>; // 1 tick = 1 ms

// The whole of `in`; false if reading failed (stdin closed, a directory), which must not pass
// for an empty trace.
bool read_all(std::FILE* in, std::string& s) {
    char buf[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) s.append(buf, n);
    return std::ferror(in) == 0;
}

// Replays `text` with `run(text, sink, &why)` (which returns the failing line or 0): the lines
// go to stdout, an error to stderr as `line N: <reason>` with exit code 2.
template <class Run>
int print_replay(std::string_view text, Run&& run) {
    std::string out;
    out.reserve(text.size() * 2);
    const char* why = nullptr;
    const std::size_t bad = run(text, [&out](std::string_view s) { out.append(s); }, &why);
    const bool written = std::fwrite(out.data(), 1, out.size(), stdout) == out.size() &&
                         std::fflush(stdout) == 0;
    if (!written) {
        std::fprintf(stderr, "replay: cannot write the replay to stdout: %s\n",
                     std::strerror(errno));
        return exit_failure;
    }
    if (bad != 0) {
        std::fprintf(stderr, "line %zu: %s\n", bad, why);
        return exit_usage;
    }
    return exit_ok;
}

// Limit policies: a configuration directive the policy lacks is skipped with a note on
// stderr (`line N: note: ...`), or refused with --strict.
template <class Policy>
int replay_limits(std::string_view text, bool verbose, bool strict) {
    return print_replay(text, [verbose, strict](std::string_view t, auto sink, const char** why) {
        qlimits::testing::limit_replayer<Policy> r;
        r.set_strict(strict);
        return qlimits::testing::replay_limit_trace(
            r, t, sink, verbose, why, [](std::size_t line, const char* note) {
                std::fprintf(stderr, "line %zu: note: %s\n", line, note);
            });
    });
}
} // namespace

int replay_main(int argc, char** argv) {
    const char* policy = nullptr;
    bool verbose = false, strict = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-v") == 0 || std::strcmp(argv[i], "--verbose") == 0)
            verbose = true;
        else if (std::strcmp(argv[i], "--strict") == 0)
            strict = true;
        else if (policy == nullptr)
            policy = argv[i];
        else {
            std::fprintf(stderr, "replay: unexpected argument '%s'\n", argv[i]);
            return exit_usage;
        }
    }
    if (policy == nullptr) {
        std::fprintf(stderr, "usage: qlimits-lab replay POLICY [-v] [--strict] < trace\n");
        return exit_usage;
    }
    std::string text;
    if (!read_all(stdin, text)) {
        std::fprintf(stderr, "replay: cannot read the trace from stdin: %s\n", std::strerror(errno));
        return exit_usage;
    }
    if (std::strcmp(policy, "dql") == 0) return replay_limits<qlimits::dql<tick_clock>>(text, verbose, strict);
    if (std::strcmp(policy, "dim") == 0) // the DIM format; -v changes nothing there
        return print_replay(text, [](std::string_view t, auto sink, const char** why) {
            return qlimits::testing::replay_dim_trace(t, sink, why);
        });
    if (std::strcmp(policy, "fixed") == 0)
        return replay_limits<qlimits::fixed_limit<tick_clock>>(text, verbose, strict);
    if (std::strcmp(policy, "unlimited") == 0)
        return replay_limits<qlimits::unlimited<tick_clock>>(text, verbose, strict);
    if (std::strcmp(policy, "sw") == 0) // software_limit, defaults; its budget rounds up to 1 tick
        return replay_limits<qlimits::software_limit<tick_clock>>(text, verbose, strict);
    // The peers time sojourns in 1 us ticks (their defaults, Netflix's, are in ms and us); a
    // trace's ticks are converted to them (1 ms each unless it says tick_ns).
    using us_clock = qlimits::manual_clock<std::chrono::microseconds>;
    if (std::strcmp(policy, "vegas") == 0)
        return replay_limits<qlimits::vegas_limit<us_clock>>(text, verbose, strict);
    if (std::strcmp(policy, "gradient2") == 0)
        return replay_limits<qlimits::gradient2_limit<us_clock>>(text, verbose, strict);
    if (std::strcmp(policy, "aimd") == 0)
        return replay_limits<qlimits::aimd_limit<us_clock>>(text, verbose, strict);
    std::fprintf(stderr,
                 "replay: unknown policy '%s' (known: dql, dim, fixed, unlimited, sw, vegas, "
                 "gradient2, aimd)\n",
                 policy);
    return exit_usage;
}

int demo_main(int argc, char** argv) {
    // Replay the bundled trace through dql, printing one line each time the limit changes.
    if (argc > 1) {
        std::fprintf(stderr, "qlimits-lab demo: takes no arguments ('%s')\n", argv[1]);
        return exit_usage;
    }
    qlimits::testing::limit_replayer<qlimits::dql<tick_clock>> r;
    std::string_view text = qlimits_lab_example_trace;
    std::uint32_t last_limit = 0;
    std::size_t line_no = 0, ops = 0, changes = 0;
    std::printf("qlimits-lab demo: bundled example trace through classic DQL (1 tick = 1 ms)\n");
    std::printf("%8s %8s %10s %10s %12s\n", "line", "tick", "limit", "inflight", "lowest_slack");
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++line_no;
        const auto parsed = qlimits::testing::parse_limit_line(line);
        if (parsed.what != qlimits::testing::limit_line::kind::directive) continue;
        const auto step = r.apply(parsed.directive);
        if (step.error != nullptr) {
            std::fprintf(stderr, "line %zu: %s\n", line_no, step.error);
            return exit_failure;
        }
        ++ops;
        const auto s = r.policy().state();
        if (s.limit != last_limit) {
            const auto slack = s.lowest_slack == qlimits::dql_no_slack
                                   ? std::string("-")
                                   : std::to_string(s.lowest_slack);
            std::printf("%8zu %8lld %10u %10u %12s\n", line_no,
                        static_cast<long long>(r.now().time_since_epoch().count()), s.limit,
                        s.num_queued - s.num_completed, slack.c_str());
            last_limit = s.limit;
            ++changes;
        }
    }
    const auto st = r.policy().stats();
    std::printf("%zu directives, %zu limit changes; final limit %u units.\n", ops, changes,
                st.limit);
    return exit_ok;
}
} // namespace lab
