// A captured workload (qlimits/capture/format.hpp) as the thread-ring twin replays it: per item
// the producer's own time before it (closed loop) or its arrival (open loop), its units, and the
// consumer's work on it. What a policy changes (waits, sleeps, wake-ups) is taken out; what it
// does not change (the producer's and the consumer's own work) is kept.
//  - think (closed loop): from the previous send's return to wanting this item (wanted_i -
//    done_{i-1}). It holds whatever the producer does between sends (filling the item, its
//    pattern's sleeps), and also a wake-up call the captured send i-1 made after its entry, if
//    any (the capture cannot tell; see MODEL.md, "whatif");
//  - arrival (open loop): wanted_i - wanted_0, or the arrival before it if that is later (an
//    item is offered no sooner than the one before it; a capture may show an earlier WANTED:
//    the reader requires only ENTERED in order, and a wanted time clamped at 0 before this
//    collapsed the repeat period, review 2026-12-05);
//  - send_pre / send_post: the send's own time before and after the entry, the 10th percentile
//    over the capture (the quickest sends are the ones that did not wait);
//  - service: each `s` record's work (END - START) split evenly over its items, in order;
//  - consumer overhead: what the consumer spent per item outside its work while work was
//    waiting: the gaps between one service's end and the next one's start during which the
//    ring held items (entered and not yet served), summed, over the items of the services
//    that followed them (a mean: throughput is set by the mean, and the gaps have a long tail
//    where the consumer lost its CPU). It holds the channel's receive and completion, any wake-up
//    call the consumer made, and any time it lost its CPU (on a 2-CPU machine the woken producer
//    may run on the consumer's CPU). The replay uses it instead of the calibrated consumer-item-ns
//    unless told otherwise (whatif --overhead=calibrated), less the wake-up calls it holds,
//    which the model charges itself: one wake-call-ns per blocked send (a send that waited at
//    least half the wake-up latency was woken), spread over the items (consumer_overhead()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine.hpp"
#include "qlimits/capture/format.hpp"
#include "qlimits/limits/dql.hpp"

