// `qlimits-lab whatif`: a captured workload replayed through the thread-ring twin under any
// registry policy, and what the capture itself shows happened. The CLI is whatif.cpp; this is
// the part the tests drive.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "params.hpp"
#include "qlimits/capture/format.hpp"
#include "registry.hpp"
#include "result.hpp"
#include "runner.hpp"
#include "stats.hpp"
#include "thread_ring.hpp"
#include "trace_workload.hpp"

namespace lab::sim::whatif {

/// The replay's parameters: thread-ring's (machine, ring, batch, window, policy knobs).
inline std::vector<param_spec> params() {
    return with_policy_params(tring::params());
}

/// The parameters of thread-ring that shape its own synthetic producer: a replay's producer is
/// the capture, so they do not apply to whatif.
inline bool is_producer_shape(std::string_view name) {
    return name == "pattern" || name == "rate" || name == "burst" || name == "burst-gap-us";
}

/// work-scale scales thread-ring's synthetic work (work-ns x work-scale). A replay's work is the
/// capture's service records, or --work-ns taken as given: it does not apply (review
/// 2026-12-06: accepted and listed, it changed nothing). A capture's `param work-scale` line
/// (the pipeline writes its calibration) is read over; the command line's is refused.
inline bool is_unused_scale(std::string_view name) { return name == "work-scale"; }

/// Whether a parameter's value goes into a replay's JSON `params`: not the synthetic producer's
/// shape, its work or the scale of that work (the replay does not use them).
inline bool is_replayed(std::string_view name) {
    return !is_producer_shape(name) && !is_unused_scale(name) && name != "work-ns";
}

/// Parameter values for a capture: the specs' defaults; then the run's length from the capture
/// (duration = its span, warm-up a tenth of it); then its `param` lines and its `meta ring` /
/// `meta batch`; the caller's values (`user`, already parsed) last. Returns an error for a
/// capture `param` that is unknown, out of range, given twice, of the producer's shape or at or
/// above 2^53 (unless the caller gives that parameter), and for a `meta` that whatif reads
/// (ring, batch, source, policy) given twice.
inline std::optional<std::string> values_for(const qlimits::capture_data& c,
                                             const trace_workload& w, const param_lists& user,
                                             param_values& out) {
    const auto specs = params();
    out.clear();
    for (const auto& s : specs) {
        std::vector<double> d;
        (void)parse_list(s, s.def, d);
        out[s.name] = d.front();
    }
    const double span_ms = std::ceil(static_cast<double>(w.span) / 1e6);
    // At least the shortest --duration-ms takes (10 ms): a 2 ms default for a short capture
    // was below what the command line allows, with no warm-up (review 2026-12-06).
    double shortest = 10;
    for (const auto& s : specs)
        if (s.name == "duration-ms") shortest = s.min;
    out["duration-ms"] = std::max(shortest, span_ms);
    out["warmup-ms"] = std::floor(out["duration-ms"] / 10);
    const auto set = [&](const std::string& name, double v,
                         const char* from) -> std::optional<std::string> {
        for (const auto& s : specs) {
            if (s.name != name)
                continue;
            if (v < s.min || v > s.max || (s.integer && v != std::floor(v)))
                return std::string{from} + " " + name + ": value out of range";
            out[name] = v;
            return std::nullopt;
        }
        return std::string{from} + " " + name + ": not a thread-ring parameter";
    };
    // The rules the command line enforces hold for the capture's own lines too (review
    // 2026-12-05): a name given twice is refused (meta_or() took the first, `param` the last),
    // the synthetic producer's shape does not apply (the capture is the producer), and a whole
    // number at or above 2^53 may have been rounded when read, which the command line refuses
    // as "cannot be taken exactly".
    for (std::size_t i = 0; i < c.params.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (c.params[j].first == c.params[i].first)
                return "capture param " + c.params[i].first + ": given twice";
    // (Only the meta keys whatif reads: the others are free description.)
    for (std::size_t i = 0; i < c.meta.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (c.meta[j].first == c.meta[i].first &&
                (c.meta[i].first == "ring" || c.meta[i].first == "batch" ||
                 c.meta[i].first == "source" || c.meta[i].first == "policy"))
                return "capture meta " + c.meta[i].first + ": given twice";
    for (const auto& [name, v] : c.params) {
        if (is_producer_shape(name))
            return "capture param " + name +
                   ": shapes thread-ring's own producer; a replay's producer is the capture";
        if (is_unused_scale(name))
            continue;
        // A value the caller gives replaces the line (below), which is then not judged.
        if (const auto given = user.find(name); given != user.end() && !given->second.empty())
            continue;
        if (v >= 9007199254740992.0) // 2^53
            return "capture param " + name +
                   ": at or above 2^53, which a capture's number may not hold exactly; give --" +
                   name + " (it replaces the line) or remove the line";
        if (auto e = set(name, v, "capture param"))
            return e;
    }
    for (const char* key : {"ring", "batch"}) {
        const std::string m = c.meta_or(key);
        if (m.empty())
            continue;
        double v = 0;
        if (!qlimits::detail::parse_capture_number(m, v))
            return "capture meta " + std::string{key} + ": not a number";
        if (auto e = set(key, v, "capture meta"))
            return e;
    }
    for (const auto& [name, list] : user)
        if (!list.empty())
            out[name] = list.front();
    // --duration-ms alone: the warm-up is a tenth of it, as of the span (a capture spanning
    // hours would otherwise keep a warm-up of a tenth of hours).
    if (const auto d = user.find("duration-ms"), wu = user.find("warmup-ms");
        d != user.end() && !d->second.empty() && (wu == user.end() || wu->second.empty()))
        out["warmup-ms"] = std::floor(out["duration-ms"] / 10);
    // The length taken from the capture's span obeys --duration-ms's range too (a capture
    // spanning hours would otherwise simulate hours).
    for (const auto& s : specs)
        if (s.name == "duration-ms" && out["duration-ms"] > s.max)
            return "the capture spans " + std::to_string(static_cast<long long>(span_ms)) +
                   " ms, over --duration-ms's " + std::to_string(static_cast<long long>(s.max)) +
                   ": give --duration-ms (and --warmup-ms) to replay a part of it";
    if (out["warmup-ms"] >= out["duration-ms"])
        return std::string{"--warmup-ms must be below --duration-ms"};
    // The time-series cap `run` has (runner.hpp): a 100 s capture with `param sample-us 10`
    // kept 10^7 samples a replay, 933 MB and 16 s for one policy (a whatif fuzz, 2026-12-06).
    if (auto e = too_many_samples(out["duration-ms"], out["sample-us"], "replay")) return e;
    // As `run` does (runner.hpp, validate()): refuse a run over the event budget (~3 events per
    // item), at the faster of the capture's own pace (its items over its span, repeated to fill
    // the duration) and the pace a closed-loop replay may reach (one item per the larger of the
    // mean think time and the mean service: a producer whose sends blocked may go faster).
    if (w.size() != 0) {
        const auto mean = [](const auto& v) {
            double sum = 0;
            for (const auto x : v) sum += static_cast<double>(x);
            return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
        };
        const double service = w.service.empty() ? out["work-ns"] : mean(w.service);
        const double closed = 1.0 / std::max({mean(w.think), service, 1.0});
        const double per_ns = std::max(static_cast<double>(w.size()) /
                                           std::max(1.0, static_cast<double>(w.span)),
                                       closed);
        const double events = 3 * std::min(per_ns, 1.0) * out["duration-ms"] * 1e6;
        if (events > event_budget) {
            char buf[240];
            std::snprintf(buf, sizeof buf,
                          "would simulate ~%.3g events at the capture's pace, over the budget "
                          "of %.3g per run: lower --duration-ms",
                          events, event_budget);
            return std::string{buf};
        }
    }
    return std::nullopt;
}

/// One replay of the captured workload under `row`'s policy.
inline run_result replay(const trace_workload& w, const param_values& p, const policy_row& row,
                         tring::trace_source source, qlimits::capture_log* record = nullptr) {
    param_values v = p;
    if (row.row_value)
        v[row.entry->row_param] = *row.row_value;
    tring::model m{v, row, &w, source, record};
    run_result r = m.run();
    r.scenario = "whatif";
    return r;
}

/// What the capture itself shows inside [warmup, duration): items taken per second, sojourn
/// (entry to the completion that covers the item's last unit, FIFO), and upstream wait (wanted
/// to entered). No model, no checks: the reference a replay of the same policy should match.
inline run_result observed(const qlimits::capture_data& c, const param_values& p) {
    run_result r = blank_result();
    r.scenario = "whatif";
    r.policy = "captured";
    if (c.items.empty())
        return r;
    // Times from the first item's wanted time: a capture's clock may start anywhere, up to
    // 2^64 - 1, where w0 + the duration wrapped and left the window empty (review 2026-12-06).
    const auto w0 = c.items.front().wanted_ns;
    const auto since = [w0](std::uint64_t t) { return t > w0 ? t - w0 : 0; };
    // Up to the capture's own end: a --duration-ms longer than the capture must not spread its
    // items over time it does not cover.
    const ns_t end = c.completions.empty() ? 0 : since(c.completions.back().at_ns);
    const ns_t after_end = end == ~ns_t{0} ? end : end + 1; // a last completion at 2^64 - 1
    const ns_t begin = static_cast<ns_t>(p.at("warmup-ms")) * ns_per_ms;
    const ns_t length = static_cast<ns_t>(p.at("duration-ms")) * ns_per_ms;
    const window win{begin, std::max(begin, std::min(after_end, length))};
    histogram soj, upstream;
    std::uint64_t taken = 0, covered = 0;
    std::size_t k = 0;
    for (const auto& it : c.items) {
        covered += it.units;
        while (k < c.completions.size() && taken < covered)
            taken += c.completions[k++].units;
        if (taken < covered)
            break; // not taken within the capture
        if (k == 0)
            continue; // a zero-unit item before any completion: none times it (there was no
                      // completion before it to read)
        const ns_t at = c.completions[k - 1].at_ns;
        if (at < w0 || !win.contains(since(at)))
            continue;
        soj.add(at > it.entered_ns ? at - it.entered_ns : 0);
        upstream.add(it.entered_ns - it.wanted_ns);
    }
    const double secs = win.seconds();
    r.set("throughput_pps", secs > 0 ? static_cast<double>(soj.count()) / secs : 0.0);
    r.set("sojourn_mean_us", soj.mean() / 1000);
    r.set("sojourn_p50_us", soj.quantile(0.5) / 1000);
    r.set("sojourn_p99_us", soj.quantile(0.99) / 1000);
    r.set("send_wait_p99_us", upstream.quantile(0.99) / 1000);
    return r;
}

/// The replay of the captured policy (`policy`, the capture's `meta policy`) against the
/// capture itself (`rs` front, observed()): its throughput ratio when outside [0.8, 1.25],
/// where the twin misses costs of the captured program or machine that every row shares;
/// nothing when within, or when no row replays that policy. 0.8-1.25: the proof runs' goal
/// of +-20 % (scripts/whatif_proof.sh), taken symmetric in ratio.
inline std::optional<double> own_replay_off(const std::vector<run_result>& rs,
                                            std::string_view policy) {
    const double captured = rs.empty() ? 0 : rs.front().get("throughput_pps").value_or(0);
    for (std::size_t k = 1; k < rs.size() && captured > 0; ++k) {
        if (rs[k].policy != policy)
            continue;
        const double x = rs[k].get("throughput_pps").value_or(0) / captured;
        if (x < 0.8 || x > 1.25)
            return x;
    }
    return std::nullopt;
}

} // namespace lab::sim::whatif
