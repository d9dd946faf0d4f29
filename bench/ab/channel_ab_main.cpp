// Interleaved A/B of two versions of qlimits::channel in one process (scripts/channel_ab.sh).
// Two builds run in separate processes can land in different regimes of the two vCPUs (see
// docs/benchmarks.md: the raw ring alone moves 2x between runs), so they cannot show a 20 %
// change; here every round runs each row of both versions back to back.
// Usage: channel_ab [ROUNDS [SUBSTRING]]   prints the median of the rounds per row.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "channel_ab.hpp"

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    const std::string only = argc > 2 ? argv[2] : "";
    const auto prev = ab_prev::rows(), cur = ab_cur::rows();
    struct line {
        std::string name;
        std::function<ab::result()> run;
        std::vector<ab::result> got;
    };
    std::vector<line> lines;
    for (std::size_t i = 0; i < prev.size() && i < cur.size(); ++i) {
        if (std::string(cur[i].name).find(only) == std::string::npos && i != 0)
            continue;
        lines.push_back({std::string("prev ") + prev[i].name, prev[i].run, {}});
        lines.push_back({std::string("cur  ") + cur[i].name, cur[i].run, {}});
    }
    // Each pair runs back to back, in turn prev first and cur first: run always second, the
    // same code ran 5-26 % faster as "cur" than as "prev" (2026-12-06, raw_ring; see
    // docs/benchmarks.md "One clock reading for several completions").
    for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i + 1 < lines.size(); i += 2) {
            const std::size_t first = i + static_cast<std::size_t>(r % 2);
            lines[first].got.push_back(lines[first].run());
            const std::size_t second = (first == i) ? i + 1 : i;
            lines[second].got.push_back(lines[second].run());
        }
    std::printf("%-32s %10s %8s %8s %9s %9s\n", "row", "ns/item", "min", "max", "empty/it",
                "refused/it");
    for (auto& l : lines) {
        std::sort(l.got.begin(), l.got.end(),
                  [](const ab::result& a, const ab::result& b) { return a.ns_per_item < b.ns_per_item; });
        const ab::result& m = l.got[l.got.size() / 2];
        std::printf("%-32s %10.1f %8.1f %8.1f %9.3f %9.3f\n", l.name.c_str(), m.ns_per_item,
                    l.got.front().ns_per_item, l.got.back().ns_per_item, m.empty_per_item,
                    m.refused_per_item);
    }
}
