// Two-thread throughput of SPSC rings, raw and wrapped in qlimits::channel, side by side: what
// does the channel cost when its limit never bites? A producer thread moves N 8-byte items to
// the consumer (the benchmark thread); per_item is the wall time of the transfer over N.
//
// Rows (bm_channel_*, the rows of issue 8's speed bar; "raw" rows are the baselines; the
// bm_round_trip_* rows at the end are named outside that prefix on purpose):
//  - raw_ring: examples/rings/spsc_ring.hpp, an index-caching SPSC ring (the design of
//    rigtorp/SPSCQueue: each side caches the other's index and reads the shared one only when
//    the cached one says full/empty), both sides spinning; raw_moodycamel: the same transfer
//    through moodycamel::ReaderWriterQueue (try_enqueue/try_dequeue), if installed.
//  - {unlimited, fixed, dql, sw} x {per_item, batched}: try_send/try_receive spinning on both
//    sides
//    (consumer_wait::sleep, so every send pays the doorbell barrier); per_item_fences: the same
//    with doorbell_barrier::fences (a full fence per send); per_item_spin: consumer_wait::spin.
//    batched: sends with more = true and a doorbell every 32, receive_batch per_batch.
//    sw is software_limit; sw_per_item_default runs it with its defaults, the limit on (the
//    producer stops whenever the limit bites: what a user gets, not the channel's bare cost).
//  - raw_ring16, unlimited_{per_item, batched}_ring16: the same through a 16-slot ring, where a
//    batched consumer's slip (a pause for a batch to build up) meets a full ring.
//  - blocking_{unlimited, fixed, dql, sw}[_fences]: send()/receive(), the consumer may sleep;
//    raw_moodycamel_blocking: moodycamel::BlockingReaderWriterQueue (try_enqueue spinning,
//    wait_dequeue), what users pick today for a blocking SPSC queue.
//  - busy_poller_{membarrier, fences}: a blocking channel whose consumer sleeps often, beside a
//    third thread that busy-polls the clock; worst_stall_us is the longest gap that thread saw,
//    stalls_over_5us_per_s how often it lost more than 5 us
//    (membarrier interrupts every CPU running a thread of the process on each consumer sleep).
//  - 1thread_*: one thread plays both sides, 64 items at a time (no cache-line transfer);
//    1thread_*_batched: the batched calls (more = true, receive_batch of 32 per batch).
//  - bm_round_trip_*: one item there and back through two rings (a request/response pair):
//    spinning raw rings, moodycamel's blocking queue, blocking channels (unlimited, dql with
//    its defaults); per_trip is the time of one round trip.
// Threads are pinned to CPUs 0 and 1 (sched_setaffinity) where the machine allows it; the
// `pinned` counter says whether it worked. QLIMITS_BENCH_NO_PIN=1 turns pinning off.
//
// Run (Release): qlimits-bench --benchmark_filter=bm_channel --benchmark_repetitions=10
//                --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include <sched.h>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/software_limit.hpp"
#if __has_include(<readerwriterqueue/readerwriterqueue.h>)
#include <readerwriterqueue/readerwriterqueue.h>
#define QLIMITS_BENCH_MOODYCAMEL 1
#endif

