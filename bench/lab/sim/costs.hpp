// Costs charged where they fall, for the software-ring scenarios (veth-bql, thread-ring).
//
// A wake-up is not only a delay. The side that wakes the other spends CPU on it (a futex wake
// system call, an IPI, raising a softirq): `wake-call-ns`, charged to the waker. The side that
// goes to sleep spends CPU getting there and back (the wait system call, two context switches,
// the channel's membarrier before it sleeps): `sleep-call-ns`, charged to the sleeper. Between
// the wake and the woken side running again passes `*-wake-ns` of scheduler latency: time, not
// CPU. And items cost more once the ring's footprint (items held x bytes each) outgrows the
// cache they would be read from: each item then misses with probability 1 - cache/footprint and
// pays `miss-ns` (the consumer reads what the producer wrote; the producer's side is left out).
//
// side_books counts one side's CPU and wake-ups over the measurement window; sojourn_books the
// time items spend in the ring. report_costs() writes the metrics every software-ring scenario
// shows: CPU ns per item for each side, wake-ups/s of each side, sojourn p50/p99/max and the
// fraction of items over --sojourn-threshold-us.
#pragma once

#include <cstdint>
#include <vector>

#include "engine.hpp"
#include "params.hpp"
#include "result.hpp"
#include "stats.hpp"

namespace lab::sim {

/// The cache term's parameters, the same in every software-ring scenario.
inline std::vector<param_spec> cache_params() {
    return {
        {"cache-bytes", "1048576", 0, 1e12, false, false, {}, "bytes",
         "1 MiB: L2 per core of common servers (Intel Xeon Skylake-SP to Sapphire Rapids: 1-2 "
         "MiB; AMD Zen 2-4: 0.5-1 MiB)"},
        {"miss-ns", "90", 0, 1e6, false, false, {}, "ns",
         "~90 ns: idle DRAM load latency of such servers (Intel MLC, vendor figures 80-100 ns)"},
    };
}

/// Extra consumer cost per item when `held` items of `item_bytes` each outgrow `cache_bytes`.
inline double cache_miss_ns(double held, double item_bytes, double cache_bytes, double miss_ns) {
    const double footprint = held * item_bytes;
    if (footprint <= cache_bytes || footprint <= 0) return 0.0;
    return miss_ns * (1.0 - cache_bytes / footprint);
}

/// One side's CPU time and wake-ups, counted inside the window.
struct side_books {
    window w;
    ns_t cpu_ns = 0;
    std::uint64_t woken = 0;  ///< times the other side woke this one
    std::uint64_t sleeps = 0; ///< times this side went to sleep
    void busy(ns_t now, ns_t d) { cpu_ns += w.overlap(now, now + d); }
    void wake(ns_t now) {
        if (w.contains(now)) ++woken;
    }
    void sleep(ns_t now) {
        if (w.contains(now)) ++sleeps;
    }
};

/// Time items spend in the ring (entry to being taken), and how many exceed a threshold.
struct sojourn_books {
    window w;
    ns_t threshold_ns = 0;
    histogram h{};
    std::uint64_t over = 0;
    void add(ns_t now, ns_t sojourn) {
        if (!w.contains(now)) return;
        h.add(sojourn);
        if (sojourn > threshold_ns) ++over;
    }
};

/// The cost and sojourn metrics of a software-ring run.
inline void report_costs(run_result& r, const side_books& producer, const side_books& consumer,
                         std::uint64_t items, const sojourn_books& s) {
    const double secs = producer.w.seconds();
    const auto per_item = [&](ns_t cpu) {
        return items > 0 ? static_cast<double>(cpu) / static_cast<double>(items)
                         : std::optional<double>{};
    };
    r.set("producer_cpu_ns_per_item", per_item(producer.cpu_ns));
    r.set("consumer_cpu_ns_per_item", per_item(consumer.cpu_ns));
    r.set("producer_wakeups_per_s", static_cast<double>(producer.woken) / secs);
    r.set("consumer_wakeups_per_s", static_cast<double>(consumer.woken) / secs);
    r.set("sojourn_mean_us", mean_us(s.h));
    r.set("sojourn_p50_us", quantile_us(s.h, 0.50));
    r.set("sojourn_p99_us", quantile_us(s.h, 0.99));
    r.set("sojourn_max_us", max_us(s.h));
    r.set("sojourn_over_threshold",
          s.h.count() > 0 ? static_cast<double>(s.over) / s.h.count() : std::optional<double>{});
}

} // namespace lab::sim
