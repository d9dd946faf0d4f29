// One real run of the pipeline: a producer thread and a consumer thread move items through
// qlimits::channel over the lab's SPSC ring, with one policy from the registry, for a warm-up
// and then a measured window. What is measured, and how it is kept honest:
//  - sojourn runs from the moment an item enters the ring: an item whose send was refused is
//    sent again by the blocking send(); its entry is the moment send() returned (or the
//    consumer's take, if that came first, so within one doorbell); the time the producer was
//    blocked is reported apart (send_wait);
//  - inflight is time-weighted: each side integrates its own count over the window (the
//    producer at each entry, the consumer at each take); Little's law compares it with the
//    items' own residence times (each clipped to the window, so a short window has no edge
//    error): two independently kept books that agree only if no item is lost or mis-stamped;
//  - CPU per item comes from getrusage(RUSAGE_THREAD) taken by each thread at the window's
//    edges; wake-ups and stops from the channel's own counters at the same edges;
//  - conservation: every item sent is taken, or found in the ring after both threads stopped,
//    and the policy's books are back to zero after the drain.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "pipe/busy_work.hpp"
#include "pipe/erased_policy.hpp"
#include "pipe/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/capture/recorder.hpp"
#include "sim/registry.hpp"
#include "sim/result.hpp"
#include "sim/stats.hpp"

namespace lab::pipe {

inline std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

/// This thread's CPU time (user + system) so far, from getrusage(RUSAGE_THREAD).
inline std::uint64_t thread_cpu_ns() noexcept {
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    const auto us = [](const timeval& t) {
        return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000 + static_cast<std::uint64_t>(t.tv_usec);
    };
    return (us(ru.ru_utime) + us(ru.ru_stime)) * 1000;
}

struct workload {
    std::size_t ring = 256, item_bytes = 64, batch = 64, burst = 64;
    double work_ns = 500, burst_gap_us = 100, rate = 1e6, threshold_us = 100;
    int pattern = 0; // 0 flood, 1 bursts, 2 paced
    std::uint64_t warmup_ms = 200, duration_ms = 1000;