namespace {
using item = std::uint64_t;
using ring_t = rings::spsc_ring<item, 1024>;
// A small ring (16 slots, two cache lines of items): where a side that pauses for a batch to
// build up (the channel's slip) finds the ring full, and the batched rows can lose to per item.
using ring16_t = rings::spsc_ring<item, 16>;
constexpr std::uint64_t items_per_run = 1U << 20;

// Spin, then yield, so a row does not stall for a whole time slice when the machine has more
// runnable threads than CPUs. The pause spaces the retries (no hammering of a shared line).
template <class F>
void spin_until(F&& done) {
    for (unsigned k = 0; !done(); ++k) {
        qlimits::detail::cpu_relax();
        if (k >= 64)
            std::this_thread::yield();
    }
}

// The benchmark thread's CPUs when the program started (taskset or a cpuset included).
const cpu_set_t& initial_cpus() {
    static const cpu_set_t set = [] {
        cpu_set_t s;
        CPU_ZERO(&s);
        (void)::sched_getaffinity(0, sizeof s, &s);
        return s;
    }();
    return set;
}
// Pin the calling thread to `cpu`; false if the machine does not allow it (fewer CPUs, a
// cpuset or taskset without it, QLIMITS_BENCH_NO_PIN set).
bool pin(int cpu) {
    if (std::getenv("QLIMITS_BENCH_NO_PIN") != nullptr || std::thread::hardware_concurrency() < 2 ||
        !CPU_ISSET(static_cast<unsigned>(cpu), &initial_cpus()))
        return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<unsigned>(cpu), &set);
    return ::sched_setaffinity(0, sizeof set, &set) == 0;
}
// Undo pin() for the benchmark thread: back to the CPUs it started with (not every CPU, which
// escaped a taskset; review 2026-12-03).
void unpin() { (void)::sched_setaffinity(0, sizeof(cpu_set_t), &initial_cpus()); }

// The producer on a thread of its own (CPU 1), the consumer on the benchmark thread (CPU 0);
// `count` items (round trips for bm_round_trip_*) per run, reported per one as `per`.
template <class Produce, class Consume>
void transfer(benchmark::State& st, Produce produce, Consume consume,
              std::uint64_t count = items_per_run, const char* per = "per_item") {
    (void)initial_cpus(); // read before the first pin
    const bool pinned = pin(0);
    std::atomic<bool> producer_pinned{true};
    for (auto _ : st) {
        std::thread producer([&] {
            if (!pin(1)) producer_pinned.store(false);
            produce();
        });
        benchmark::DoNotOptimize(consume());
        producer.join();
    }
    unpin();
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) *
                         static_cast<std::int64_t>(count));
    st.counters["pinned"] = pinned && producer_pinned.load() ? 1 : 0; // both threads
    // Seconds per item (shown in ns): unlike items/s, its median over repetitions reads directly.
    st.counters[per] = benchmark::Counter(static_cast<double>(count),
                                          benchmark::Counter::kIsIterationInvariantRate |
                                              benchmark::Counter::kInvert);
}

