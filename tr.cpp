#include <cstdio>
#include <string>
#include "qlimits/testing/trace.hpp"
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using dql_ms = qlimits::dql<clock_ms>;
static clock_ms::time_point at(long v) { return clock_ms::time_point{std::chrono::milliseconds{v}}; }
int main() {
    qlimits::testing::recording<dql_ms> rec{{.stall_threshold = std::chrono::milliseconds{100}}, at(0)};
    rec.on_queued(1, at(0)); rec.on_completed(1, at(0)); rec.on_queued(1, at(10));
    rec.on_queued(1, at(300)); rec.on_completed(1, at(150)); rec.on_completed(1, at(400));
    qlimits::testing::limit_replayer<dql_ms> r; const char* why = nullptr;
    auto bad = qlimits::testing::replay_limit_trace(r, rec.sink().text, [](std::string_view) {}, true, &why, [](std::size_t, const char*) {});
    std::printf("bad %zu live stall %llu max %u replay stall %llu max %u\n", bad,
        (unsigned long long)rec.inner().stats().stall_count, (unsigned)rec.inner().stats().stall_max,
        (unsigned long long)r.policy().stats().stall_count, (unsigned)r.policy().stats().stall_max);
}
