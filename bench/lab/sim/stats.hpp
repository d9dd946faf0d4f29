// Measurement primitives: a measurement window, time-weighted averages, and a histogram with
// bounded relative error for percentiles (no sample is stored, so a run of millions of packets
// costs a few kilobytes).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine.hpp"

namespace lab::sim {

/// An exact sum of count x ns products (time-weighted areas, items' stays): 64 bits can overflow
/// (2^26 messages outstanding for 600 s is 2^65.6), and a double rounds at every addition.
__extension__ using area_t = unsigned __int128;

/// [begin, end): the part of a run that counts (the warm-up before it is discarded).
struct window {
    ns_t begin = 0;
    ns_t end = 0;
    [[nodiscard]] bool contains(ns_t t) const noexcept { return t >= begin && t < end; }
    [[nodiscard]] double seconds() const noexcept {
        return static_cast<double>(end - begin) / static_cast<double>(ns_per_s);
    }
    /// Length of [a, b) that falls inside the window.
    [[nodiscard]] ns_t overlap(ns_t a, ns_t b) const noexcept {
        const ns_t lo = std::max(a, begin);
        const ns_t hi = std::min(b, end);
        return hi > lo ? hi - lo : 0;
    }
};

/// Histogram of non-negative integers: exact below 128, then 64 buckets per power of two, so a
/// reported percentile is within 1.6% of the true one. Optional weights (a duration) make it a
/// time-weighted distribution.
class histogram {
public:
    void add(std::uint64_t v, double weight = 1.0) {
        const std::size_t b = bucket(v);
        if (b >= counts_.size()) counts_.resize(b + 1, 0.0);
        counts_[b] += weight;
        total_ += weight;
        sum_ += static_cast<double>(v) * weight;
        max_ = std::max(max_, v);
    }
    [[nodiscard]] double count() const noexcept { return total_; }
    [[nodiscard]] double mean() const noexcept { return total_ > 0 ? sum_ / total_ : 0.0; }
    [[nodiscard]] std::uint64_t max() const noexcept { return max_; }
    /// The value below which a fraction q of the weight lies (the bucket's midpoint).
    [[nodiscard]] double quantile(double q) const noexcept {
        if (total_ <= 0) return 0.0;
        const double target = q * total_;
        double seen = 0;
        for (std::size_t b = 0; b < counts_.size(); ++b) {
            seen += counts_[b];
            if (seen >= target && counts_[b] > 0)
                return std::min(midpoint(b), static_cast<double>(max_));
        }
        return static_cast<double>(max_);
    }

    static constexpr std::uint64_t exact_below = 128;
    static constexpr unsigned sub_bits = 6; // 64 sub-buckets per power of two

    [[nodiscard]] static std::size_t bucket(std::uint64_t v) noexcept {
        if (v < exact_below) return static_cast<std::size_t>(v);
        const unsigned e = static_cast<unsigned>(std::bit_width(v)) - 1; // >= 7
        const std::uint64_t sub = (v >> (e - sub_bits)) & ((1U << sub_bits) - 1);
        return static_cast<std::size_t>(exact_below + (e - 7) * (1U << sub_bits) + sub);
    }
    [[nodiscard]] static double midpoint(std::size_t b) noexcept {
        if (b < exact_below) return static_cast<double>(b);
        const std::size_t k = b - exact_below;
        const unsigned e = static_cast<unsigned>(k >> sub_bits) + 7;
        const std::uint64_t sub = k & ((1U << sub_bits) - 1);
        const double width = std::ldexp(1.0, static_cast<int>(e - sub_bits));
        const double lo = std::ldexp(1.0, static_cast<int>(e)) + static_cast<double>(sub) * width;
        return lo + width / 2;
    }

private:
    std::vector<double> counts_;
    double total_ = 0;
    double sum_ = 0;
    std::uint64_t max_ = 0;
};

// A histogram of nanoseconds read in microseconds; none when it has no samples: a metric with
// nothing measured is null, not 0 (MODEL.md; a sojourn of 0 was reported for runs in which no
// item left the ring, until a review of 2026-12-05).
[[nodiscard]] inline std::optional<double> mean_us(const histogram& h) {
    if (h.count() <= 0) return std::nullopt;
    return h.mean() / 1000.0;
}
[[nodiscard]] inline std::optional<double> quantile_us(const histogram& h, double q) {
    if (h.count() <= 0) return std::nullopt;
    return h.quantile(q) / 1000.0;
}
[[nodiscard]] inline std::optional<double> max_us(const histogram& h) {
    if (h.count() <= 0) return std::nullopt;
    return static_cast<double>(h.max()) / 1000.0;
}

/// A piecewise-constant quantity (inflight, limit) observed over the window: its time-weighted
/// mean and distribution. Call set() whenever the value changes, finish() at the end.
class level {
public:
    explicit level(window w) : w_(w) {}
    void set(ns_t now, std::uint64_t v) {
        advance(now);
        value_ = v;
    }
    void finish(ns_t now) { advance(now); }
    [[nodiscard]] std::uint64_t value() const noexcept { return value_; }
    [[nodiscard]] double mean() const noexcept { return hist_.mean(); }
    [[nodiscard]] double quantile(double q) const noexcept { return hist_.quantile(q); }
    /// The exact area under the level inside the window (value x ns), for Little's law: the
    /// mean above rounds once per change, 2e-9 relative over 10^8 changes (a review,
    /// 2026-12-06).
    [[nodiscard]] area_t area() const noexcept { return area_; }

private:
    void advance(ns_t now) {
        const ns_t d = w_.overlap(since_, now);
        if (d > 0) {
            hist_.add(value_, static_cast<double>(d));
            area_ += static_cast<area_t>(value_) * d;
        }
        since_ = now;
    }
    window w_;
    histogram hist_;
    area_t area_ = 0;
    ns_t since_ = 0;
    std::uint64_t value_ = 0;
};

} // namespace lab::sim
