// Micro-benchmarks of the peer policies (vegas_limit, gradient2_limit, aimd_limit) beside dql
// and fixed_limit, so the costs compare within one run.
//  - bm_peer_enqueue_avail<P>/B: per item, on_queued + available(), with one on_completed every
//    B items (B = 1, 16, 64) and 1 us of time per completion round, behind a standing backlog of
//    64 items, so the sojourn probe marks and samples as on a busy ring and the rule runs once
//    per measured sojourn (counter "samples" per item shows how often).
//  - bm_peer_rule<R>: the rule's on_sample() alone, with a sample pattern that moves the limit.
// Run in a Release build, interleaved:
//   build/bench/qlimits-bench --benchmark_filter=peer --benchmark_repetitions=5
//     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//   (one command line)
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/vegas_limit.hpp"

namespace {
using clock_ns = qlimits::manual_clock<std::chrono::nanoseconds>;

template <class P>
void bm_peer_enqueue_avail(benchmark::State& st) {
    const auto batch = static_cast<std::uint32_t>(st.range(0));
    P q{{}, typename P::time_point{}};
    std::int64_t t = 0;
    q.on_queued(64); // a standing backlog: the sojourn probe marks and samples every few rounds
    for (auto _ : st) {
        for (std::uint32_t i = 0; i < batch; ++i) {
            q.on_queued(1);
            benchmark::DoNotOptimize(q.available());
        }
        t += 1000;
        q.on_completed(batch, typename P::time_point{std::chrono::nanoseconds{t}});
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * batch);
    st.counters["limit"] = q.limit();
    if constexpr (requires { q.stats().samples; })
        st.counters["samples_per_item"] =
            static_cast<double>(q.stats().samples) / (static_cast<double>(st.iterations()) * batch);
}
using dql_ns = qlimits::dql<clock_ns>;
BENCHMARK_TEMPLATE(bm_peer_enqueue_avail, dql_ns)->Arg(1)->Arg(16)->Arg(64);
BENCHMARK_TEMPLATE(bm_peer_enqueue_avail, qlimits::fixed_limit<clock_ns>)->Arg(1)->Arg(16)->Arg(64);
BENCHMARK_TEMPLATE(bm_peer_enqueue_avail, qlimits::vegas_limit<clock_ns>)->Arg(1)->Arg(16)->Arg(64);
BENCHMARK_TEMPLATE(bm_peer_enqueue_avail, qlimits::gradient2_limit<clock_ns>)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64);
BENCHMARK_TEMPLATE(bm_peer_enqueue_avail, qlimits::aimd_limit<clock_ns>)->Arg(1)->Arg(16)->Arg(64);

template <class R>
void bm_peer_rule(benchmark::State& st) {
    R r{typename R::config_type{}};
    std::uint32_t i = 0;
    for (auto _ : st) {
        // RTTs cycle through 100..163 us and inflight through 0..63: every branch is taken.
        ++i;
        const auto rtt = std::chrono::nanoseconds{100'000 + 1000 * (i & 63U)};
        benchmark::DoNotOptimize(r.on_sample(rtt, (i * 7U) & 63U, (i & 255U) == 0));
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK_TEMPLATE(bm_peer_rule, qlimits::vegas_rule);
BENCHMARK_TEMPLATE(bm_peer_rule, qlimits::gradient2_rule);
BENCHMARK_TEMPLATE(bm_peer_rule, qlimits::aimd_rule);
} // namespace
