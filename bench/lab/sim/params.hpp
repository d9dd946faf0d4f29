// Model parameters: every number a scenario uses is one of these, settable as --name=value, with
// a default that says where it comes from. A parameter marked `sweep` takes a comma list and the
// scenario runs once per value (the cases of the seed's table).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lab::sim {

struct param_spec {
    std::string name;          ///< the option is --name=value
    std::string def;           ///< default, as it would be typed
    double min = 0;            ///< inclusive range
    double max = 0;
    bool integer = true;
    bool sweep = false;        ///< a comma list: one case per value
    std::vector<std::string> choices; ///< a named value instead of a number (its index is stored)
    std::string unit;
    std::string source;        ///< where the default comes from
};

/// One value per parameter: what a single run sees.
using param_values = std::map<std::string, double, std::less<>>;
/// Possibly several values per parameter: the user's request before it is split into cases.
using param_lists = std::map<std::string, std::vector<double>, std::less<>>;

/// The shortest decimal text that reads back as exactly `v` (ranges and values are printed
/// with it: "%g" rounded a range's bound of 1879048192 to 1.87905e+09, and "%.10g" a 12-digit
/// seed).
/// A whole number below 10^21 is written in plain digits (10, not 1e+01; 10^18 as 19 digits),
/// as the user types it.
inline std::string shortest_text(double v) {
    char buf[32];
    if (v == std::floor(v) && std::fabs(v) < 1e21) {
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

/// The whole number a decimal text denotes ("1e18", "1.5e3", "0012"), as plain digits without
/// leading zeros; nothing if it is not one (a fraction, a sign, an exponent past 400 digits).
/// Lets a value above 2^53 in e-notation be checked for exactness as plain digits are.
inline std::optional<std::string> whole_digits(std::string_view s) {
    const std::size_t e = s.find_first_of("eE");
    std::string_view mant = s.substr(0, e);
    if (!mant.empty() && mant.front() == '+') mant.remove_prefix(1);
    long exp = 0;
    if (e != std::string_view::npos) {
        std::string ex{s.substr(e + 1)};
        if (ex.empty() || ex.find_first_not_of("0123456789+-") != std::string::npos ||
            ex.find_first_of("+-", 1) != std::string::npos)
            return std::nullopt;
        // Leading zeros do not make an exponent large ("1e00018" is 1e18; review 2026-12-05);
        // more than four digits after them do, beyond the 400-digit bound below.
        const std::size_t sign = ex.front() == '+' || ex.front() == '-' ? 1 : 0;
        const std::size_t lead = ex.find_first_not_of('0', sign);
        const std::size_t len = lead == std::string::npos ? 0 : ex.size() - lead;
        if (sign == ex.size() || len > 4)
            return std::nullopt;
        exp = std::strtol(ex.c_str(), nullptr, 10);
    }
    const std::size_t dot = mant.find('.');
    std::string digits{mant.substr(0, dot)};
    if (dot != std::string_view::npos) {
        const std::string_view frac = mant.substr(dot + 1);
        digits += frac;
        exp -= static_cast<long>(frac.size());
    }
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    // Digits past the point must be zeros (a zero value may run out of digits: "0.0e-3").
    for (; exp < 0 && !digits.empty(); ++exp) {
        if (digits.back() != '0') return std::nullopt;
        digits.pop_back();
    }
    if (exp > 400) return std::nullopt;
    if (exp > 0) digits.append(static_cast<std::size_t>(exp), '0');
    const std::size_t first = digits.find_first_not_of('0');
    return first == std::string::npos ? std::string{"0"} : digits.substr(first);
}

/// A count typed as plain digits ("3", "007"), within [lo, hi]; nothing otherwise. strtol alone
/// took "+3" and " 3" (reviews 2026-12-05 and -06).
inline std::optional<long> plain_count(std::string_view s, long lo, long hi) {
    const std::size_t lead = std::min(s.find_first_not_of('0'), s.size());
    if (s.empty() || s.size() - lead > 9 || s.find_first_not_of("0123456789") != s.npos)
        return std::nullopt;
    const long v = std::strtol(std::string{s.substr(lead)}.c_str(), nullptr, 10);
    if (v < lo || v > hi) return std::nullopt;
    return v;
}

/// Parse one value of `spec` from text. Returns the error, in words, or nothing.
inline std::optional<std::string> parse_value(const param_spec& spec, std::string_view text,
                                              double& out) {
    const std::string s{text};
    if (!spec.choices.empty()) {
        for (std::size_t i = 0; i < spec.choices.size(); ++i)
            if (spec.choices[i] == s) {
                out = static_cast<double>(i);
                return std::nullopt;
            }
        std::string all;
        for (const auto& c : spec.choices) {
            if (!all.empty()) all += ", ";
            all += c;
        }
        return "'" + s + "' is not one of: " + all;
    }
    if (s.empty()) return std::string{"empty value"};
    // Decimal only, as written in the docs: strtod would also take leading blanks, hex
    // ("0x14") and "infinity".
    if (s.find_first_not_of("0123456789+-.eE") != std::string::npos)
        return "'" + s + "' is not a number";
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
        return "'" + s + "' is not a number";
    // Whole by the text, not by the double strtod rounded it to: "1.0000000000000001" reads as
    // 1.0 (review 2026-12-06). The sign does not make a number whole or not ("-0" is 0).
    const std::optional<std::string> digits =
        spec.integer ? whole_digits(std::string_view{s}.substr(s.front() == '-' ? 1 : 0))
                     : std::nullopt;
    if (spec.integer && !digits) return "'" + s + "' is not a whole number";
    if (v < spec.min || v > spec.max) {
        std::string e = s;
        e += " is out of range [";
        e += shortest_text(spec.min);
        e += ", ";
        e += shortest_text(spec.max);
        e += "]";
        return e;
    }
    // Above 2^53 not every whole number has a double (a seed of 10^18 + 1 would be rounded
    // silently): the number the text denotes must be the double's, digit for digit ("1e18"
    // is; "1000000000000000001" is not). (In range here, and every range's maximum is below
    // 2^64, so the cast is defined.)
    if (spec.integer && v >= 9007199254740992.0 && // 2^53 + 1 reads as 2^53
        *digits != std::to_string(static_cast<unsigned long long>(v)))
        return "'" + s + "' cannot be taken exactly (above 2^53, a double holds no such whole "
                         "number)";
    out = v == 0 ? 0.0 : v; // "-0" is 0, not a -0 printed in case names
    return std::nullopt;
}

/// Parse a whole --name=value text (a comma list for sweep parameters).
inline std::optional<std::string> parse_list(const param_spec& spec, std::string_view text,
                                             std::vector<double>& out) {
    out.clear();
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item =
            text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                               : comma - start);
        double v = 0;
        if (auto err = parse_value(spec, item, v)) return err;
        // A value given twice would run the same case twice and show it as two rows (or, in
        // the pipeline, merge two runs into one round's median).
        if (std::find(out.begin(), out.end(), v) != out.end())
            return "gives " + std::string(item) + " twice";
        out.push_back(v);
        if (comma == std::string_view::npos) break;
        if (!spec.sweep) return std::string{"takes one value, not a list"};
        start = comma + 1;
    }
    return std::nullopt;
}

