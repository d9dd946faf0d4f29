// Micro-benchmarks of classic DQL's hot paths (issue: foundation, item 6).
//  - bm_dql_enqueue_avail/B: per item, on_queued + available(), with one on_completed every
//    B items (B = 1, 16, 64, 1024), one tick of time per completion round. Items/s is per item;
//    B = 1024 is the producer side alone (one completion amortised over 1024 items).
//  - bm_dql_completion: on_completed alone, on a ring that stays busy (the slack branch).
// Run in a Release build: build/bench/qlimits-bench --benchmark_filter=dql
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "qlimits/limits/dql.hpp"

namespace {
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using dql_ms = qlimits::dql<clock_ms>;

void bm_dql_enqueue_avail(benchmark::State& st) {
    const auto batch = static_cast<std::uint32_t>(st.range(0));
    dql_ms q{{}, clock_ms::time_point{}};
    std::int64_t tick = 0;
    for (auto _ : st) {
        for (std::uint32_t i = 0; i < batch; ++i) {
            q.on_queued(1500);
            benchmark::DoNotOptimize(q.available());
        }
        ++tick;
        q.on_completed(batch * 1500, clock_ms::time_point{std::chrono::milliseconds{tick}});
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * batch);
    st.counters["limit"] = q.limit();
    st.counters["ns_per_item"] = benchmark::Counter(
        static_cast<double>(st.iterations()) * batch,
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(bm_dql_enqueue_avail)->Arg(1)->Arg(16)->Arg(64)->Arg(1024);

void bm_dql_completion(benchmark::State& st) {
    dql_ms q{{}, clock_ms::time_point{}};
    std::int64_t tick = 0;
    const auto refill = [&q] {
        for (int i = 0; i < 8; ++i) q.on_queued(qlimits::dql_max_object);
    };
    refill();
    for (auto _ : st) {
        if (q.inflight() < 64) [[unlikely]]
            refill();
        ++tick;
        q.on_completed(64, clock_ms::time_point{std::chrono::milliseconds{tick}});
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(bm_dql_completion);
} // namespace
