// Micro-benchmarks of DIM (issue 5, item 7): ns per call.
//  - bm_net_dim_no_decision: net_dim::on_sample() with fewer than 64 events since the window
//    opened, the path every interrupt takes. Goal: under 3 ns.
//  - bm_net_dim_decision: every call closes a 64-event window and decides (steady load: the
//    tuner is parked on top, so each call rates the window, compares and re-opens it).
//  - bm_net_dim_decision_apply: rates alternate, so decisions move the index; one iteration is
//    the deciding call + on_applied() + the re-seeding call.
//  - bm_rdma_dim_no_decision: rdma_dim::on_completions() inside a window.
//  - bm_moderator_no_decision: the synchronous dim_moderator around net_dim (adapter overhead).
// Each iteration builds its sample from counters, as a driver would. Run in a Release build:
//   build/bench/qlimits-bench --benchmark_filter=dim --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true          (one command line)
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "qlimits/adapters/moderation.hpp"
#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/rdma_dim.hpp"

namespace {
using namespace std::chrono_literals;

void bm_net_dim_no_decision(benchmark::State& st) {
    qlimits::net_dim d;
    (void)d.on_sample({0ns, 0, 0, 0, 0}); // open the window at events 0
    std::uint32_t i = 0;
    for (auto _ : st) {
        // events stay within 0..62 of the window start: never a decision
        const qlimits::dim_sample s{std::chrono::nanoseconds{i * 1000},
                                    static_cast<std::uint16_t>(i % 63), i * 10, i * 15000, 0};
        benchmark::DoNotOptimize(d.on_sample(s));
        benchmark::ClobberMemory();
        ++i;
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(bm_net_dim_no_decision);

void bm_net_dim_decision(benchmark::State& st) {
    qlimits::net_dim d;
    std::uint32_t i = 0, bytes = 0;
    // One 64-event, 1 ms window per call; a change is applied and re-seeded at once.
    const auto window = [&](std::uint32_t per_window) {
        ++i;
        bytes += per_window;
        const qlimits::dim_sample s{std::chrono::milliseconds{i}, static_cast<std::uint16_t>(i * 64),
                                    i * 6400, bytes, 0};
        if (d.on_sample(s)) {
            d.on_applied();
            (void)d.on_sample(s);
        }
    };
    (void)d.on_sample({0ns, 0, 0, 0, 0});
    // Warm up into parking on top: BETTER vs zero (right to 1), SAME (turn, left to 0), BETTER
    // going left at 0 (edge: park on top). Equal windows after that are SAME: parked for good.
    window(1'000'000);
    window(1'000'000);
    window(2'000'000);
    for (auto _ : st) {
        window(2'000'000);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
    st.counters["parked"] = d.tune_state() == qlimits::dim_tune_state::parking_on_top ? 1 : 0;
}
BENCHMARK(bm_net_dim_decision);

void bm_net_dim_decision_apply(benchmark::State& st) {
    qlimits::net_dim d;
    std::uint32_t i = 0, bytes = 0;
    std::int64_t changes = 0;
    (void)d.on_sample({0ns, 0, 0, 0, 0});
    for (auto _ : st) {
        ++i;
        bytes += (i % 4 < 2) ? 1'000'000U : 3'000'000U; // alternating load
        const qlimits::dim_sample s{std::chrono::milliseconds{i}, static_cast<std::uint16_t>(i * 64),
                                    i * 6400, bytes, 0};
        if (d.on_sample(s)) {
            ++changes;
            d.on_applied();
            (void)d.on_sample(s); // the driver's next interrupt re-seeds
        }
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
    st.counters["changes_per_call"] =
        static_cast<double>(changes) / static_cast<double>(st.iterations());
}
BENCHMARK(bm_net_dim_decision_apply);

void bm_rdma_dim_no_decision(benchmark::State& st) {
    qlimits::rdma_dim r;
    std::uint32_t i = 0;
    for (auto _ : st) {
        // on_applied() after 60 calls keeps the window from ever reaching 64 events
        if (++i % 60 == 0) r.on_applied();
        benchmark::DoNotOptimize(r.on_completions(i & 7U, std::chrono::nanoseconds{i * 1000}));
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(bm_rdma_dim_no_decision);

struct null_hook {
    std::uint32_t applied = 0;
    void apply(const qlimits::moderation&) noexcept { ++applied; }
};

void bm_moderator_no_decision(benchmark::State& st) {
    qlimits::dim_moderator<qlimits::net_dim, null_hook> m{null_hook{}};
    (void)m.on_sample({0ns, 0, 0, 0, 0});
    std::uint32_t i = 0;
    for (auto _ : st) {
        const qlimits::dim_sample s{std::chrono::nanoseconds{i * 1000},
                                    static_cast<std::uint16_t>(i % 63), i * 10, i * 15000, 0};
        benchmark::DoNotOptimize(m.on_sample(s));
        benchmark::ClobberMemory();
        ++i;
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(bm_moderator_no_decision);
} // namespace
