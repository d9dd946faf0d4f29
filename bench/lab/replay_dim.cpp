// qlimits-lab replay dim: read a DIM trace (DESIGN.md section 6) on stdin and print the apply and
// state lines net_dim / rdma_dim produce. A thin shell over qlimits/testing/dim_trace.hpp; the
// format's edge cases are documented there.
#include <cstdio>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "qlimits/testing/dim_trace.hpp"

namespace lab {

/// Replays `text` as a DIM trace: the lines on stdout, an error as `line N: <reason>` on stderr.
int replay_dim_text(std::string_view text) {
    std::string out;
    out.reserve(text.size() * 2);
    const char* why = nullptr;
    const std::size_t bad = qlimits::testing::replay_dim_trace(
        text, [&out](std::string_view s) { out.append(s); }, &why);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (bad != 0) {
        std::fprintf(stderr, "line %zu: %s\n", bad, why);
        return exit_usage;
    }
    return exit_ok;
}

} // namespace lab
