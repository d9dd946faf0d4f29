// Two-thread throughput of a hand-written SPSC ring, raw and wrapped in qlimits::channel, side by
// side: what does the channel cost when its limit never bites? A producer thread moves N
// 8-byte items to the consumer (the benchmark thread); items/s is N over the wall time of the
// transfer. Both sides spin (no sleeping) in the main rows so only the adapter's own work is
// measured: the policy calls, the doorbell fence per send and the wake-up check per receive.
// Extra rows: a consumer declared as never sleeping (consumer_wait::spin: no fence per send),
// sends in batches (more = true, one fence per 32) with per-batch completion, and the blocking
// send()/receive() a real pipeline would use.
//
// Run (Release): qlimits-bench --benchmark_filter=channel --benchmark_repetitions=10
//                --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"

namespace {
using item = std::uint64_t;
using ring_t = rings::spsc_ring<item, 1024>;
constexpr std::uint64_t items_per_run = 1U << 20;

// Both sides of every two-thread row wait the same way: spin, then yield, so a row does not
// stall for a whole time slice when the machine has more runnable threads than CPUs.
template <class F>
void spin_until(F&& done) {
    for (unsigned k = 0; !done(); ++k)
        if (k >= 64)
            std::this_thread::yield();
}

// With QLIMITS_BENCH_PIN set, keep the two threads on CPUs 0 and 1, as rigtorp's benchmarks
// do. Off by default: on a shared machine a pinned spinning thread that shares its CPU with
// another process measures the scheduler, not the ring.
void pin(int cpu) {
    if (std::getenv("QLIMITS_BENCH_PIN") == nullptr || std::thread::hardware_concurrency() < 2)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<unsigned>(cpu), &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

template <class Produce, class Consume>
void transfer(benchmark::State& st, Produce produce, Consume consume) {
    pin(0);
    for (auto _ : st) {
        std::thread producer([&] {
            pin(1);
            produce();
        });
        benchmark::DoNotOptimize(consume());
        producer.join();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) *
                         static_cast<std::int64_t>(items_per_run));
    // Seconds per item (shown in ns): unlike items/s, its minimum over repetitions is the best.
    st.counters["per_item"] = benchmark::Counter(static_cast<double>(items_per_run),
                                                 benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

void bm_channel_raw_ring(benchmark::State& st) {
    auto ring = std::make_unique<ring_t>();
    transfer(
        st,
        [&] {
            for (item i = 0; i < items_per_run; ++i)
                spin_until([&] { return ring->try_push(item{i}); });
        },
        [&] {
            item sum = 0, v = 0;
            for (std::uint64_t k = 0; k < items_per_run; ++k) {
                spin_until([&] { return ring->try_pop(v); });
                sum += v;
            }
            return sum;
        });
}

// Per item on both sides: try_send() each item, try_receive() each item.
template <class Policy>
void bm_channel_per_item(benchmark::State& st, const typename Policy::config_type& cfg,
                         qlimits::consumer_wait wait = qlimits::consumer_wait::sleep) {
    auto ring = std::make_unique<ring_t>();
    using chan = qlimits::channel<ring_t, Policy>;
    auto ch = std::make_unique<chan>(*ring, cfg, wait);
    transfer(
        st,
        [&] {
            for (item i = 0; i < items_per_run; ++i)
                spin_until([&] { return ch->try_send(item{i}) == qlimits::send_status::ok; });
        },
        [&] {
            item sum = 0, v = 0;
            for (std::uint64_t k = 0; k < items_per_run; ++k) {
                spin_until([&] { return ch->try_receive(v); });
                sum += v;
            }
            return sum;
        });
    st.counters["limit"] = static_cast<double>(ch->limit());
    st.counters["stops"] = static_cast<double>(ch->stats().stops);
}

// Batched on both sides: sends with more = true (doorbell every 32), per-batch completion.
template <class Policy>
void bm_channel_batched(benchmark::State& st, const typename Policy::config_type& cfg) {
    auto ring = std::make_unique<ring_t>();
    using chan = qlimits::channel<ring_t, Policy>;
    auto ch = std::make_unique<chan>(*ring, cfg);
    transfer(
        st,
        [&] {
            for (item i = 0; i < items_per_run; ++i) {
                const bool more = (i + 1) % 32 != 0;
                spin_until([&] { return ch->try_send(item{i}, more) == qlimits::send_status::ok; });
            }
            ch->flush();
        },
        [&] {
            std::array<item, 32> buf{};
            item sum = 0;
            for (std::uint64_t k = 0; k < items_per_run;) {
                std::size_t n = 0;
                spin_until([&] {
                    return (n = ch->try_receive_batch(buf, qlimits::completion::per_batch)) != 0;
                });
                for (std::size_t j = 0; j < n; ++j)
                    sum += buf[j];
                k += n;
            }
            return sum;
        });
}

// What a pipeline would write: blocking send() and receive() (the consumer may sleep).
template <class Policy>
void bm_channel_blocking(benchmark::State& st, const typename Policy::config_type& cfg) {
    auto ring = std::make_unique<ring_t>();
    using chan = qlimits::channel<ring_t, Policy>;
    auto ch = std::make_unique<chan>(*ring, cfg);
    transfer(
        st,
        [&] {
            for (item i = 0; i < items_per_run; ++i)
                (void)ch->send(item{i});
        },
        [&] {
            item sum = 0, v = 0;
            for (std::uint64_t k = 0; k < items_per_run; ++k) {
                (void)ch->receive(v);
                sum += v;
            }
            return sum;
        });
    st.counters["consumer_sleeps"] = static_cast<double>(ch->stats().consumer_sleeps);
}

using unlimited = qlimits::unlimited<>;
using dql = qlimits::dql<>;
// A dql whose limit never bites: min_limit of 2^30 items (it still learns, per completion).
const qlimits::dql<>::config_type dql_never_bites{.min_limit = 1U << 30};

void bm_channel_unlimited_per_item(benchmark::State& st) {
    bm_channel_per_item<unlimited>(st, {});
}
void bm_channel_dql_per_item(benchmark::State& st) {
    bm_channel_per_item<dql>(st, dql_never_bites);
}
// The consumer declared as never sleeping (consumer_wait::spin): sends skip the doorbell fence.
void bm_channel_unlimited_per_item_spin(benchmark::State& st) {
    bm_channel_per_item<unlimited>(st, {}, qlimits::consumer_wait::spin);
}
void bm_channel_dql_per_item_spin(benchmark::State& st) {
    bm_channel_per_item<dql>(st, dql_never_bites, qlimits::consumer_wait::spin);
}
void bm_channel_unlimited_batched(benchmark::State& st) {
    bm_channel_batched<unlimited>(st, {});
}
void bm_channel_dql_batched(benchmark::State& st) {
    bm_channel_batched<dql>(st, dql_never_bites);
}
void bm_channel_unlimited_blocking(benchmark::State& st) {
    bm_channel_blocking<unlimited>(st, {});
}

// One thread plays both sides, 64 items at a time: no cache-line transfer and no scheduler, so
// the difference from the raw row is the adapter's own instructions (policy calls, fences).
void bm_channel_1thread_raw_ring(benchmark::State& st) {
    auto ring = std::make_unique<ring_t>();
    item sum = 0, v = 0;
    for (auto _ : st) {
        for (item i = 0; i < 64; ++i)
            (void)ring->try_push(item{i});
        for (int i = 0; i < 64; ++i) {
            (void)ring->try_pop(v);
            sum += v;
        }
    }
    benchmark::DoNotOptimize(sum);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 64);
}
template <class Policy>
void bm_channel_1thread(benchmark::State& st, const typename Policy::config_type& cfg,
                        qlimits::consumer_wait wait = qlimits::consumer_wait::sleep) {
    auto ring = std::make_unique<ring_t>();
    auto ch = std::make_unique<qlimits::channel<ring_t, Policy>>(*ring, cfg, wait);
    item sum = 0, v = 0;
    for (auto _ : st) {
        for (item i = 0; i < 64; ++i)
            (void)ch->try_send(item{i});
        for (int i = 0; i < 64; ++i) {
            (void)ch->try_receive(v);
            sum += v;
        }
    }
    benchmark::DoNotOptimize(sum);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 64);
}
void bm_channel_1thread_unlimited(benchmark::State& st) {
    bm_channel_1thread<unlimited>(st, {});
}
void bm_channel_1thread_dql(benchmark::State& st) {
    bm_channel_1thread<dql>(st, dql_never_bites);
}
void bm_channel_1thread_unlimited_spin(benchmark::State& st) {
    bm_channel_1thread<unlimited>(st, {}, qlimits::consumer_wait::spin);
}
} // namespace

// "best": the fastest repetition (read its time and per_item; its items_per_second column is
// the minimum rate, not the best). On a shared machine the median measures the neighbours too.
#define QLIMITS_CHANNEL_BENCH(fn)                                                                  \
    BENCHMARK(fn)                                                                                  \
        ->UseRealTime()                                                                            \
        ->Unit(benchmark::kMillisecond)                                                            \
        ->ComputeStatistics("best", [](const std::vector<double>& v) {                             \
            return *std::min_element(v.begin(), v.end());                                          \
        })
QLIMITS_CHANNEL_BENCH(bm_channel_raw_ring);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_per_item);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_per_item);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_per_item_spin);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_per_item_spin);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_batched);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_batched);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_blocking);
BENCHMARK(bm_channel_1thread_raw_ring);
BENCHMARK(bm_channel_1thread_unlimited);
BENCHMARK(bm_channel_1thread_dql);
BENCHMARK(bm_channel_1thread_unlimited_spin);
