// --svg: one self-contained SVG per scenario case: inflight and limit over time (a line per
// policy) and a bar chart per metric across policies. Plain SVG 1.1, no scripts or fonts to
// fetch, so any browser opens it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report.hpp"
#include "result.hpp"

namespace lab::sim {

namespace svg_detail {
// Twenty colours (Tableau's 10, then their light tints, grey first for `none`): every
// scenario's rows (up to 17 in veth-bql) get one of their own.
inline const char* color(std::size_t i) {
    static const char* const palette[] = {
        "#666666", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
        "#17becf", "#e377c2", "#bcbd22", "#aec7e8", "#ff9896", "#98df8a", "#c5b0d5",
        "#ffbb78", "#c49c94", "#9edae5", "#f7b6d2", "#dbdb8d", "#222222"};
    return palette[i % (sizeof palette / sizeof palette[0])];
}
inline std::string f(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}
inline std::string esc(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else out += c;
    }
    return out;
}
/// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least v.
inline double nice_max(double v) {
    if (!(v > 0)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= v) return m * p;
    return 10 * p;
}
inline std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                        int size = 11) {
    return "<text x=\"" + f(x) + "\" y=\"" + f(y) + "\" font-size=\"" + std::to_string(size) +
           "\" text-anchor=\"" + anchor + "\">" + esc(s) + "</text>\n";
}

/// A legend of `names` from (x0, y0), wrapped into rows that stay within `right`. Returns the
/// SVG and the height it takes.
inline std::pair<std::string, double> legend(const std::vector<std::string>& names, double x0,
                                             double y0, double right) {
    std::string out;
    double x = x0, y = y0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const double w = 24 + 7.0 * static_cast<double>(names[i].size());
        if (x > x0 && x + w > right) {
            x = x0;
            y += 16;
        }
        out += "<rect x=\"" + f(x) + "\" y=\"" + f(y) + "\" width=\"12\" height=\"12\" fill=\"" +
               std::string{color(i)} + "\"/>\n";
        out += text(x + 16, y + 10, names[i], "start", 11);
        x += w;
    }
    return {out, y - y0 + 16};
}

/// A time-series panel: one polyline per run, averaged into at most `width` buckets.
inline std::string line_panel(const std::vector<run_result>& rs, double x0, double y0, double w,
                              double h, const std::string& title, bool limit) {
    double tmax = 0, vmax = 0;
    for (const auto& r : rs)
        for (const auto& s : r.series) {
            tmax = std::max(tmax, s.t_ms);
            const double v = limit ? s.limit.value_or(0) : s.inflight;
            vmax = std::max(vmax, v);
        }
    vmax = nice_max(vmax);
    if (tmax <= 0) tmax = 1;
    std::string out = text(x0, y0 - 8, title, "start", 13);
    out += "<rect x=\"" + f(x0) + "\" y=\"" + f(y0) + "\" width=\"" + f(w) + "\" height=\"" + f(h) +
           "\" fill=\"none\" stroke=\"#999\"/>\n";
    for (int k = 0; k <= 4; ++k) {
        const double y = y0 + h - h * k / 4.0;
        out += "<line x1=\"" + f(x0) + "\" x2=\"" + f(x0 + w) + "\" y1=\"" + f(y) + "\" y2=\"" +
               f(y) + "\" stroke=\"#eee\"/>\n";
        out += text(x0 - 4, y + 4, fmt_num(vmax * k / 4.0), "end", 10);
        const double x = x0 + w * k / 4.0;
        out += text(x, y0 + h + 14, fmt_num(tmax * k / 4.0) + " ms", "middle", 10);
    }
    const auto buckets = static_cast<std::size_t>(w);
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto& series = rs[i].series;
        if (series.empty() || (limit && !series.front().limit && !series.back().limit)) continue;
        std::vector<double> sum(buckets, 0), n(buckets, 0);
        for (const auto& s : series) {
            auto b = static_cast<std::size_t>(s.t_ms / tmax * static_cast<double>(buckets - 1));
            b = std::min(b, buckets - 1);
            sum[b] += limit ? s.limit.value_or(0) : s.inflight;
            n[b] += 1;
        }
        std::string pts;
        for (std::size_t b = 0; b < buckets; ++b) {
            if (n[b] == 0) continue;
            const double x = x0 + w * static_cast<double>(b) / static_cast<double>(buckets - 1);
            const double y = y0 + h - h * std::min(1.0, sum[b] / n[b] / vmax);
            pts += f(x) + "," + f(y) + " ";
        }
        out += "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" +
               std::string{color(i)} + "\" points=\"" + pts + "\"/>\n";
    }
    return out;
}