    static workload from(const sim::param_values& v) {
        workload w;
        w.ring = static_cast<std::size_t>(v.at("ring"));
        w.item_bytes = static_cast<std::size_t>(v.at("item-bytes"));
        w.batch = static_cast<std::size_t>(v.at("batch"));
        w.burst = static_cast<std::size_t>(v.at("burst"));
        w.work_ns = v.at("work-ns");
        w.burst_gap_us = v.at("burst-gap-us");
        w.rate = v.at("rate");
        w.threshold_us = v.at("sojourn-threshold-us");
        w.pattern = static_cast<int>(v.at("pattern"));
        w.warmup_ms = static_cast<std::uint64_t>(v.at("warmup-ms"));
        w.duration_ms = static_cast<std::uint64_t>(v.at("duration-ms"));
        return w;
    }
};

/// What one run measured inside its window.
struct measured {
    std::uint64_t items = 0; ///< taken inside the window
    double seconds = 0;
    sim::histogram sojourn, send_wait;
    std::uint64_t over = 0;
    double inflight_mean = 0;
    std::uint64_t producer_cpu_ns = 0, consumer_cpu_ns = 0;
    std::uint64_t stops = 0, producer_wakeups = 0, consumer_wakeups = 0;
    std::optional<std::uint32_t> limit_final;
    std::vector<std::string> failures;
};

namespace detail {
struct item {
    std::uint64_t stamp_ns = 0; ///< entry time; for a blocked send, the time it was refused
    std::uint64_t seq = 0;
    bool blocked = false;       ///< entry time kept by the producer (send() blocked)
};
struct stamp {
    std::uint64_t seq, ns;
    bool in_window;
};
} // namespace detail

/// One run with the channel's policy P: erased_policy, or it wrapped in qlimits::capturing
/// (a capture of the run in `log`).
template <class P>
measured run_real_with(const workload& s, const sim::policy_row& row,
                       const sim::param_values& values, const busy_work& work,
                       qlimits::capture_log* log) {
    using detail::item;
    spsc_ring<item> ring{s.ring};
    const erased_policy::config_type cfg{sim::make_policy(row, values)};
    typename P::config_type channel_cfg{};
    if constexpr (std::is_same_v<P, erased_policy>)
        channel_cfg = cfg;
    else
        channel_cfg = {cfg, log};
    const qlimits::completion mode = row.completion == sim::completion_mode::per_item
                                         ? qlimits::completion::per_item
                                         : qlimits::completion::per_batch;
    qlimits::channel<spsc_ring<item>, P> ch{ring, channel_cfg};
    // Payload lives beside the ring: slot seq % (ring + batch + 1) is not rewritten while the
    // consumer may still read it (ring items queued plus one batch being processed).
    const std::size_t pool_slots = s.ring + s.batch + 1;
    std::vector<unsigned char> pool(pool_slots * s.item_bytes);

    measured m;
    std::atomic<bool> go{false};
    std::uint64_t t0 = 0, w0 = 0, w1 = 0;
    // Producer books.
    std::uint64_t sent = 0, sent_before = 0, p_cpu0 = 0, p_cpu1 = 0;
    double p_integral = 0;
    std::vector<detail::stamp> blocked_entries; // (seq, entry) of sends that blocked
    // Consumer books.
    std::uint64_t taken = 0, taken_before = 0, c_cpu0 = 0, c_cpu1 = 0, checksum = 0;
    double c_integral = 0;
    std::vector<detail::stamp> blocked_takes; // (seq, take) of items whose entry the producer has
    double residence = 0; // ns items spent in the ring inside the window (Little's law)
    const auto resident = [&](std::uint64_t entry, std::uint64_t take) {
        const std::uint64_t a = std::max(entry, w0), b = std::min(take, w1);
        return b > a ? static_cast<double>(b - a) : 0.0;
    };
    const auto threshold = static_cast<std::uint64_t>(s.threshold_us * 1000);

    std::thread producer([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        bool in = false;
        const double gap_ns = 1e9 / s.rate;
        auto due = static_cast<double>(t0);
        for (std::uint64_t seq = 0;; ++seq) {
            std::uint64_t t = now_ns();
            if (t >= w1) break;
            if (!in && t >= w0) {
                in = true;
                p_cpu0 = thread_cpu_ns();
            }
            if (s.pattern == 1 && seq > 0 && seq % s.burst == 0) {
                // The gap, cut at the window's end (a gap longer than the window would
                // otherwise keep the run going after it).
                const auto gap = static_cast<std::uint64_t>(s.burst_gap_us * 1000);
                std::this_thread::sleep_for(
                    std::chrono::nanoseconds{static_cast<std::int64_t>(std::min(gap, w1 - t))});
                if (now_ns() >= w1) break;
            }
            if (s.pattern == 2) {
                due += gap_ns;
                while (static_cast<double>(t = now_ns()) < due)
                    if (due - static_cast<double>(t) > 200'000)
                        std::this_thread::sleep_for(std::chrono::microseconds{100});
            }
            unsigned char* p = &pool[(seq % pool_slots) * s.item_bytes];
            std::fill(p, p + s.item_bytes, static_cast<unsigned char>(seq));
            const std::uint64_t ready = now_ns();
            if (log != nullptr) log->wanted();
            qlimits::send_status r = ch.try_send(item{ready, seq, false});
            std::uint64_t entry = ready;
            if (r == qlimits::send_status::over_limit || r == qlimits::send_status::ring_full) {
                r = ch.send(item{ready, seq, true});
                entry = now_ns();
                blocked_entries.push_back({seq, entry, false});
            }
            if (r != qlimits::send_status::ok) break;
            if (log != nullptr) log->sent();
            ++sent;
            if (entry < w0) ++sent_before;
            else if (entry < w1) p_integral += static_cast<double>(w1 - entry);
            if (entry >= w0 && entry < w1) m.send_wait.add(entry - ready);
        }
        p_cpu1 = thread_cpu_ns();
        if (!in) p_cpu0 = p_cpu1;
        ch.close();
    });
    std::thread consumer([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        std::vector<item> buf(s.batch);
        bool started = false, ended = false;
        for (;;) {
            const std::size_t n = ch.receive_batch(std::span<item>{buf}, mode);
            if (n == 0) break;
            const std::uint64_t served_from = log != nullptr ? log->now() : 0;
            const std::uint64_t t = now_ns();
            if (!started && t >= w0) {
                started = true;
                c_cpu0 = thread_cpu_ns();
            }
            if (started && !ended && t >= w1) {
                ended = true;
                c_cpu1 = thread_cpu_ns();
            }
            const bool in = t >= w0 && t < w1;
            taken += n;
            if (t < w0) taken_before += n;
            if (in) {
                c_integral += static_cast<double>(n) * static_cast<double>(w1 - t);
                m.items += n;
            }
            for (std::size_t i = 0; i < n; ++i) {
                if (buf[i].blocked) {
                    blocked_takes.push_back({buf[i].seq, t, in});
                } else {
                    residence += resident(buf[i].stamp_ns, t);
                    if (in) {
                        const std::uint64_t soj = t > buf[i].stamp_ns ? t - buf[i].stamp_ns : 0;
                        m.sojourn.add(soj);
                        if (soj > threshold) ++m.over;
                    }
                }
                const unsigned char* p = &pool[(buf[i].seq % pool_slots) * s.item_bytes];
                for (std::size_t b = 0; b < s.item_bytes; b += 8) checksum += p[b];
                work.run(s.work_ns);
            }
            if (log != nullptr) log->served(static_cast<std::uint32_t>(n), served_from);
        }
        if (!started) c_cpu0 = thread_cpu_ns();
        if (!ended) c_cpu1 = thread_cpu_ns();
    });

    t0 = now_ns();
    w0 = t0 + s.warmup_ms * 1'000'000;
    w1 = w0 + s.duration_ms * 1'000'000;
    go.store(true, std::memory_order_release);
    // The channel's counters at the window's edges.
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point{std::chrono::nanoseconds{w0}});
    const auto st0 = ch.stats();
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point{std::chrono::nanoseconds{w1}});
    const auto st1 = ch.stats();
    producer.join();
    consumer.join();

