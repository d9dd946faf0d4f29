// Text outputs: the table on stdout, --json (one object per run) and --csv (time series and a
// summary). Plain functions over run_result so the tests can check the formats directly.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "result.hpp"

namespace lab::sim {

/// A number as text; "-" for none, and for a value that is not finite (never "nan" or "inf").
inline std::string fmt_num(std::optional<double> v, const char* fmt = "%.4g") {
    if (!v || !std::isfinite(*v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, *v);
    return buf;
}

/// The readable table: one row per run, the metrics that matter most for choosing a policy.
inline std::string table(const std::vector<run_result>& rs) {
    struct col {
        const char* head;
        const char* metric; // nullptr: a label column
        const char* fmt;
    };
    static const col cols[] = {
        {"scenario", nullptr, ""},       {"case", nullptr, ""},
        {"policy", nullptr, ""},         {"pps", "throughput_pps", "%.4g"},
        {"inflight", "inflight_mean", "%.3g"}, {"infl.p99", "inflight_p99", "%.3g"},
        {"limit", "limit_mean", "%.4g"}, {"lim.final", "limit_final", "%.4g"},
        {"soj.p50us", "sojourn_p50_us", "%.4g"}, {"soj.p99us", "sojourn_p99_us", "%.4g"},
        {"soj.max", "sojourn_max_us", "%.4g"},  {">thr", "sojourn_over_threshold", "%.3f"},
        {"probe.p99us", "probe_p99_us", "%.4g"}, {"rr_tps", "rr_tps", "%.4g"},
        {"stops/s", "producer_stops_per_s", "%.3g"}, {"p.wake/s", "producer_wakeups_per_s", "%.3g"},
        {"c.wake/s", "consumer_wakeups_per_s", "%.3g"},
        {"p.cpu/it", "producer_cpu_ns_per_item", "%.4g"},
        {"c.cpu/it", "consumer_cpu_ns_per_item", "%.4g"}, {"cpu", "cpu_util", "%.2f"},
    };
    constexpr std::size_t ncols = sizeof cols / sizeof cols[0];
    std::vector<std::vector<std::string>> cells;
    cells.emplace_back();
    for (const auto& c : cols) cells.back().emplace_back(c.head);
    for (const auto& r : rs) {
        cells.emplace_back();
        auto& row = cells.back();
        row.push_back(r.scenario);
        row.push_back(r.case_label);
        row.push_back(r.policy + (r.failures.empty() ? "" : " FAILED"));
        for (std::size_t i = 3; i < ncols; ++i) row.push_back(fmt_num(r.get(cols[i].metric), cols[i].fmt));
    }
    std::vector<std::size_t> width(ncols, 0);
    for (const auto& row : cells)
        for (std::size_t i = 0; i < ncols; ++i) width[i] = std::max(width[i], row[i].size());
    std::string out;
    for (std::size_t k = 0; k < cells.size(); ++k) {
        for (std::size_t i = 0; i < ncols; ++i) {
            const std::string& s = cells[k][i];
            const std::string pad(width[i] - s.size(), ' ');
            out += i < 3 ? s + pad : pad + s; // labels left, numbers right
            out += i + 1 < ncols ? "  " : "\n";
        }
        if (k == 0) {
            for (std::size_t i = 0; i < ncols; ++i)
                out += std::string(width[i], '-') + (i + 1 < ncols ? "  " : "\n");
        }
    }
    return out;
}

inline std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out;
}

/// A parameter's value as JSON: a number when it reads as one, else a string.
inline std::string json_value(const std::string& v) {
    if (v.empty()) return "\"\"";
    char* end = nullptr;
    (void)std::strtod(v.c_str(), &end);
    if (end == v.c_str() + v.size()) return v;
    // Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "\"" + std::string&&.
    std::string out = "\"";
    out += json_escape(v);
    out += '"';
    return out;
}

/// --json: an array with one object per run:
/// {"scenario","case","policy","params":{...},"metrics":{...},"checks":[...]}.
/// A metric that means nothing for a run (rr_tps without a request/response flow) is null.
inline std::string json(const std::vector<run_result>& rs) {
    std::string out = "[\n";
    for (std::size_t k = 0; k < rs.size(); ++k) {
        const run_result& r = rs[k];
        out += "  {\"scenario\": \"" + json_escape(r.scenario) + "\", \"case\": \"" +
               json_escape(r.case_label) + "\", \"policy\": \"" + json_escape(r.policy) +
               "\",\n   \"params\": {";
        for (std::size_t i = 0; i < r.params.size(); ++i)
            out += (i ? ", " : "") + std::string{"\""} + json_escape(r.params[i].first) +
                   "\": " + json_value(r.params[i].second);
        out += "},\n   \"metrics\": {";
        for (std::size_t i = 0; i < r.metrics.size(); ++i)
            out += (i ? ", " : "") + std::string{"\""} + json_escape(r.metrics[i].first) +
                   "\": " + (r.metrics[i].second && std::isfinite(*r.metrics[i].second)
                               ? fmt_num(r.metrics[i].second, "%.10g")
                               : "null");
        out += "},\n   \"checks\": [";
        for (std::size_t i = 0; i < r.failures.size(); ++i)
            out += (i ? ", " : "") + std::string{"\""} + json_escape(r.failures[i]) + "\"";
        out += "]}";
        out += k + 1 < rs.size() ? ",\n" : "\n";
    }
    return out + "]\n";
}

/// A file-name-safe form of a label.
inline std::string slug(const std::string& s) {
    std::string out;
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
    return out;
}

/// --csv: one time series per run.
inline std::string csv_series(const run_result& r) {
    std::string out = "t_ms,limit,inflight,policy_inflight\n";
    char buf[128];
    for (const auto& s : r.series) {
        std::snprintf(buf, sizeof buf, "%.3f,%s,%.6g,%.6g\n", s.t_ms,
                      s.limit ? fmt_num(s.limit, "%.10g").c_str() : "", s.inflight,
                      s.policy_inflight);
        out += buf;
    }
    return out;
}

/// --csv: every run's metrics, one row each.
inline std::string csv_summary(const std::vector<run_result>& rs) {
    std::vector<std::string> names;
    for (const auto& r : rs)
        for (const auto& m : r.metrics)
            if (std::find(names.begin(), names.end(), m.first) == names.end()) names.push_back(m.first);
    std::string out = "scenario,case,policy";
    for (const auto& n : names) {
        out += ',';
        out += n;
    }
    out += "\n";
    for (const auto& r : rs) {
        out += r.scenario + "," + r.case_label + "," + r.policy;
        for (const auto& n : names) {
            const auto v = r.get(n);
            out += ',';
            if (v) out += fmt_num(v, "%.10g");
        }
        out += "\n";
    }
    return out;
}

} // namespace lab::sim
