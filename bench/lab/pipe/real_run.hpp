// One real run of the pipeline: a producer thread and a consumer thread move items through
// qlimits::channel over the lab's SPSC ring, with one policy from the registry, for a warm-up
// and then a measured window. What is measured, and how it is kept honest:
//  - sojourn is the time an item spent in the ring: the ring stamps it at the push that
//    succeeds and at the pop (pipe/spsc_ring.hpp), so neither the channel's calls around them
//    (accounting, doorbell, waking the other side) nor a blocked send()'s wait for room is in
//    it; the producer's wait from an item being ready to its entry is reported apart
//    (send_wait, over every send of the window: 0-1 us for the sends that did not block in a
//    flood). Ready: when the producer got round to it in a flood; its due time when paced,
//    its burst's release in bursts, so both count the wait behind items a limit held back.
//    (Paced is open loop: items fall due on a schedule. Bursts are closed loop: a burst is
//    released a gap after the previous one was sent, so a delay a limit adds to the next
//    release is in neither the send wait nor a schedule); to_work is push to the start of the
//    item's work, the wait in the consumer's batch behind the items taken before it included
//    (interpolated within a take from its last pop and the end of its work);
//  - inflight is time-weighted: each side integrates its own count over the window (the
//    producer at each entry stamp, which the ring hands back, the consumer at each take
//    stamp), and the window's items are counted by their take stamps. Little's law then
//    compares that mean with the items' residence times (each clipped to the window). Both
//    come from the same stamps, so the law holds by construction for items that are counted
//    once on each side: the check is one of transport (no item lost, duplicated or counted on
//    one side only), not of the stamps themselves;
//  - CPU per item comes from each thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) read by that
//    thread at the window's edges, less the producer's pacing: its naps and spin to each due
//    time (paced) and its sleep between bursts (pacing_timer below);
//    wake-ups and stops from the channel's own counters, read by a third thread at the edges
//    and divided by the time between the two readings (producer_wakeups counts every restart
//    of a stopped producer, one still polling included; producer_waits its futex sleeps);
//  - conservation: every item sent is taken, or found in the ring after both threads stopped,
//    and the policy's books are back to zero after the drain.
#pragma once

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
#include "pipe/pacing.hpp"
#include "pipe/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/capture/recorder.hpp"
#include "sim/registry.hpp"
#include "sim/result.hpp"
#include "sim/stats.hpp"

namespace lab::pipe {

/// This thread's CPU time (user + system), from its CPU clock: exact to the nanosecond where
/// getrusage(RUSAGE_THREAD) moves in scheduler ticks (25-31 % off over a 10 ms window here).
inline std::uint64_t thread_cpu_ns() noexcept { return busy_work::cpu_ns(); }


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
    sim::histogram sojourn;   ///< push to pop, items taken inside the window
    sim::histogram to_work;   ///< push to the start of the item's work (sojourn + batch wait)
    sim::histogram send_wait; ///< ready to entry, every send entering inside the window
    std::uint64_t over = 0;
    double inflight_mean = 0;
    std::uint64_t producer_cpu_ns = 0, consumer_cpu_ns = 0;
    std::uint64_t stops = 0, producer_wakeups = 0, consumer_wakeups = 0;
    std::uint64_t producer_waits = 0, consumer_sleeps = 0; ///< futex sleeps of each side
    double counters_seconds = 0; ///< between the two readings of the channel's counters
    std::optional<std::uint32_t> limit_final; ///< the limit at the window's end
    std::vector<std::string> failures;
};

namespace detail {
struct item {
    std::uint64_t entry_ns = 0; ///< stamped by the ring at the push
    std::uint64_t take_ns = 0;  ///< stamped by the ring at the pop
    std::uint64_t seq = 0;
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
    pacing_timer pacing; // the producer's CPU spent pacing itself (paced, bursts)
    sim::area_t p_area = 0; // item-ns from each entry in the window to the window's end
    // Consumer books.
    std::uint64_t taken = 0, taken_before = 0, c_cpu0 = 0, c_cpu1 = 0, checksum = 0;
    sim::area_t c_area = 0;    // item-ns from each take in the window to the window's end
    sim::area_t residence = 0; // item-ns items spent in the ring inside the window
    const auto threshold = static_cast<std::uint64_t>(s.threshold_us * 1000);