/// A bar chart of one metric across the runs (policies).
inline std::string bar_panel(const std::vector<run_result>& rs, double x0, double y0, double w,
                             double h, const std::string& metric) {
    double vmax = 0;
    for (const auto& r : rs) vmax = std::max(vmax, r.get(metric).value_or(0));
    vmax = nice_max(vmax * 1.15); // headroom for the value printed above the tallest bar
    std::string out = text(x0 + w / 2, y0 - 6, metric, "middle", 11);
    out += "<line x1=\"" + f(x0) + "\" x2=\"" + f(x0 + w) + "\" y1=\"" + f(y0 + h) + "\" y2=\"" +
           f(y0 + h) + "\" stroke=\"#999\"/>\n";
    const double slot = w / static_cast<double>(std::max<std::size_t>(rs.size(), 1));
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto v = rs[i].get(metric);
        const double x = x0 + slot * static_cast<double>(i) + slot * 0.15;
        if (!v) {
            out += text(x + slot * 0.35, y0 + h - 4, "n/a", "middle", 9);
            continue;
        }
        const double bh = h * std::min(1.0, *v / vmax);
        out += "<rect x=\"" + f(x) + "\" y=\"" + f(y0 + h - bh) + "\" width=\"" + f(slot * 0.7) +
               "\" height=\"" + f(bh) + "\" fill=\"" + color(i) + "\"/>\n";
        out += text(x + slot * 0.35, y0 + h - bh - 3, fmt_num(v, "%.3g"), "middle", 9);
    }
    return out;
}
} // namespace svg_detail

/// The SVG of one scenario case; `rs` are its runs, one per policy.
inline std::string svg_case(const std::vector<run_result>& rs) {
    using namespace svg_detail;
    static const char* const metrics[] = {
        "throughput_pps", "inflight_mean", "limit_mean", "sojourn_p99_us", "probe_p99_us",
        "rr_tps", "producer_stops_per_s", "consumer_wakeups_per_s", "cpu_util"};
    std::vector<std::string> shown;
    for (const char* m : metrics)
        for (const auto& r : rs)
            if (r.get(m)) {
                shown.emplace_back(m);
                break;
            }
    const double width = 1000, left = 70, pw = 880, ph = 170;
    std::vector<std::string> names;
    for (const auto& r : rs) names.push_back(r.policy);
    const auto [legend_svg, legend_h] = legend(names, left, 30, width - 10);
    const double top = 60 + legend_h - 16; // the panels start below the legend's last row
    const double bars_top = top - 20 + 2 * (ph + 60) + 30;
    const std::size_t per_row = 4;
    const double bw = 200, bh = 110;
    const std::size_t rows = (shown.size() + per_row - 1) / per_row;
    const double height = bars_top + static_cast<double>(rows) * (bh + 50) + 10;
    std::string title = rs.empty() ? std::string{} : rs.front().scenario + " - " + rs.front().case_label;
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
                      f(width) + "\" height=\"" + f(height) + "\" viewBox=\"0 0 " + f(width) + " " +
                      f(height) + "\" font-family=\"sans-serif\">\n"
                      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    out += text(left, 20, "qlimits-lab: " + title, "start", 15);
    out += legend_svg;
    out += line_panel(rs, left, top, pw, ph, "inflight over time (ring slots held)", false);
    out += line_panel(rs, left, top + ph + 60, pw, ph, "limit over time (policy units)", true);
    for (std::size_t k = 0; k < shown.size(); ++k) {
        const double x = left + static_cast<double>(k % per_row) * (bw + 25);
        const double y = bars_top + static_cast<double>(k / per_row) * (bh + 50);
        out += bar_panel(rs, x, y, bw, bh, shown[k]);
    }
    return out + "</svg>\n";
}

