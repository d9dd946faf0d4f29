// A captured workload (qlimits/capture/format.hpp) as the thread-ring twin replays it: per item
// the producer's own time before it (closed loop) or its arrival (open loop), its units, and the
// consumer's work on it. What a policy changes (waits, sleeps, wake-ups) is taken out; what it
// does not change (the producer's and the consumer's own work) is kept.
//  - think (closed loop): from the previous send's return to wanting this item (wanted_i -
//    done_{i-1}). It holds whatever the producer does between sends (filling the item, its
//    pattern's sleeps), and also a wake-up call the captured send i-1 made after its entry, if
//    any (the capture cannot tell; see MODEL.md, "whatif");
//  - arrival (open loop): wanted_i - wanted_0;
//  - send_pre / send_post: the send's own time before and after the entry, the 10th percentile
//    over the capture (the quickest sends are the ones that did not wait);
//  - service: each `s` record's work (END - START) split evenly over its items, in order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine.hpp"
#include "qlimits/capture/format.hpp"

namespace lab::sim {

struct trace_workload {
    std::vector<ns_t> think, arrival;
    std::vector<double> service; ///< ns of consumer work per item
    std::vector<std::uint32_t> units;
    ns_t send_pre = 0, send_post = 0;
    ns_t span = 0;   ///< first wanted to last entered: the captured run's length
    ns_t period = 0; ///< open loop: a repeat of the trace starts this long after the last
                     ///< (the last arrival plus one mean gap)
    [[nodiscard]] std::size_t size() const noexcept { return units.size(); }
};

inline ns_t low_percentile(std::vector<ns_t> v) {
    if (v.empty()) return 0;
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
    if (n < 2) return std::string{"the capture has fewer than 2 items with a service time"};
    std::vector<ns_t> pre, post;
    const std::uint64_t w0 = c.items[0].wanted_ns;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& it = c.items[i];
        const std::uint64_t prev_done = i == 0 ? it.wanted_ns : c.items[i - 1].done_ns;
        out.think.push_back(it.wanted_ns > prev_done ? it.wanted_ns - prev_done : 0);
        out.arrival.push_back(it.wanted_ns - std::min(w0, it.wanted_ns));
        out.units.push_back(it.units);
        out.service.push_back(service[i]);
        pre.push_back(it.entered_ns - it.wanted_ns);
        post.push_back(it.done_ns - it.entered_ns);
    }
    out.send_pre = low_percentile(pre);
    out.send_post = low_percentile(post);
    out.span = c.items[n - 1].entered_ns - std::min(w0, c.items[n - 1].entered_ns);
    if (out.span == 0) return std::string{"the capture's items all entered at one instant"};
    const ns_t last = out.arrival.back();
    out.period = std::max<ns_t>(last + last / (n - 1), 1);
    return std::nullopt;
}

} // namespace lab::sim
