// Planning and executing runs: scenarios x cases x policies, spread over worker threads. Each
// run is independent and seeded, so the thread count changes the wall time, never a number.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "params.hpp"
#include "result.hpp"
#include "scenario.hpp"

namespace lab::sim {

struct job {
    const scenario* sc = nullptr;
    param_values params;
    policy_row row;
};

/// Every run the request asks for, in a fixed order: scenario, case, policy.
inline std::vector<job> plan(const std::vector<const scenario*>& scs,
                             const std::vector<param_lists>& user,
                             const std::vector<std::string>& policy_filter) {
    std::vector<job> out;
    for (std::size_t i = 0; i < scs.size(); ++i) {
        const scenario& sc = *scs[i];
        param_lists lists = resolve(sc.params, user[i]);
        const std::vector<policy_row> rows = sc.rows(lists);
        // A row parameter's list was spent on rows; the cases see one value.
        for (const auto& r : rows)
            if (r.entry && !r.entry->row_param.empty()) {
                auto& l = lists.at(r.entry->row_param);
                l.resize(1);
            }
        for (const param_values& c : sc.cases(lists))
            for (const auto& r : rows)
                if (row_selected(policy_filter, r.name)) {
                    job j{&sc, c, r};
                    if (r.row_value) j.params[r.entry->row_param] = *r.row_value;
                    out.push_back(std::move(j));
                }
    }
    return out;
}

/// The most events one run may simulate: 3e8, about half a minute of one core at the engine's
/// ~10-20 M events/s (measured: `run veth-bql --nrules=0` reports its events and wall time).
/// Zero costs would otherwise ask for ~10^9 events per simulated second and hours of wall time.
inline constexpr double event_budget = 3e8;

/// Time-series samples one run may keep (see validate()).
inline constexpr double max_samples_per_run = 1e6;

/// Every run keeps its time series for the plots (~80 bytes a sample): at --sample-us=10 over
/// the longest --duration-ms a run held ~4.7 GB, and `run thread-ring` keeps 36 runs (a review,
/// 2026-12-05). The defaults' longest run has 600,000 samples. The refusal, if over the cap;
/// `what` names the run ("run", or whatif's "replay").
inline std::optional<std::string> too_many_samples(double duration_ms, double sample_us,
                                                   const char* what = "run") {
    const double n = duration_ms * 1000.0 / sample_us;
    if (n <= max_samples_per_run) return std::nullopt;
    char buf[280];
    std::snprintf(buf, sizeof buf,
                  "--duration-ms=%g at --sample-us=%g keeps %.3g time-series samples per %s, "
                  "over the cap of %.3g (each %s's series is kept for the plots): raise "
                  "--sample-us or lower --duration-ms",
                  duration_ms, sample_us, n, what, max_samples_per_run, what);
    return std::string{buf};
}

/// Refusals that depend on a whole case: an empty measurement window, a series too long to
/// keep, a run over the budget.
inline std::optional<std::string> validate(const job& j) {
    const double warm = j.params.at("warmup-ms"), dur = j.params.at("duration-ms");
    if (warm >= dur) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "--warmup-ms=%g must be below --duration-ms=%g: nothing would be measured",
                      warm, dur);
        return std::string{buf};
    }
    if (auto e = too_many_samples(dur, j.params.at("sample-us"))) return e;
    if (j.sc->check)
        if (auto e = j.sc->check(j.params)) return e;
    if (j.sc->estimate_events) {
        const auto [events, knobs] = j.sc->estimate_events(j.params);
        if (events > event_budget) {
            char buf[320];
            std::snprintf(buf, sizeof buf,
                          "%s %s would simulate ~%.3g events, over the budget of %.3g per run "
                          "(MODEL.md): raise %s or lower --duration-ms",
                          j.sc->name.c_str(), j.sc->case_label(j.params).c_str(), events,
                          event_budget, knobs.c_str());
            return std::string{buf};
        }
    }
    return std::nullopt;
}

/// Run one job and label its result.
inline run_result execute_one(const job& j) {
    run_result r = j.sc->run(j.params, j.row);
    r.scenario = j.sc->name;
    r.case_label = j.sc->case_label(j.params);
    r.policy = j.row.name;
    r.params.clear();
    for (const auto& spec : j.sc->params)
        if (auto it = j.params.find(spec.name); it != j.params.end())
            r.params.emplace_back(spec.name, format_value(spec, it->second));
    // A case's own values beyond the parameters (veth's speed-case, adversarial-case): what
    // made this run differ from the others of the same parameters.
    for (const auto& p : j.params) { // (no structured binding: clang 14 cannot capture one)
        const bool spec = std::any_of(j.sc->params.begin(), j.sc->params.end(),
                                      [&](const param_spec& s) { return s.name == p.first; });
        if (!spec) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", p.second);
            r.params.emplace_back(p.first, buf);
        }
    }
    return r;
}

/// Run every job on `threads` workers; results come back in job order. `progress` (may be
/// empty) is called under a lock after each run finishes.
inline std::vector<run_result> execute(const std::vector<job>& jobs, unsigned threads,
                                       const std::function<void(std::size_t, std::size_t,
                                                                const job&)>& progress) {
    std::vector<run_result> results(jobs.size());
    std::atomic<std::size_t> next{0};
    std::size_t done = 0;
    std::mutex m;
    auto worker = [&] {
        for (;;) {
            const std::size_t i = next.fetch_add(1);
            if (i >= jobs.size()) return;
            results[i] = execute_one(jobs[i]);
            const std::lock_guard<std::mutex> lock(m);
            ++done;
            if (progress) progress(done, jobs.size(), jobs[i]);
        }
    };
    if (threads <= 1 || jobs.size() <= 1) {
        worker();
        return results;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    return results;
}

} // namespace lab::sim