/// `qlimits-lab sweep`: one panel per metric, x = the swept parameter, a line per policy.
/// `xs[k]` is the parameter's value of run `rs[k]`.
inline std::string svg_sweep(const std::string& title, const std::string& param,
                             const std::vector<run_result>& rs, const std::vector<double>& xs) {
    using namespace svg_detail;
    static const char* const metrics[] = {"throughput_pps", "sojourn_p99_us", "probe_p99_us",
                                          "producer_cpu_ns_per_item", "consumer_cpu_ns_per_item",
                                          "producer_wakeups_per_s", "consumer_wakeups_per_s",
                                          "rr_tps"};
    std::vector<std::string> policies;
    for (const auto& r : rs)
        if (std::find(policies.begin(), policies.end(), r.policy) == policies.end())
            policies.push_back(r.policy);
    std::vector<const char*> shown;
    for (const char* m : metrics)
        for (const auto& r : rs)
            if (r.get(m)) {
                shown.push_back(m);
                break;
            }
    double xmin = 0, xmax = 1;
    if (!xs.empty()) {
        xmin = *std::min_element(xs.begin(), xs.end());
        xmax = *std::max_element(xs.begin(), xs.end());
    }
    if (xmax <= xmin) xmax = xmin + 1;
    const double left = 70, pw = 400, ph = 160, gap_x = 90, gap_y = 70;
    const double width = left + 2 * (pw + gap_x);
    const auto [legend_svg, legend_h] = legend(policies, left, 30, width - 10);
    const double height =
        60 + legend_h - 16 + static_cast<double>((shown.size() + 1) / 2) * (ph + gap_y);
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
                      f(width) + "\" height=\"" + f(height) + "\" font-family=\"sans-serif\">\n"
                      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    out += text(left, 20, "qlimits-lab sweep: " + title + ", --" + param, "start", 15);
    out += legend_svg;
    for (std::size_t k = 0; k < shown.size(); ++k) {
        const double x0 = left + static_cast<double>(k % 2) * (pw + gap_x);
        const double y0 = 80 + legend_h - 16 + static_cast<double>(k / 2) * (ph + gap_y);
        double vmax = 0;
        for (const auto& r : rs) vmax = std::max(vmax, r.get(shown[k]).value_or(0));
        vmax = nice_max(vmax);
        out += text(x0, y0 - 8, shown[k], "start", 12);
        out += "<rect x=\"" + f(x0) + "\" y=\"" + f(y0) + "\" width=\"" + f(pw) +
               "\" height=\"" + f(ph) + "\" fill=\"none\" stroke=\"#999\"/>\n";
        for (int t = 0; t <= 4; ++t) {
            out += text(x0 - 4, y0 + ph - ph * t / 4.0 + 4, fmt_num(vmax * t / 4.0), "end", 10);
            out += text(x0 + pw * t / 4.0, y0 + ph + 14, fmt_num(xmin + (xmax - xmin) * t / 4.0),
                        "middle", 10);
        }
        for (std::size_t i = 0; i < policies.size(); ++i) {
            std::string pts;
            for (std::size_t j = 0; j < rs.size(); ++j) {
                const auto v = rs[j].get(shown[k]);
                if (rs[j].policy != policies[i] || !v || !std::isfinite(*v)) continue;
                pts += f(x0 + pw * (xs[j] - xmin) / (xmax - xmin)) + "," +
                       f(y0 + ph - ph * std::min(1.0, *v / vmax)) + " ";
            }
            out += "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" +
                   std::string{color(i)} + "\" points=\"" + pts + "\"/>\n";
        }
    }
    return out + "</svg>\n";
}

} // namespace lab::sim
