// Micro-benchmarks of software_limit's hot paths, beside dql's (dql_bench.cpp) in the same
// binary, so one run with --benchmark_enable_random_interleaving=true compares them.
//  - bm_sw_enqueue_avail/B: per item, on_queued + available(), one on_completed(B) every B
//    items (as bm_dql_enqueue_avail; B = 1024: the producer side alone). Items/s is per item.
//  - bm_sw_completion / bm_dql_completion_per_item / bm_sw_completion_per_item: on_completed
//    of 64 units on a busy ring, and of 1 unit per call (the software-ring case), the time
//    moving 10 ns per call (as a nanosecond clock would).
//  - bm_channel_1thread_sw_per_item: channel with this policy (its limit held at 2^30, as the
//    dql row's), one thread playing both sides (compare bm_channel_1thread_raw_ring /
//    _unlimited / _dql in channel_bench.cpp).
//  - bm_clock_read/steady, /coarse: what channel pays per clock read for this policy's `now`
//    (steady_clock_source, once per per-item completion) and for a millisecond-tick policy's
//    (CLOCK_MONOTONIC_COARSE via detail/coarse_clock.hpp), to split the channel row.
// Run in a Release build: build/bench/qlimits-bench --benchmark_filter='sw|dql|1thread'
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/detail/coarse_clock.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/software_limit.hpp"

namespace {
using clock_ns = qlimits::manual_clock<std::chrono::nanoseconds>;
using sw_ns = qlimits::software_limit<clock_ns>;
using dql_ns = qlimits::dql<clock_ns>;
clock_ns::time_point at(std::int64_t ns) { return clock_ns::time_point{std::chrono::nanoseconds{ns}}; }

// `batch` posts of one unit, each followed by available(), then one completion of the batch:
// the producer's side per item, in the same harness for software_limit and for dql (dql_bench's
// own rows use a millisecond clock and 1500-unit packets, so their figures do not compare with
// these; review 2026-12-03).
template <class P>
void enqueue_avail(benchmark::State& st) {
    const auto batch = static_cast<std::uint32_t>(st.range(0));
    P q{{}, at(0)};
    std::int64_t now = 0;
    for (auto _ : st) {
        for (std::uint32_t i = 0; i < batch; ++i) {
            q.on_queued(1);
            benchmark::DoNotOptimize(q.available());
        }
        now += 10 * batch;
        q.on_completed(batch, at(now));
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * batch);
    st.counters["limit"] = q.limit();
}
void bm_sw_enqueue_avail(benchmark::State& st) { enqueue_avail<sw_ns>(st); }
void bm_dql_ns_enqueue_avail(benchmark::State& st) { enqueue_avail<dql_ns>(st); }
BENCHMARK(bm_sw_enqueue_avail)->Arg(1)->Arg(16)->Arg(64)->Arg(1024);
BENCHMARK(bm_dql_ns_enqueue_avail)->Arg(1)->Arg(16)->Arg(64)->Arg(1024);

template <class P>
void completion(benchmark::State& st, std::uint32_t per_call) {
    P q{{}, at(0)};
    std::int64_t now = 0;
    std::uint32_t left = 0;
    std::uint64_t refills = 0;
    for (auto _ : st) {
        if (left <= per_call) [[unlikely]] {
            // Refill as a producer that honours the limit: one post of the room plus one unit
            // (the refill is not what this row times: 64 posts of one unit here were 72-88 % of
            // the 64-unit rows' time; review 2026-12-03), and at least enough that this call
            // does not empty the ring. Until 2026-12-05 it refilled 1024 units only once the
            // ring was empty, so one 64-unit call in 16 was an emptying round; refilled 1024
            // before it emptied, whatever the room, software_limit saw a producer held back for
            // good and took its fast return every call (both found by reviews).
            const std::int64_t room = q.available();
            std::uint32_t post = room >= 0 ? static_cast<std::uint32_t>(
                                                 std::min<std::int64_t>(room + 1, 1 << 20))
                                           : 0;
            if (left + post <= per_call) post = per_call + 1 - left;
            q.on_queued(post);
            left += post;
            ++refills;
        }
        now += 10;
        q.on_completed(per_call, at(now));
        left -= per_call;
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * per_call);
    st.counters["limit"] = q.limit();
    st.counters["calls_per_refill"] =
        refills == 0 ? 0.0 : static_cast<double>(st.iterations()) / static_cast<double>(refills);
}
void bm_sw_completion(benchmark::State& st) { completion<sw_ns>(st, 64); }
void bm_dql_completion_64_ns(benchmark::State& st) { completion<dql_ns>(st, 64); }
void bm_sw_completion_per_item(benchmark::State& st) { completion<sw_ns>(st, 1); }
void bm_dql_completion_per_item(benchmark::State& st) { completion<dql_ns>(st, 1); }
BENCHMARK(bm_sw_completion);
BENCHMARK(bm_dql_completion_64_ns);
BENCHMARK(bm_sw_completion_per_item);
BENCHMARK(bm_dql_completion_per_item);

using ring_t = rings::spsc_ring<std::uint64_t, 1024>;
void bm_channel_1thread_sw_per_item(benchmark::State& st) {
    auto ring = std::make_unique<ring_t>();
    // The limit held at 2^30 (as channel_bench.cpp's rows): with the defaults it settles near
    // the 64 items sent per round, refuses some, and the row then times the consumer's back-off
    // on the empty polls that follow (channel.hpp "Back-off"), not the policy.
    auto ch = std::make_unique<qlimits::channel<ring_t, qlimits::software_limit<>>>(
        *ring, qlimits::software_limit_config{.min_limit = 1U << 30, .max_limit = 1U << 30});
    std::uint64_t sum = 0, v = 0;
    for (auto _ : st) {
        for (std::uint64_t i = 0; i < 64; ++i) (void)ch->try_send(std::uint64_t{i});
        for (int i = 0; i < 64; ++i) {
            (void)ch->try_receive(v);
            sum += v;
        }
    }
    benchmark::DoNotOptimize(sum);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 64);
    st.counters["limit"] = ch->limit();
}
BENCHMARK(bm_channel_1thread_sw_per_item);

template <class Clock>
void bm_clock_read(benchmark::State& st) {
    for (auto _ : st) benchmark::DoNotOptimize(qlimits::detail::adapter_clock<Clock>::now());
}
BENCHMARK_TEMPLATE(bm_clock_read, qlimits::steady_clock_source)->Name("bm_clock_read/steady");
BENCHMARK_TEMPLATE(bm_clock_read, qlimits::jiffy_clock)->Name("bm_clock_read/coarse");
} // namespace