/// Format a stored value back as the user would type it.
inline std::string format_value(const param_spec& spec, double v) {
    if (!spec.choices.empty()) {
        const auto i = static_cast<std::size_t>(v);
        return i < spec.choices.size() ? spec.choices[i] : std::string{"?"};
    }
    return shortest_text(v);
}

/// Defaults of every parameter, overridden by the user's values.
inline param_lists resolve(const std::vector<param_spec>& specs,
                           const std::map<std::string, std::vector<double>, std::less<>>& user) {
    param_lists out;
    for (const auto& s : specs) {
        if (auto it = user.find(s.name); it != user.end()) {
            out[s.name] = it->second;
            continue;
        }
        std::vector<double> v;
        [[maybe_unused]] auto err = parse_list(s, s.def, v); // defaults are valid (tested)
        out[s.name] = v;
    }
    return out;
}

/// Split lists into cases: the cartesian product of every sweep parameter, in spec order.
inline std::vector<param_values> cases_of(const std::vector<param_spec>& specs,
                                          const param_lists& lists) {
    std::vector<param_values> out(1);
    for (const auto& s : specs) {
        const auto& vals = lists.at(s.name);
        std::vector<param_values> next;
        for (const auto& partial : out)
            for (double v : vals) {
                param_values p = partial;
                p[s.name] = v;
                next.push_back(std::move(p));
            }
        out = std::move(next);
    }
    return out;
}

/// The parameters every scenario shares.
inline std::vector<param_spec> common_params() {
    return {
        {"seed", "1", 0, 1e18, true, false, {}, "", "modelling choice: any seed; runs are repeatable per seed"},
        {"duration-ms", "5000", 10, 600000, true, false, {}, "ms",
         "modelling choice: 5 s = 5 DQL hold times (1 s), long enough to settle"},
        {"warmup-ms", "1000", 0, 600000, true, false, {}, "ms",
         "modelling choice: one DQL hold time, discarded before measuring"},
        {"sample-us", "1000", 10, 1000000, true, false, {}, "us",
         "modelling choice: time-series resolution of --csv/--svg"},
    };
}

} // namespace lab::sim
