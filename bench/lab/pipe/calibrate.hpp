// Measuring this machine for the thread-ring scenario: what a futex wake-up costs and how long
// it takes, what the channel's pre-sleep barrier costs, what each side spends per item besides
// the work, and how exact the busy loop is. Each figure is a median (or a ratio of CPU clocks)
// so one preemption does not set it. The per-item costs come from real pipeline runs (the same
// code the pipeline times), minus the wake-ups measured separately.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pipe/busy_work.hpp"
#include "pipe/real_run.hpp"
#include "qlimits/detail/asymmetric_barrier.hpp"
#include "qlimits/detail/futex.hpp"
#include "sim/registry.hpp"

namespace lab::pipe {

struct machine {
    double wake_ns = 0;          ///< notify of a sleeping thread to that thread running (median)
    double wake_call_ns = 0;     ///< the notify call itself, on the waker (median)
    double sleep_call_ns = 0;    ///< sleeper's CPU per sleep + wake (the wait call, switches)
    double barrier_ns = 0;       ///< membarrier before the consumer sleeps (0 if not used)
    double producer_ns = 0;      ///< producer CPU per item besides wake calls
    double consumer_item_ns = 0; ///< consumer CPU per item besides work-ns and wake calls
    double work_scale = 1;       ///< busy loop's real CPU time / requested
};


inline double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

/// Futex ping-pong through the channel's own calls (qlimits/detail/futex.hpp: FUTEX_WAIT_BITSET
/// and FUTEX_WAKE on the state word, no spin before the system call; the channel's polling
/// before it decides to sleep is its own, and not part of this figure). The waker pauses first
/// so the other thread is really asleep when woken.
inline void measure_wakeups(machine& m, int rounds = 400) {
    std::atomic<std::uint32_t> flag{0}, sleepers{0};
    std::atomic<std::uint64_t> sent_at{0};
    std::vector<double> latency, call;
    std::uint64_t sleeper_cpu = 0;
    std::thread sleeper([&] {
        const std::uint64_t c0 = busy_work::cpu_ns();
        for (int i = 0; i < rounds; ++i) {
            (void)qlimits::detail::wait_until(flag, sleepers, 0, nullptr);
            latency.push_back(static_cast<double>(now_ns() - sent_at.load(std::memory_order_relaxed)));
            flag.store(0, std::memory_order_release); // the waker polls for this edge (below)
        }
        sleeper_cpu = busy_work::cpu_ns() - c0;
    });
    for (int i = 0; i < rounds; ++i) {
        std::this_thread::sleep_for(std::chrono::microseconds{200});
        sent_at.store(now_ns(), std::memory_order_relaxed);
        const std::uint64_t t0 = now_ns();
        flag.exchange(1, std::memory_order_seq_cst); // as the channel changes a state it wakes on
        qlimits::detail::wake(flag, sleepers, false);
        call.push_back(static_cast<double>(now_ns() - t0));
        while (flag.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    }
    sleeper.join();
    m.wake_ns = median_of(latency);
    m.wake_call_ns = median_of(call);
    // The sleeper's CPU per round: the wait (the system call, the switches there and back),
    // plus a clock read and a store (tens of ns, left in).
    m.sleep_call_ns = static_cast<double>(sleeper_cpu) / rounds;
}

/// membarrier(PRIVATE_EXPEDITED) as the consumer runs it before a sleep: with another thread of
/// the process running (the producer, in the pipeline), so the kernel interrupts its CPU. With
/// no other thread running the call sends no interrupt and measures short.
inline void measure_barrier(machine& m) {
    if (!qlimits::detail::asymmetric_barrier::available()) {
        m.barrier_ns = 0;
        return;
    }
    std::atomic<bool> stop{false};
    std::thread sibling([&] {
        while (!stop.load(std::memory_order_relaxed)) qlimits::detail::cpu_relax();
    });
    std::vector<double> v;
    bool ok = true;
    for (int i = 0; i < 200 && ok; ++i) {
        const std::uint64_t t0 = now_ns();
        ok = qlimits::detail::asymmetric_barrier::heavy(); // failed: none to measure
        v.push_back(static_cast<double>(now_ns() - t0));
    }
    stop.store(true, std::memory_order_relaxed);
    sibling.join();
    m.barrier_ns = ok ? median_of(v) : 0;
}

/// The busy loop's real CPU time over the requested, at the runs' own work per item (`ns`; 500
/// where that is 0), over up to 20,000 items and 10 ms: a scale taken at 500 ns was applied to
/// every size (a review, 2026-12-06).
inline void measure_work(machine& m, const busy_work& work, double ns) {
    if (ns <= 0) ns = 500;
    const int n = static_cast<int>(std::clamp(1e7 / ns, 10.0, 20000.0));
    const std::uint64_t c0 = busy_work::cpu_ns();
    for (int i = 0; i < n; ++i) work.run(ns);
    m.work_scale = static_cast<double>(busy_work::cpu_ns() - c0) / (n * ns);
}

/// Per-item costs from two short real runs with policy none and the caller's ring, batch and
/// item size (what the twin will run with): a fast consumer (work 0) for the producer's cost, a
/// slow one (work 2 us, the ring stays full) for the consumer's. The futex calls are taken out,
/// counted by the channel's sleep counters (a sleep is one sleep call on the sleeper and one
/// wake call on the other side). A figure that comes out below zero (wake-ups measured dearer
/// in isolation than in the run) is reported, and set to its least value, not hidden.
inline void measure_items(machine& m, const busy_work& work, const workload& base) {
    const sim::policy_entry* none = sim::find_policy("none");
    sim::policy_row row{"none", none->help, none, sim::completion_mode::per_poll, std::nullopt};
    const sim::param_values values{};
    workload w;
    w.ring = base.ring;
    w.batch = base.batch;
    w.item_bytes = base.item_bytes;
    w.warmup_ms = 50;
    w.duration_ms = 200;
    w.work_ns = 0;
    const auto warn = [](const char* what, double v) {
        std::fprintf(stderr,
                     "calibrate: %s came out at %.0f ns per item (the wake-ups' costs measured in "
                     "isolation exceed the run's CPU); using its least value\n",
                     what, v);
    };
    const measured fast = run_real(w, row, values, work);
    const double fi = static_cast<double>(std::max<std::uint64_t>(fast.items, 1));
    const double p = (static_cast<double>(fast.producer_cpu_ns) -
                      static_cast<double>(fast.consumer_sleeps) * m.wake_call_ns -
                      static_cast<double>(fast.producer_waits) * m.sleep_call_ns) / fi;
    if (p < 0) warn("producer-ns", p);
    m.producer_ns = std::max(1.0, p); // thread-ring's producer-ns is at least 1 ns
    w.work_ns = 2000;
    const measured slow = run_real(w, row, values, work);
    const double si = static_cast<double>(std::max<std::uint64_t>(slow.items, 1));
    const double c = (static_cast<double>(slow.consumer_cpu_ns) -
                      static_cast<double>(slow.producer_waits) * m.wake_call_ns -
                      static_cast<double>(slow.consumer_sleeps) * m.sleep_call_ns) / si -
                     w.work_ns * m.work_scale;
    if (c < 0) warn("consumer-item-ns", c);
    m.consumer_item_ns = std::max(0.0, c);
}

/// Everything above, the per-item costs with the caller's ring, batch and item size.
inline machine measure_machine(const busy_work& work, const workload& base = {}) {
    machine m;
    measure_work(m, work, base.work_ns);
    measure_wakeups(m);
    measure_barrier(m);
    measure_items(m, work, base);
    return m;
}

/// The thread-ring parameters the measurement gives.
inline std::vector<std::pair<std::string, double>> as_params(const machine& m) {
    return {{"wake-ns", m.wake_ns},           {"wake-call-ns", m.wake_call_ns},
            {"sleep-call-ns", m.sleep_call_ns}, {"barrier-ns", m.barrier_ns},
            {"producer-ns", m.producer_ns},   {"consumer-item-ns", m.consumer_item_ns},
            {"work-scale", m.work_scale}};
}

inline std::string describe(const machine& m) {
    std::string out;
    char buf[160];
    for (const auto& [name, value] : as_params(m)) {
        std::snprintf(buf, sizeof buf, "  --%s=%.4g\n", name.c_str(), value);
        out += buf;
    }
    return out;
}

} // namespace lab::pipe