    // Blocked sends: their entry is the producer's record, or the take if that came first.
    std::sort(blocked_entries.begin(), blocked_entries.end(),
              [](const auto& a, const auto& b) { return a.seq < b.seq; });
    for (const auto& tk : blocked_takes) {
        const auto it = std::lower_bound(blocked_entries.begin(), blocked_entries.end(), tk.seq,
                                         [](const auto& e, std::uint64_t q) { return e.seq < q; });
        const std::uint64_t entry = it != blocked_entries.end() && it->seq == tk.seq
                                        ? std::min(it->ns, tk.ns)
                                        : tk.ns;
        residence += resident(entry, tk.ns);
        if (!tk.in_window) continue;
        m.sojourn.add(tk.ns - entry);
        if (tk.ns - entry > threshold) ++m.over;
    }

    m.seconds = static_cast<double>(w1 - w0) / 1e9;
    const double window_ns = static_cast<double>(w1 - w0);
    const double occupied0 = static_cast<double>(sent_before) - static_cast<double>(taken_before);
    m.inflight_mean = (occupied0 * window_ns + p_integral - c_integral) / window_ns;
    m.producer_cpu_ns = p_cpu1 - p_cpu0;
    m.consumer_cpu_ns = c_cpu1 - c_cpu0;
    m.stops = st1.stops - st0.stops;
    m.producer_wakeups = st1.producer_wakeups - st0.producer_wakeups;
    m.consumer_wakeups = st1.consumer_wakeups - st0.consumer_wakeups;
    if (auto l = cfg.impl->limit()) m.limit_final = *l;