template <class Ring>
void bm_raw_ring(benchmark::State& st) {
    auto ring = std::make_unique<Ring>();
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

#if QLIMITS_BENCH_MOODYCAMEL
void bm_channel_raw_moodycamel(benchmark::State& st) {
    moodycamel::ReaderWriterQueue<item> q(1024);
    transfer(
        st,
        [&] {
            for (item i = 0; i < items_per_run; ++i)
                spin_until([&] { return q.try_enqueue(item{i}); });
        },
        [&] {
            item sum = 0, v = 0;
            for (std::uint64_t k = 0; k < items_per_run; ++k) {
                spin_until([&] { return q.try_dequeue(v); });
                sum += v;
            }
            return sum;
        });
}
void bm_channel_raw_moodycamel_blocking(benchmark::State& st) {
    moodycamel::BlockingReaderWriterQueue<item> q(1024);
    transfer(
        st,
        [&] {
            for (item i = 0; i < items_per_run; ++i)
                spin_until([&] { return q.try_enqueue(item{i}); });
        },
        [&] {
            item sum = 0, v = 0;
            for (std::uint64_t k = 0; k < items_per_run; ++k) {
                q.wait_dequeue(v);
                sum += v;
            }
            return sum;
        });
}
#endif

void bm_channel_raw_ring(benchmark::State& st) { bm_raw_ring<ring_t>(st); }

// The raw ring with the channel's spacing of retries (channel.hpp, "Back-off"): a failure
// pauses 4 times, doubling per failure in a row to 16, plus 32 when it ends a run of 32
// successes (the slip). The channel rows beat the plain raw ring mostly by that spacing (a
// review, 2026-12-05); against this row the ratio is the channel's own cost. Spin as
// spin_until() does (a yield after 64 failures in a row).
template <class Ring>
void bm_raw_ring_backoff(benchmark::State& st) {
    struct spacing {
        unsigned streak = 0, run = 0;
        void failed() {
            unsigned n = 4U << std::min(streak, 2U);
            if (streak == 0 && run >= 32) n += 32;
            run = 0;
            ++streak;
            for (unsigned k = 0; k < n; ++k) qlimits::detail::cpu_relax();
            if (streak >= 64) std::this_thread::yield();
        }
        void succeeded() {
            streak = 0;
            run += run < 32 ? 1U : 0U;
        }
    };
    auto ring = std::make_unique<Ring>();
    transfer(
        st,
        [&] {
            spacing sp;
            for (item i = 0; i < items_per_run; ++i) {
                while (!ring->try_push(item{i})) sp.failed();
                sp.succeeded();
            }
        },
        [&] {
            spacing sp;
            item sum = 0, v = 0;
            for (std::uint64_t k = 0; k < items_per_run; ++k) {
                while (!ring->try_pop(v)) sp.failed();
                sp.succeeded();
                sum += v;
            }
            return sum;
        });
}
void bm_channel_raw_ring_backoff(benchmark::State& st) { bm_raw_ring_backoff<ring_t>(st); }
void bm_channel_raw_ring16(benchmark::State& st) { bm_raw_ring<ring16_t>(st); }

template <class Policy, class Ring = ring_t>
auto make_channel(Ring& ring, const typename Policy::config_type& cfg,
                  qlimits::consumer_wait wait, qlimits::doorbell_barrier barrier) {
    return std::make_unique<qlimits::channel<Ring, Policy>>(ring, cfg, wait, barrier);
}

// Per item on both sides: try_send() each item, try_receive() each item.
template <class Policy, class Ring = ring_t>
void bm_per_item(benchmark::State& st, const typename Policy::config_type& cfg,
                 qlimits::consumer_wait wait = qlimits::consumer_wait::sleep,
                 qlimits::doorbell_barrier barrier = qlimits::doorbell_barrier::membarrier) {
    auto ring = std::make_unique<Ring>();
    auto ch = make_channel<Policy>(*ring, cfg, wait, barrier);
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
    // Totals over every iteration of the row; per item they compare across rows (rows run
    // different numbers of iterations).
    st.counters["stops_per_item"] = benchmark::Counter(
        static_cast<double>(ch->stats().stops) / static_cast<double>(items_per_run),
        benchmark::Counter::kAvgIterations);
}

// Batched on both sides: sends with more = true (doorbell every 32), per-batch completion.
template <class Policy, class Ring = ring_t>
void bm_batched(benchmark::State& st, const typename Policy::config_type& cfg) {
    auto ring = std::make_unique<Ring>();
    auto ch = make_channel<Policy>(*ring, cfg, qlimits::consumer_wait::sleep,
                                   qlimits::doorbell_barrier::membarrier);
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
void bm_blocking(benchmark::State& st, const typename Policy::config_type& cfg,
                 qlimits::doorbell_barrier barrier = qlimits::doorbell_barrier::membarrier) {
    auto ring = std::make_unique<ring_t>();
    auto ch = make_channel<Policy>(*ring, cfg, qlimits::consumer_wait::sleep, barrier);
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
    // Totals over every iteration, shown per item: rows run different numbers of iterations
    // (review 2026-12-03: the totals were compared across rows).
    const auto s = ch->stats();
    const auto per_item = [](std::uint64_t n) {
        return benchmark::Counter(static_cast<double>(n) / static_cast<double>(items_per_run),
                                  benchmark::Counter::kAvgIterations);
    };
    st.counters["consumer_sleeps_per_item"] = per_item(s.consumer_sleeps);
    st.counters["stops_per_item"] = per_item(s.stops);
    st.counters["producer_waits_per_item"] = per_item(s.producer_waits);
}

// A blocking channel whose producer naps every 64 items (so the consumer sleeps, and with
// membarrier runs the system call), beside a third thread that reads the clock in a loop: its
// longest gap between two reads is what a busy-polling core of the same process suffers. The
// poller gets CPU 2 when the machine allows it (poller_own_cpu=1): then its gaps are the
// barrier's interrupts and the machine's noise. With two CPUs it shares CPU 1 with the
// producer (poller_own_cpu=0), and its gaps also hold the scheduler's slices between the two
// (review 2026-12-03: the row always shared the CPU, which the docs did not say).
void bm_busy_poller(benchmark::State& st, qlimits::doorbell_barrier barrier) {
    auto ring = std::make_unique<ring_t>();
    auto ch = make_channel<qlimits::unlimited<>>(*ring, {}, qlimits::consumer_wait::sleep, barrier);
    constexpr std::uint64_t items = 1U << 14;
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> worst_ns{0};
    std::atomic<std::uint64_t> stalls{0};
    const auto t0 = std::chrono::steady_clock::now();
    (void)initial_cpus();
    std::atomic<bool> own_cpu{false};
    std::thread poller([&] {
        if (pin(2))
            own_cpu.store(true);
        else
            (void)pin(1);
        auto last = std::chrono::steady_clock::now();
        std::int64_t worst = 0;
        std::uint64_t over = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            const auto now = std::chrono::steady_clock::now();
            const std::int64_t gap = (now - last).count();
            worst = std::max(worst, gap);
            over += gap > 5000; // a stall of more than 5 us
            last = now;
        }
        worst_ns.store(worst);
        stalls.store(over);
    });
    std::uint64_t sleeps = 0;
    const bool pinned = pin(0);
    for (auto _ : st) {
        std::thread producer([&] {
            (void)pin(1);
            for (item i = 0; i < items; ++i) {
                (void)ch->send(item{i});
                if (i % 64 == 63)
                    std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        });
        item v = 0;
        for (std::uint64_t k = 0; k < items; ++k)
            (void)ch->receive(v);
        producer.join();
    }
    unpin();
    stop.store(true);
    poller.join();
    sleeps = ch->stats().consumer_sleeps;
    st.counters["pinned"] = pinned ? 1 : 0;
    st.counters["poller_own_cpu"] = own_cpu.load() ? 1 : 0;
    // Per run of `items` (the total grew with the iterations Google Benchmark chose, so rows
    // did not compare: a review, 2026-12-05); the worst stall is over the whole row's time.
    st.counters["consumer_sleeps_per_run"] =
        benchmark::Counter(static_cast<double>(sleeps), benchmark::Counter::kAvgIterations);
    st.counters["worst_stall_us"] = static_cast<double>(worst_ns.load()) / 1000.0;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.counters["stalls_over_5us_per_s"] = static_cast<double>(stalls.load()) / secs;
}

using unlimited = qlimits::unlimited<>;
using fixed = qlimits::fixed_limit<>;
using dql = qlimits::dql<>;
using sw = qlimits::software_limit<>;
// Limits that never bite: a fixed limit of 2^30 items; a dql whose min_limit is 2^30 items (it
// still learns, per completion).
const fixed::config_type fixed_never_bites{.limit = 1U << 30};
const dql::config_type dql_never_bites{.min_limit = 1U << 30};
// A software_limit whose limit is held at 2^30 items (min_limit = max_limit): it still learns
// and gives room per completion as it would, but never stops the producer.
const sw::config_type sw_never_bites{.min_limit = 1U << 30, .max_limit = 1U << 30};
constexpr auto spin = qlimits::consumer_wait::spin;
constexpr auto sleep = qlimits::consumer_wait::sleep;
constexpr auto fences = qlimits::doorbell_barrier::fences;

void bm_channel_unlimited_per_item(benchmark::State& st) { bm_per_item<unlimited>(st, {}); }
void bm_channel_fixed_per_item(benchmark::State& st) {
    bm_per_item<fixed>(st, fixed_never_bites);
}
void bm_channel_dql_per_item(benchmark::State& st) { bm_per_item<dql>(st, dql_never_bites); }
void bm_channel_unlimited_per_item_fences(benchmark::State& st) {
    bm_per_item<unlimited>(st, {}, sleep, fences);
}
void bm_channel_dql_per_item_fences(benchmark::State& st) {
    bm_per_item<dql>(st, dql_never_bites, sleep, fences);
}
void bm_channel_unlimited_per_item_spin(benchmark::State& st) {
    bm_per_item<unlimited>(st, {}, spin);
}
void bm_channel_dql_per_item_spin(benchmark::State& st) {
    bm_per_item<dql>(st, dql_never_bites, spin);
}
void bm_channel_sw_per_item(benchmark::State& st) { bm_per_item<sw>(st, sw_never_bites); }
// The defaults, limit on: what a user gets (the producer is stopped whenever the limit bites).
void bm_channel_sw_per_item_default(benchmark::State& st) { bm_per_item<sw>(st, {}); }
void bm_channel_unlimited_batched(benchmark::State& st) { bm_batched<unlimited>(st, {}); }
void bm_channel_fixed_batched(benchmark::State& st) { bm_batched<fixed>(st, fixed_never_bites); }
void bm_channel_dql_batched(benchmark::State& st) { bm_batched<dql>(st, dql_never_bites); }
void bm_channel_sw_batched(benchmark::State& st) { bm_batched<sw>(st, sw_never_bites); }
void bm_channel_unlimited_per_item_ring16(benchmark::State& st) {
    bm_per_item<unlimited, ring16_t>(st, {});
}
void bm_channel_unlimited_batched_ring16(benchmark::State& st) {
    bm_batched<unlimited, ring16_t>(st, {});
}
void bm_channel_blocking_unlimited(benchmark::State& st) { bm_blocking<unlimited>(st, {}); }
void bm_channel_blocking_fixed(benchmark::State& st) {
    bm_blocking<fixed>(st, fixed_never_bites);
}
void bm_channel_blocking_dql(benchmark::State& st) { bm_blocking<dql>(st, dql_never_bites); }
void bm_channel_blocking_sw(benchmark::State& st) { bm_blocking<sw>(st, sw_never_bites); }
// The defaults, limit on: what a pipeline built on send()/receive() gets, beside
// moodycamel::BlockingReaderWriterQueue (which has no limit).
void bm_channel_blocking_dql_default(benchmark::State& st) { bm_blocking<dql>(st, {}); }
void bm_channel_blocking_sw_default(benchmark::State& st) { bm_blocking<sw>(st, {}); }
void bm_channel_blocking_unlimited_fences(benchmark::State& st) {
    bm_blocking<unlimited>(st, {}, fences);
}
void bm_channel_blocking_dql_fences(benchmark::State& st) {
    bm_blocking<dql>(st, dql_never_bites, fences);
}
void bm_channel_busy_poller_membarrier(benchmark::State& st) {
    bm_busy_poller(st, qlimits::doorbell_barrier::membarrier);
}
void bm_channel_busy_poller_fences(benchmark::State& st) { bm_busy_poller(st, fences); }

// One thread plays both sides, 64 items at a time: no cache-line transfer and no scheduler, so
// the difference from the raw row is the adapter's own instructions (policy calls, barriers).
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
void bm_1thread(benchmark::State& st, const typename Policy::config_type& cfg,
                qlimits::consumer_wait wait = sleep,
                qlimits::doorbell_barrier barrier = qlimits::doorbell_barrier::membarrier) {
    auto ring = std::make_unique<ring_t>();
    auto ch = make_channel<Policy>(*ring, cfg, wait, barrier);
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
// The batched calls on one thread: 64 sends with more = true (a doorbell every 32), then two
// receive_batch of 32 completed per batch. Beside bm_1thread it says whether batching saves the
// adapter's own instructions, apart from the cache lines and the scheduler of two threads
// (issue 8: batched never slower than per item).
template <class Policy>
void bm_1thread_batched(benchmark::State& st, const typename Policy::config_type& cfg) {
    auto ring = std::make_unique<ring_t>();
    auto ch = make_channel<Policy>(*ring, cfg, sleep, qlimits::doorbell_barrier::membarrier);
    std::array<item, 32> buf{};
    item sum = 0;
    for (auto _ : st) {
        for (item i = 0; i < 64; ++i)
            (void)ch->try_send(item{i}, (i + 1) % 32 != 0);
        for (int b = 0; b < 2; ++b) {
            const std::size_t n = ch->try_receive_batch(buf, qlimits::completion::per_batch);
            for (std::size_t j = 0; j < n; ++j) sum += buf[j];
        }
    }
    benchmark::DoNotOptimize(sum);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 64);
}
void bm_channel_1thread_unlimited(benchmark::State& st) { bm_1thread<unlimited>(st, {}); }
void bm_channel_1thread_fixed(benchmark::State& st) { bm_1thread<fixed>(st, fixed_never_bites); }
void bm_channel_1thread_unlimited_batched(benchmark::State& st) {
    bm_1thread_batched<unlimited>(st, {});
}
void bm_channel_1thread_fixed_batched(benchmark::State& st) {
    bm_1thread_batched<fixed>(st, fixed_never_bites);
}
void bm_channel_1thread_dql_batched(benchmark::State& st) {
    bm_1thread_batched<dql>(st, dql_never_bites);
}
void bm_channel_1thread_sw_batched(benchmark::State& st) {
    bm_1thread_batched<sw>(st, sw_never_bites);
}
void bm_channel_1thread_dql(benchmark::State& st) { bm_1thread<dql>(st, dql_never_bites); }
void bm_channel_1thread_unlimited_fences(benchmark::State& st) {
    bm_1thread<unlimited>(st, {}, sleep, fences);
}
void bm_channel_1thread_unlimited_spin(benchmark::State& st) {
    bm_1thread<unlimited>(st, {}, spin);
}
// One item there and back, again and again: the latency a request/response pair of threads
// sees (the waits' back-off and sleeps, not the ring's streaming). Per round trip.
constexpr std::uint64_t trips_per_run = 1U << 14;
template <class Serve, class Ask>
void round_trip(benchmark::State& st, Serve serve, Ask ask) {
    transfer(
        st, serve,
        [&] {
            ask();
            return std::uint64_t{0};
        },
        trips_per_run, "per_trip");
}
void bm_round_trip_raw_ring(benchmark::State& st) {
    auto there = std::make_unique<ring_t>(), back = std::make_unique<ring_t>();
    round_trip(
        st,
        [&] {
            item v = 0;
            for (std::uint64_t k = 0; k < trips_per_run; ++k) {
                spin_until([&] { return there->try_pop(v); });
                spin_until([&] { return back->try_push(item{v}); });
            }
        },
        [&] {
            item v = 0;
            for (std::uint64_t k = 0; k < trips_per_run; ++k) {
                spin_until([&] { return there->try_push(item{k}); });
                spin_until([&] { return back->try_pop(v); });
            }
        });
}
#if QLIMITS_BENCH_MOODYCAMEL
void bm_round_trip_moodycamel_blocking(benchmark::State& st) {
    moodycamel::BlockingReaderWriterQueue<item> there(1024), back(1024);
    round_trip(
        st,
        [&] {
            item v = 0;
            for (std::uint64_t k = 0; k < trips_per_run; ++k) {
                there.wait_dequeue(v);
                spin_until([&] { return back.try_enqueue(item{v}); });
            }
        },
        [&] {
            item v = 0;
            for (std::uint64_t k = 0; k < trips_per_run; ++k) {
                spin_until([&] { return there.try_enqueue(item{k}); });
                back.wait_dequeue(v);
            }
        });
}
#endif
template <class Policy>
void bm_round_trip_channel(benchmark::State& st, const typename Policy::config_type& cfg) {
    auto r1 = std::make_unique<ring_t>(), r2 = std::make_unique<ring_t>();
    auto there = make_channel<Policy>(*r1, cfg, qlimits::consumer_wait::sleep,
                                      qlimits::doorbell_barrier::membarrier);
    auto back = make_channel<Policy>(*r2, cfg, qlimits::consumer_wait::sleep,
                                     qlimits::doorbell_barrier::membarrier);
    round_trip(
        st,
        [&] {
            item v = 0;
            for (std::uint64_t k = 0; k < trips_per_run; ++k) {
                (void)there->receive(v);
                (void)back->send(item{v});
            }
        },
        [&] {
            item v = 0;
            for (std::uint64_t k = 0; k < trips_per_run; ++k) {
                (void)there->send(item{k});
                (void)back->receive(v);
            }
        });
}
void bm_round_trip_channel_unlimited(benchmark::State& st) {
    bm_round_trip_channel<qlimits::unlimited<>>(st, {});
}
// dql with its defaults: the limit on (one item in flight is within any limit).
void bm_round_trip_channel_dql(benchmark::State& st) {
    bm_round_trip_channel<qlimits::dql<>>(st, {});
}
} // namespace

#define QLIMITS_CHANNEL_BENCH(fn) BENCHMARK(fn)->UseRealTime()->Unit(benchmark::kMillisecond)
QLIMITS_CHANNEL_BENCH(bm_channel_raw_ring);
QLIMITS_CHANNEL_BENCH(bm_channel_raw_ring_backoff);
#if QLIMITS_BENCH_MOODYCAMEL
QLIMITS_CHANNEL_BENCH(bm_channel_raw_moodycamel);
QLIMITS_CHANNEL_BENCH(bm_channel_raw_moodycamel_blocking);
#endif
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_per_item);
QLIMITS_CHANNEL_BENCH(bm_channel_fixed_per_item);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_per_item);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_per_item_fences);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_per_item_fences);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_per_item_spin);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_per_item_spin);
QLIMITS_CHANNEL_BENCH(bm_channel_sw_per_item);
QLIMITS_CHANNEL_BENCH(bm_channel_sw_per_item_default);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_batched);
QLIMITS_CHANNEL_BENCH(bm_channel_fixed_batched);
QLIMITS_CHANNEL_BENCH(bm_channel_dql_batched);
QLIMITS_CHANNEL_BENCH(bm_channel_sw_batched);
QLIMITS_CHANNEL_BENCH(bm_channel_raw_ring16);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_per_item_ring16);
QLIMITS_CHANNEL_BENCH(bm_channel_unlimited_batched_ring16);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_unlimited);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_fixed);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_dql);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_sw);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_dql_default);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_sw_default);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_unlimited_fences);
QLIMITS_CHANNEL_BENCH(bm_channel_blocking_dql_fences);
QLIMITS_CHANNEL_BENCH(bm_channel_busy_poller_membarrier);
QLIMITS_CHANNEL_BENCH(bm_channel_busy_poller_fences);
QLIMITS_CHANNEL_BENCH(bm_round_trip_raw_ring);
#if QLIMITS_BENCH_MOODYCAMEL
QLIMITS_CHANNEL_BENCH(bm_round_trip_moodycamel_blocking);
#endif
QLIMITS_CHANNEL_BENCH(bm_round_trip_channel_unlimited);
QLIMITS_CHANNEL_BENCH(bm_round_trip_channel_dql);
BENCHMARK(bm_channel_1thread_raw_ring);
BENCHMARK(bm_channel_1thread_unlimited);
BENCHMARK(bm_channel_1thread_fixed);
BENCHMARK(bm_channel_1thread_unlimited_batched);
BENCHMARK(bm_channel_1thread_fixed_batched);
BENCHMARK(bm_channel_1thread_dql_batched);
BENCHMARK(bm_channel_1thread_sw_batched);
BENCHMARK(bm_channel_1thread_dql);
BENCHMARK(bm_channel_1thread_unlimited_fences);
BENCHMARK(bm_channel_1thread_unlimited_spin);