    std::thread producer([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        bool in = false;
        const double gap_ns = 1e9 / s.rate;
        auto due = static_cast<double>(t0);
        std::uint64_t released = 0; // bursts: when the current burst was released
        for (std::uint64_t seq = 0;; ++seq) {
            std::uint64_t t = now_ns();
            if (t >= w1) break;
            if (!in && t >= w0) {
                in = true;
                p_cpu0 = thread_cpu_ns();
            }
            if (s.pattern == 1 && seq > 0 && seq % s.burst == 0) {
                // The gap, cut at the window's end (a gap longer than the window would
                // otherwise keep the run going after it). Its sleep call is pacing, not sending.
                const auto gap = static_cast<std::uint64_t>(s.burst_gap_us * 1000);
                if (gap > 0) pacing.begin(in);
                std::this_thread::sleep_for(
                    std::chrono::nanoseconds{static_cast<std::int64_t>(std::min(gap, w1 - t))});
                if (gap > 0) pacing.end(in);
                if ((t = now_ns()) >= w1) break;
            }
            if (s.pattern == 1 && seq % s.burst == 0) released = t;
            if (s.pattern == 2) {
                // The next item's due time, also cut at the window's end. The wait for it is
                // pacing, not the cost of sending: left out of the producer's CPU (pacing_timer).
                due += gap_ns;
                std::uint64_t last = now_ns();
                t = last;
                const bool long_wait = due - static_cast<double>(t) > pacing_timer::long_ns;
                if (long_wait) pacing.begin(in);
                while (static_cast<double>(t) < due && t < w1) {
                    if (due - static_cast<double>(t) > 200'000) {
                        std::this_thread::sleep_for(std::chrono::microseconds{100});
                        last = t = now_ns();
                        continue;
                    }
                    t = now_ns();
                    if (in && !long_wait) pacing.add_spin(t - last);
                    last = t;
                }
                if (long_wait) pacing.end(in);
                if (t >= w1) break;
            }
            unsigned char* p = &pool[(seq % pool_slots) * s.item_bytes];
            std::fill(p, p + s.item_bytes, static_cast<unsigned char>(seq));
            // When the item was there to send: its due time (paced) or its burst's release
            // (bursts), so a wait behind earlier items a limit held back counts; in a flood,
            // when the producer got round to it. (Until 2026-12-05 always the latter: a paced
            // run's send_wait left out items entering 167 ms late behind dql-item's stops.)
            const std::uint64_t got_round = now_ns();
            std::uint64_t ready = got_round;
            if (s.pattern == 1) ready = released;
            if (s.pattern == 2) ready = static_cast<std::uint64_t>(due);
            if (ready > got_round) ready = got_round;
            // The capture keeps when the producer got round to the item: whatif prices a send
            // from `entered - wanted` (its 10th percentile), which a due time would fill with
            // queueing (so an open-loop capture's arrivals carry the captured policy's hold).
            if (log != nullptr) log->wanted();
            qlimits::send_status r = ch.try_send(item{0, 0, seq});
            if (r == qlimits::send_status::over_limit || r == qlimits::send_status::ring_full)
                r = ch.send(item{0, 0, seq});
            if (r != qlimits::send_status::ok) break;
            if (log != nullptr) log->sent();
            ++sent;
            const std::uint64_t entry = ring.last_entry_ns();
            if (entry < w0) ++sent_before;
            else if (entry < w1) p_area += w1 - entry;
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
            const std::uint64_t t = buf[n - 1].take_ns;
            if (!started && t >= w0) {
                started = true;
                c_cpu0 = thread_cpu_ns();
            }
            if (started && !ended && t >= w1) {
                ended = true;
                c_cpu1 = thread_cpu_ns();
            }
            taken += n;
            for (std::size_t i = 0; i < n; ++i) {
                const item& it = buf[i];
                const std::uint64_t from = std::max(it.entry_ns, w0), to = std::min(it.take_ns, w1);
                if (to > from) residence += to - from;
                if (it.take_ns < w0) {
                    ++taken_before;
                } else if (it.take_ns < w1) {
                    c_area += w1 - it.take_ns;
                    ++m.items;
                    const std::uint64_t soj = it.take_ns > it.entry_ns ? it.take_ns - it.entry_ns : 0;
                    m.sojourn.add(soj);
                    if (soj > threshold) ++m.over;
                }
                const unsigned char* p = &pool[(it.seq % pool_slots) * s.item_bytes];
                for (std::size_t b = 0; b < s.item_bytes; b += 8) checksum += p[b];
                work.run(s.work_ns);
            }
            // An item's wait does not end at its pop: it waits in buf until the items taken
            // before it are worked. Its work starts at the take's last pop plus its share of
            // the take's work (interpolated: one clock read per take, not per item).
            const std::uint64_t worked_to = now_ns();
            const std::uint64_t work_from = std::min(t, worked_to);
            for (std::size_t i = 0; i < n; ++i) {
                const item& it = buf[i];
                if (it.take_ns < w0 || it.take_ns >= w1) continue;
                const std::uint64_t start = work_from + (worked_to - work_from) * i / n;
                m.to_work.add(start > it.entry_ns ? start - it.entry_ns : 0);
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
    // The channel's counters at the window's edges (this thread wakes a little late: the
    // rates divide by the time between the readings, not by the window).
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point{std::chrono::nanoseconds{w0}});
    const auto st0 = ch.stats();
    const std::uint64_t st0_ns = now_ns();
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point{std::chrono::nanoseconds{w1}});
    const auto st1 = ch.stats();
    const std::uint64_t st1_ns = now_ns();
    producer.join();
    consumer.join();

    m.seconds = static_cast<double>(w1 - w0) / 1e9;
    // The area under the ring's count inside the window, in exact integers: the items inside
    // at its start for the whole window, plus each entry's rest of it, less each take's.
    const sim::area_t window_ns = w1 - w0;
    const sim::area_t area_up = sent_before * window_ns + p_area;
    const sim::area_t area_down = taken_before * window_ns + c_area;
    const sim::area_t area = area_up >= area_down ? area_up - area_down : 0;
    if (area_up < area_down)
        m.failures.emplace_back("the ring's count went below zero inside the window: more "
                                "takes than entries were stamped");
    m.inflight_mean = static_cast<double>(area) / static_cast<double>(window_ns);
    m.producer_cpu_ns = p_cpu1 - p_cpu0 - std::min(pacing.total(), p_cpu1 - p_cpu0);
    m.consumer_cpu_ns = c_cpu1 - c_cpu0;
    m.stops = st1.stops - st0.stops;
    m.producer_wakeups = st1.producer_wakeups - st0.producer_wakeups;
    m.consumer_wakeups = st1.consumer_wakeups - st0.consumer_wakeups;
    m.producer_waits = st1.producer_waits - st0.producer_waits;
    m.consumer_sleeps = st1.consumer_sleeps - st0.consumer_sleeps;
    m.counters_seconds = static_cast<double>(std::max<std::uint64_t>(st1_ns - st0_ns, 1)) / 1e9;
    if (cfg.impl->limit()) m.limit_final = st1.limit; // read at the window's end, not after the drain

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
    // Little's law over the window, as an identity (each item's stay clipped to the window,
    // items still in the ring at its end included): any difference is an item counted on one
    // side only, lost or duplicated, whatever the window's length.
    sim::check_little_clipped(tmp, area, residence, sim::window{w0, w1});
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
    // A figure over an empty set is absent ("-" in the table), not 0.
    const auto us_of = [](const sim::histogram& h, double v) {
        return h.count() > 0 ? v / 1000 : std::optional<double>{};
    };
    const auto per_s = [&](std::uint64_t n) {
        return static_cast<double>(n) / m.counters_seconds;
    };
    r.set("throughput_pps", items / m.seconds);
    r.set("inflight_mean", m.inflight_mean);
    if (m.limit_final) r.set("limit_final", *m.limit_final);
    r.set("sojourn_mean_us", us_of(m.sojourn, m.sojourn.mean()));
    r.set("sojourn_p50_us", us_of(m.sojourn, m.sojourn.quantile(0.5)));
    r.set("sojourn_p99_us", us_of(m.sojourn, m.sojourn.quantile(0.99)));
    r.set("sojourn_max_us", us_of(m.sojourn, static_cast<double>(m.sojourn.max())));
    r.set("sojourn_over_threshold",
          m.sojourn.count() > 0 ? static_cast<double>(m.over) / m.sojourn.count()
                                : std::optional<double>{});
    r.set("producer_stops_per_s", per_s(m.stops));
    r.set("producer_wakeups_per_s", per_s(m.producer_wakeups));
    r.set("consumer_wakeups_per_s", per_s(m.consumer_wakeups));
    r.set("producer_sleeps_per_s", per_s(m.producer_waits));
    r.set("consumer_sleeps_per_s", per_s(m.consumer_sleeps));
    r.set("to_work_p99_us", us_of(m.to_work, m.to_work.quantile(0.99)));
    r.set("producer_cpu_ns_per_item", per_item(m.producer_cpu_ns));
    r.set("consumer_cpu_ns_per_item", per_item(m.consumer_cpu_ns));
    r.set("cpu_util", static_cast<double>(m.consumer_cpu_ns) / (m.seconds * 1e9));
    r.set("send_wait_mean_us", us_of(m.send_wait, m.send_wait.mean()));
    r.set("send_wait_p99_us", us_of(m.send_wait, m.send_wait.quantile(0.99)));
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