    // Honesty: nothing lost or created; the policy's books are empty after the drain.
    item rest{};
    std::uint64_t left = 0;
    while (ch.try_receive(rest)) ++left;
    if (sent != taken + left) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "conservation (items): %llu sent != %llu taken + %llu left",
                      static_cast<unsigned long long>(sent), static_cast<unsigned long long>(taken),
                      static_cast<unsigned long long>(left));
        m.failures.emplace_back(buf);
    }
    if (ch.inflight() != 0)
        m.failures.emplace_back("policy inflight " + std::to_string(ch.inflight()) +
                                " after every item was taken");
    sim::run_result tmp;
    // Little's law over the window: mean inflight = departures/s x mean residence, with each
    // item's residence clipped to the window (so it holds for any window length).
    if (m.items > 0)
        sim::check_little(tmp, m.inflight_mean, static_cast<double>(m.items) / m.seconds,
                          residence / static_cast<double>(m.items) / 1e9);
    for (auto& f : tmp.failures) m.failures.push_back(std::move(f));
    if (checksum == 0 && s.item_bytes > 0 && sent > 256) // the payload was really read
        m.failures.emplace_back("payload checksum is zero");
    return m;
}

/// The metrics of a real run, under the simulator's names.
inline void report(sim::run_result& r, const measured& m) {
    const double items = static_cast<double>(m.items);
    const auto per_item = [&](std::uint64_t ns) {
        return m.items > 0 ? static_cast<double>(ns) / items : std::optional<double>{};
    };
    r.set("throughput_pps", items / m.seconds);
    r.set("inflight_mean", m.inflight_mean);
    if (m.limit_final) r.set("limit_final", *m.limit_final);
    r.set("sojourn_mean_us", m.sojourn.mean() / 1000);
    r.set("sojourn_p50_us", m.sojourn.quantile(0.5) / 1000);
    r.set("sojourn_p99_us", m.sojourn.quantile(0.99) / 1000);
    r.set("sojourn_max_us", static_cast<double>(m.sojourn.max()) / 1000);
    r.set("sojourn_over_threshold",
          m.sojourn.count() > 0 ? static_cast<double>(m.over) / m.sojourn.count()
                                : std::optional<double>{});
    r.set("producer_stops_per_s", static_cast<double>(m.stops) / m.seconds);
    r.set("producer_wakeups_per_s", static_cast<double>(m.producer_wakeups) / m.seconds);
    r.set("consumer_wakeups_per_s", static_cast<double>(m.consumer_wakeups) / m.seconds);
    r.set("producer_cpu_ns_per_item", per_item(m.producer_cpu_ns));
    r.set("consumer_cpu_ns_per_item", per_item(m.consumer_cpu_ns));
    r.set("cpu_util", static_cast<double>(m.consumer_cpu_ns) / (m.seconds * 1e9));
    r.set("send_wait_mean_us", m.send_wait.mean() / 1000);
    r.set("send_wait_p99_us", m.send_wait.quantile(0.99) / 1000);
}

} // namespace lab::pipe

namespace lab::pipe {
/// One real run; with `log`, also a capture of it (qlimits/capture/recorder.hpp): the policy
/// wrapped in qlimits::capturing, the producer marking wanted/sent, the consumer its service.
/// capturing has no on_taken (a capture records the time of every completion), so a captured
/// run of `sw-*` reads the clock per completion where an uncaptured one reads it on demand.
inline measured run_real(const workload& s, const sim::policy_row& row,
                         const sim::param_values& values, const busy_work& work,
                         qlimits::capture_log* log = nullptr) {
    if (log != nullptr)
        return run_real_with<qlimits::capturing<erased_policy>>(s, row, values, work, log);
    return run_real_with<erased_policy>(s, row, values, work, nullptr);
}
} // namespace lab::pipe
