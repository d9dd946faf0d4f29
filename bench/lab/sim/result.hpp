// What one run produces: metrics, a time series, and the verdict of its honesty checks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stats.hpp"

namespace lab::sim {

/// The metrics every scenario reports where they mean something (issue 4, item 4), in order.
inline const std::vector<std::string>& standard_metrics() {
    static const std::vector<std::string> names{
        "throughput_pps",  "throughput_bps", "inflight_mean",       "inflight_p99",
        "limit_mean",      "limit_final",    "sojourn_mean_us",     "sojourn_p50_us",
        "sojourn_p99_us",  "sojourn_max_us", "sojourn_over_threshold", "probe_p99_us",
        "rr_tps",          "producer_stops_per_s", "producer_wakeups_per_s",
        "consumer_wakeups_per_s", "producer_cpu_ns_per_item", "consumer_cpu_ns_per_item",
        "cpu_util"};
    return names;
}

struct sample {
    double t_ms = 0;
    std::optional<double> limit; ///< none for a policy without a limit
    double inflight = 0;         ///< ring slots held
    double policy_inflight = 0;  ///< units queued and not yet reported completed
};

struct run_result {
    std::string scenario;
    std::string case_label; ///< e.g. "fq 1q", "nrules=3500"
    std::string policy;
    std::vector<std::pair<std::string, std::string>> params; ///< every effective parameter
    std::vector<std::pair<std::string, std::optional<double>>> metrics;
    std::vector<sample> series;
    std::vector<std::string> failures; ///< honesty checks that did not hold
    std::uint64_t events = 0;

    void set(const std::string& name, std::optional<double> v) {
        for (auto& m : metrics)
            if (m.first == name) {
                m.second = v;
                return;
            }
        metrics.emplace_back(name, v);
    }
    [[nodiscard]] std::optional<double> get(const std::string& name) const {
        for (const auto& m : metrics)
            if (m.first == name) return m.second;
        return std::nullopt;
    }
};

/// A run starts with every standard metric present and empty (null in JSON, "-" in tables).
inline run_result blank_result() {
    run_result r;
    for (const auto& n : standard_metrics()) r.metrics.emplace_back(n, std::nullopt);
    return r;
}

/// Items in = items out + items still inside: nothing is created or lost by the model.
inline void check_conservation(run_result& r, const char* what, std::uint64_t in,
                               std::uint64_t out, std::uint64_t inside) {
    if (in != out + inside) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "conservation (%s): %llu in != %llu out + %llu still queued", what,
                      static_cast<unsigned long long>(in), static_cast<unsigned long long>(out),
                      static_cast<unsigned long long>(inside));
        r.failures.emplace_back(buf);
    }
}

/// Liveness: `stuck` says the run ended with the producer stopped, the consumer asleep on an
/// empty ring and no wake-up on its way, so nothing is left to report a completion or give
/// room: both would wait for good.
inline void check_live(run_result& r, bool stuck) {
    if (stuck)
        r.failures.emplace_back("deadlock: the producer is stopped, the consumer asleep on an "
                                "empty ring, and no wake-up is on its way");
}

/// Little's law over a finite window, as an identity: the area under the queue's length inside
/// the window (count x ns, `level::area()`) equals the time its items spent in it inside the
/// window (each item's stay clipped to the window, items still inside at its end included). It
/// needs no steady state, so it holds for any window and workload; both sides are exact
/// integers, so a failure says the books disagree (an item in the queue's count but not
/// stamped, or stamped twice), never that the window was too short.
inline void check_little_clipped(run_result& r, area_t occupancy_area, area_t inside_ns, window w,
                                 const char* what = "ring") {
    if (occupancy_area == inside_ns) return;
    const double span = static_cast<double>(w.end - w.begin);
    const double gap = occupancy_area > inside_ns
                           ? static_cast<double>(occupancy_area - inside_ns)
                           : -static_cast<double>(inside_ns - occupancy_area);
    char buf[384];
    std::snprintf(buf, sizeof buf,
                  "Little's law (%s): mean occupancy %.17g vs time inside the window over its "
                  "length %.17g (%.17g item-ns apart): the queue's count and its items' stamps "
                  "disagree",
                  what, static_cast<double>(occupancy_area) / span,
                  static_cast<double>(inside_ns) / span, gap);
    r.failures.emplace_back(buf);
}

} // namespace lab::sim
