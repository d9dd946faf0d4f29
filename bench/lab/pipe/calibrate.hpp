// Measuring this machine for the thread-ring scenario: what a futex wake-up costs and how long
// it takes, what the channel's pre-sleep barrier costs, what each side spends per item besides
// the work, and how exact the busy loop is. Each figure is a median (or a ratio of CPU clocks)
// so one preemption does not set it. The per-item costs come from real pipeline runs (the same
// code the pipeline times), minus the wake-ups measured separately.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pipe/busy_work.hpp"
#include "pipe/real_run.hpp"
#include "qlimits/detail/asymmetric_barrier.hpp"
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

/// Futex ping-pong through std::atomic wait/notify, the channel's own mechanism. The waker
/// pauses first so the other thread is really asleep when notified.
inline void measure_wakeups(machine& m, int rounds = 400) {
    std::atomic<std::uint32_t> flag{0};
    std::atomic<std::uint64_t> sent_at{0};
    std::vector<double> latency, call;
    std::uint64_t sleeper_cpu = 0;
    std::thread sleeper([&] {
        const std::uint64_t c0 = busy_work::cpu_ns();
        for (int i = 0; i < rounds; ++i) {
            flag.wait(0, std::memory_order_acquire);
            latency.push_back(static_cast<double>(now_ns() - sent_at.load(std::memory_order_relaxed)));
            flag.store(0, std::memory_order_release);
            flag.notify_one(); // nobody sleeps on this edge: the waker polls (below)
        }
        sleeper_cpu = busy_work::cpu_ns() - c0;
    });
    for (int i = 0; i < rounds; ++i) {
        std::this_thread::sleep_for(std::chrono::microseconds{200});
        sent_at.store(now_ns(), std::memory_order_relaxed);
        const std::uint64_t t0 = now_ns();
        flag.store(1, std::memory_order_release);
        flag.notify_one();
        call.push_back(static_cast<double>(now_ns() - t0));
        while (flag.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    }
    sleeper.join();
    m.wake_ns = median_of(latency);
    m.wake_call_ns = median_of(call);
    // The sleeper's CPU per round: the wait (syscall, switches), plus a notify without a waiter
    // and a clock read (tens of ns, left in).
    m.sleep_call_ns = static_cast<double>(sleeper_cpu) / rounds;
}

inline void measure_barrier(machine& m) {
    if (!qlimits::detail::asymmetric_barrier::available()) {
        m.barrier_ns = 0;
        return;
    }
    std::vector<double> v;
    for (int i = 0; i < 200; ++i) {
        const std::uint64_t t0 = now_ns();
        qlimits::detail::asymmetric_barrier::heavy();
        v.push_back(static_cast<double>(now_ns() - t0));
    }
    m.barrier_ns = median_of(v);
}

inline void measure_work(machine& m, const busy_work& work) {
    constexpr int n = 20000;
    constexpr double ns = 500;
    const std::uint64_t c0 = busy_work::cpu_ns();
    for (int i = 0; i < n; ++i) work.run(ns);
    m.work_scale = static_cast<double>(busy_work::cpu_ns() - c0) / (n * ns);
}

/// Per-item costs from two short real runs with policy none: a fast consumer (work 0) for the
/// producer's cost, a slow one (work 2 us, the ring stays full) for the consumer's.
inline void measure_items(machine& m, const busy_work& work) {
    const sim::policy_entry* none = sim::find_policy("none");
    sim::policy_row row{"none", none->help, none, sim::completion_mode::per_poll, std::nullopt};
    const sim::param_values values{};
    workload w;
    w.warmup_ms = 50;
    w.duration_ms = 200;
    w.work_ns = 0;
    const measured fast = run_real(w, row, values, work);
    const double fi = static_cast<double>(std::max<std::uint64_t>(fast.items, 1));
    m.producer_ns = std::max(1.0, (static_cast<double>(fast.producer_cpu_ns) -
                                   static_cast<double>(fast.consumer_wakeups) * m.wake_call_ns -
                                   static_cast<double>(fast.producer_wakeups) * m.sleep_call_ns) / fi);
    w.work_ns = 2000;
    const measured slow = run_real(w, row, values, work);
    const double si = static_cast<double>(std::max<std::uint64_t>(slow.items, 1));
    m.consumer_item_ns =
        std::max(0.0, (static_cast<double>(slow.consumer_cpu_ns) -
                       static_cast<double>(slow.producer_wakeups) * m.wake_call_ns) / si -
                          w.work_ns * m.work_scale);
}

inline machine measure_machine(const busy_work& work) {
    machine m;
    measure_work(m, work);
    measure_wakeups(m);
    measure_barrier(m);
    measure_items(m, work);
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