namespace lab::sim {

struct trace_workload {
    std::vector<ns_t> think, arrival;
    std::vector<double> service; ///< ns of consumer work per item
    std::vector<std::uint32_t> units;
    ns_t send_pre = 0, send_post = 0;
    std::optional<double> consumer_gap; ///< ns per item between services; none if never backlogged
    std::vector<ns_t> send_wait;        ///< entered - wanted, per item
    ns_t span = 0;                      ///< first wanted to last entered: the captured run's length
    ns_t period = 0; ///< open loop: a repeat of the trace starts this long after the last
                     ///< (the last arrival plus one mean gap)
    [[nodiscard]] std::size_t size() const noexcept { return units.size(); }
};

inline ns_t low_percentile(std::vector<ns_t> v) {
    if (v.empty())
        return 0;
    const auto k = static_cast<std::ptrdiff_t>(v.size() / 10);
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return v[static_cast<std::size_t>(k)];
}

/// The replayable workload of a capture, or the reason there is none. `work_ns` (if given)
/// replaces the captured service times (a capture without `s` records needs it).
inline std::optional<std::string> make_trace_workload(const qlimits::capture_data& c,
                                                      std::optional<double> work_ns,
                                                      trace_workload& out) {
    out = trace_workload{};
    // First: an empty capture is told it is empty, not that it lacks service records.
    if (c.items.size() < 2)
        return std::string{"the capture has fewer than 2 items"};
    std::vector<double> service;
    if (work_ns) {
        service.assign(c.items.size(), *work_ns);
    } else {
        for (const auto& s : c.services) {
            const double each = static_cast<double>(s.end_ns - s.start_ns) / s.items;
            for (std::uint32_t k = 0; k < s.items && service.size() < c.items.size(); ++k)
                service.push_back(each);
        }
        if (service.empty())
            return std::string{"the capture has no service ('s') records: pass --work-ns"};
    }
    const std::size_t n = std::min(c.items.size(), service.size());
    if (n < 2)
        return std::string{"the capture has fewer than 2 items with a service time"};
    std::vector<ns_t> pre, post;
    const std::uint64_t w0 = c.items[0].wanted_ns;
    ns_t latest = 0; // the running maximum of the arrivals
    for (std::size_t i = 0; i < n; ++i) {
        const auto& it = c.items[i];
        const std::uint64_t prev_done = i == 0 ? it.wanted_ns : c.items[i - 1].done_ns;
        out.think.push_back(it.wanted_ns > prev_done ? it.wanted_ns - prev_done : 0);
        latest = std::max<ns_t>(latest, it.wanted_ns - std::min(w0, it.wanted_ns));
        out.arrival.push_back(latest);
        out.units.push_back(it.units);
        out.service.push_back(service[i]);
        pre.push_back(it.entered_ns - it.wanted_ns);
        out.send_wait.push_back(it.entered_ns - it.wanted_ns);
        post.push_back(it.done_ns - it.entered_ns);
    }
    // An item the policies refuse as too large (channel: send_status::too_large) is not a
    // workload they can be compared on; the format allows up to 2^32 - 1 units.
    for (std::size_t i = 0; i < n; ++i)
        if (out.units[i] > qlimits::dql_max_object)
            return "item " + std::to_string(i + 1) + ": " + std::to_string(out.units[i]) +
                   " units, above the policies' largest item (2^28 - 1, dql's max_object): "
                   "channel would refuse it as too_large";
    // A time no ring shows (a service of 2^64 - 1 ns passes the format's checks) would wrap the
    // engine's nanosecond sums: refuse any item's think, service or waits above 1e15 ns (11.6
    // days, far beyond --duration-ms's 600 s and far below 2^64).
    constexpr double longest_ns = 1e15;
    for (std::size_t i = 0; i < n; ++i)
        if (static_cast<double>(out.think[i]) > longest_ns || out.service[i] > longest_ns ||
            static_cast<double>(pre[i]) > longest_ns || static_cast<double>(post[i]) > longest_ns)
            return "item " + std::to_string(i + 1) +
                   ": a think, service or wait time over 1e15 ns (11.6 days); not a ring's";
    out.send_pre = low_percentile(pre);
    out.send_post = low_percentile(post);
    out.span = c.items[n - 1].entered_ns - std::min(w0, c.items[n - 1].entered_ns);
    if (out.span == 0)
        return std::string{"the capture's items all entered at one instant"};
    double gap_ns = 0, gap_items = 0; // between services while items waited
    std::uint64_t served = 0;
    for (std::size_t k = 0; k + 1 < c.services.size(); ++k) {
        served += c.services[k].items;
        const std::uint64_t end = c.services[k].end_ns;
        const auto entered = static_cast<std::uint64_t>(
            std::upper_bound(c.items.begin(), c.items.end(), end,
                             [](std::uint64_t t, const qlimits::capture_item& it) {
                                 return t < it.entered_ns;
                             }) -
            c.items.begin());
        const std::uint64_t next = c.services[k + 1].start_ns;
        if (entered > served && next >= end) {
            gap_ns += static_cast<double>(next - end);
            gap_items += c.services[k + 1].items;
        }
    }
    if (gap_items > 0)
        out.consumer_gap = gap_ns / gap_items;
    // The consumer's cost per item besides its work comes from these gaps: bound it as the
    // times above (a gap of 1.8e19 ns wrapped the engine's sums and replayed at 12 M items/s;
    // a whatif fuzz, 2026-12-06).
    if (out.consumer_gap && *out.consumer_gap > longest_ns)
        return std::string{"the consumer's gaps between services average over 1e15 ns (11.6 "
                           "days) an item; not a ring's"};
    const ns_t last = out.arrival.back();
    out.period = std::max<ns_t>(last + last / (n - 1), 1);
    return std::nullopt;
}

/// The consumer's captured cost per item besides its work (see the file comment), without the
/// wake-up calls in it; none if the capture never showed a backlog.
inline std::optional<double> consumer_overhead(const trace_workload& w, double wake_ns,
                                               double wake_call_ns) {
    if (!w.consumer_gap || w.send_wait.empty())
        return std::nullopt;
    std::size_t woken = 0;
    for (const ns_t s : w.send_wait)
        woken += static_cast<double>(s) >= wake_ns / 2;
    const double calls =
        wake_call_ns * static_cast<double>(woken) / static_cast<double>(w.send_wait.size());
    return std::max(0.0, *w.consumer_gap - calls);
}

} // namespace lab::sim
