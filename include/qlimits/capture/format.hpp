// SPDX-License-Identifier: MIT
// qlimits/capture/format.hpp: the capture file format ("qlimits-capture v1"), its writer and
// its reader.
//
// A text file, one record per line, '#' comments, fields separated by blanks; integers are
// unsigned decimal (testing/text.hpp's rules); times are ns since the capture's origin.
//   qlimits-capture v1          the first line that is not blank or a comment; a file whose
//                               first line says another version is refused
//   i WANTED ENTERED DONE UNITS an item: the producer wanted to send it, it entered the ring,
//                               the send returned; WANTED <= ENTERED <= DONE; ENTERED never
//                               goes back from one item to the next; UNITS may be 0 (an
//                               item the policy counts as nothing, e.g. a control message)
//   c AT UNITS                  the consumer reported UNITS taken at AT (never going back)
//   s START END ITEMS           the consumer worked from START to END on ITEMS items
//                               (START <= END, START never going back, ITEMS >= 1)
//   dropped I C S               records the recorder had no room for (at most once)
//   meta KEY VALUE              free description (KEY and VALUE one word each), e.g.
//                               `meta policy dql-item`, `meta ring 256`, `meta completion batch`
//   param NAME NUMBER           a lab parameter to replay with (e.g. `param wake-ns 3700`):
//                               NUMBER is decimal, with an optional fraction (12.5)
//   stat NAME COUNT             an adapter counter over the capture (e.g. channel stops)
// Records of one kind keep their order; the kinds may interleave. At the end of the file the
// completed units must not exceed the queued ones (plus those of dropped items), nor the served
// items the recorded ones (plus dropped ones).
//
// The reader answers every malformed input with the line number and the reason (never a crash,
// never a partial result): see read_capture().
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qlimits/capture/recorder.hpp"
#include "qlimits/testing/text.hpp"

namespace qlimits {
inline namespace v0 {

/// The header line's text.
inline constexpr std::string_view capture_header = "qlimits-capture v1";

/// A capture, as read back.
struct capture_data {
    std::vector<capture_item> items;
    std::vector<capture_completion> completions;
    std::vector<capture_service> services;
    std::uint64_t dropped_items = 0, dropped_completions = 0, dropped_services = 0;
    std::vector<std::pair<std::string, std::string>> meta;
    std::vector<std::pair<std::string, double>> params;
    std::vector<std::pair<std::string, std::uint64_t>> stats;

    /// A meta value, or `fallback`.
    [[nodiscard]] std::string meta_or(std::string_view key, std::string fallback = {}) const {
        for (const auto& [k, v] : meta)
            if (k == key)
                return v;
        return fallback;
    }
};

/// What read_capture() says: ok, or the first bad line and why.
struct capture_read_result {
    bool ok = true;
    std::size_t line = 0; ///< 1-based; 0 for a problem of the whole file
    std::string reason;
};

namespace detail {
template <class Sink>
void capture_put(Sink& sink, std::string_view kind, std::initializer_list<std::uint64_t> fields) {
    char buf[16 + 4 * 24];
    char* p = buf;
    for (const char ch : kind)
        *p++ = ch;
    for (const std::uint64_t v : fields) {
        *p++ = ' ';
        p = testing::format_decimal(p, buf + sizeof buf, v);
    }
    *p++ = '\n';
    sink(std::string_view(buf, static_cast<std::size_t>(p - buf)));
}

/// A decimal with an optional fraction: digits, or digits '.' digits (no sign, no exponent).
inline bool parse_capture_number(std::string_view s, double& out) noexcept {
    const std::size_t dot = s.find('.');
    std::uint64_t whole = 0, frac = 0;
    if (!testing::parse_decimal(s.substr(0, dot), whole))
        return false;
    double v = static_cast<double>(whole);
    if (dot != std::string_view::npos) {
        const std::string_view f = s.substr(dot + 1);
        if (f.size() > 18 || !testing::parse_decimal(f, frac))
            return false;
        double scale = 1;
        for (std::size_t i = 0; i < f.size(); ++i)
            scale *= 10;
        v += static_cast<double>(frac) / scale;
    }
    out = v;
    return true;
}
// A field of the input as an error message quotes it: at most 32 bytes (then "..."), bytes
// outside printable ASCII as \xHH, so a reason stays one short line whatever the input held (a
// review, 2026-12-06: a 1 MiB version string was copied whole, an escape sequence raw).
inline std::string quoted_field(std::string_view f) {
    constexpr std::size_t shown = 32;
    std::string out = "'";
    for (std::size_t i = 0; i < f.size() && i < shown; ++i) {
        const auto c = static_cast<unsigned char>(f[i]);
        if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
        } else {
            constexpr const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        }
    }
    if (f.size() > shown) out += "...";
    return out + "'";
}
} // namespace detail

/// Write the header, `preamble` (meta/param/stat lines the caller formatted, or nothing), the
/// drop counts when any, and every record of `log`, to `sink` (called with string_views).
/// Call it after both sides stopped. Allocates nothing itself.
template <class Sink>
void write_capture(const capture_log& log, Sink&& sink, std::string_view preamble = {}) {
    sink(capture_header);
    sink(std::string_view("\n"));
    sink(preamble);
    // A preamble without its last newline would run into the next record (a comment would
    // swallow it).
    if (!preamble.empty() && preamble.back() != '\n') sink(std::string_view("\n"));
    if (log.dropped_items() + log.dropped_completions() + log.dropped_services() != 0)
        detail::capture_put(
            sink, "dropped",
            {log.dropped_items(), log.dropped_completions(), log.dropped_services()});
    for (std::size_t k = 0; k < log.item_count(); ++k) {
        const capture_item& r = log.items()[k];
        detail::capture_put(sink, "i", {r.wanted_ns, r.entered_ns, r.done_ns, r.units});
    }
    for (std::size_t k = 0; k < log.completion_count(); ++k) {
        const capture_completion& r = log.completions()[k];
        detail::capture_put(sink, "c", {r.at_ns, r.units});
    }
    for (std::size_t k = 0; k < log.service_count(); ++k) {
        const capture_service& r = log.services()[k];
        detail::capture_put(sink, "s", {r.start_ns, r.end_ns, r.items});
    }
}

/// Read a capture. On any malformed line `out` is left empty and the result names the line
/// and the reason; nothing throws except std::bad_alloc.
[[nodiscard]] inline capture_read_result read_capture(std::string_view text, capture_data& out) {
    out = capture_data{};
    capture_read_result res;
    const auto fail = [&](std::size_t line, std::string why) {
        out = capture_data{};
        res.ok = false;
        res.line = line;
        res.reason = std::move(why);
        return res;
    };
    bool header = false, dropped_seen = false;
    std::size_t line_no = 0;
    std::uint64_t queued_units = 0, completed_units = 0, served_items = 0;
    while (!text.empty()) {
        ++line_no;
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const testing::trace_fields f = testing::split_trace_line(line);
        if (f.empty())
            continue;
        if (f.too_many)
            return fail(line_no, "too many fields");
        const std::string_view kind = f.field[0];
        if (!header) {
            if (kind != "qlimits-capture" || f.count != 2)
                return fail(line_no, "not a qlimits capture (expected 'qlimits-capture v1' first)");
            if (f.field[1] != "v1")
                return fail(line_no, "unsupported capture version " +
                                         detail::quoted_field(f.field[1]) +
                                         " (this reader reads v1)");
            header = true;
            continue;
        }
        std::uint64_t v[4] = {};
        const auto numbers = [&](std::size_t want) -> const char* {
            if (f.count != want + 1)
                return f.count < want + 1 ? "missing field" : "too many fields";
            for (std::size_t k = 0; k < want; ++k)
                if (!testing::parse_decimal(f.field[k + 1], v[k]))
                    return "bad number (expected unsigned decimal below 2^64)";
            return nullptr;
        };
        if (kind == "i") {
            if (const char* e = numbers(4))
                return fail(line_no, e);
            if (!(v[0] <= v[1] && v[1] <= v[2]))
                return fail(line_no, "item times out of order (need WANTED <= ENTERED <= DONE)");
            if (v[3] > UINT32_MAX)
                return fail(line_no, "item units must be 0..2^32-1");
            if (!out.items.empty() && v[1] < out.items.back().entered_ns)
                return fail(line_no, "item entered before the previous item");
            out.items.push_back({v[0], v[1], v[2], static_cast<std::uint32_t>(v[3])});
            queued_units += v[3];
        } else if (kind == "c") {
            if (const char* e = numbers(2))
                return fail(line_no, e);
            if (v[1] == 0 || v[1] > UINT32_MAX)
                return fail(line_no, "completion units must be 1..2^32-1");
            if (!out.completions.empty() && v[0] < out.completions.back().at_ns)
                return fail(line_no, "completion before the previous completion");
            out.completions.push_back({v[0], static_cast<std::uint32_t>(v[1])});
            completed_units += v[1];
        } else if (kind == "s") {
            if (const char* e = numbers(3))
                return fail(line_no, e);
            if (v[0] > v[1])
                return fail(line_no, "service ends before it starts");
            if (v[2] == 0 || v[2] > UINT32_MAX)
                return fail(line_no, "service items must be 1..2^32-1");
            if (!out.services.empty() && v[0] < out.services.back().start_ns)
                return fail(line_no, "service starts before the previous service");
            out.services.push_back({v[0], v[1], static_cast<std::uint32_t>(v[2])});
            served_items += v[2];
        } else if (kind == "dropped") {
            if (const char* e = numbers(3))
                return fail(line_no, e);
            if (dropped_seen)
                return fail(line_no, "drop counts given twice");
            dropped_seen = true;
            out.dropped_items = v[0];
            out.dropped_completions = v[1];
            out.dropped_services = v[2];
        } else if (kind == "meta") {
            if (f.count != 3)
                return fail(line_no, f.count < 3 ? "missing field" : "too many fields");
            out.meta.emplace_back(std::string(f.field[1]), std::string(f.field[2]));
        } else if (kind == "param") {
            if (f.count != 3)
                return fail(line_no, f.count < 3 ? "missing field" : "too many fields");
            double x = 0;
            if (!detail::parse_capture_number(f.field[2], x))
                return fail(line_no, "bad number (expected decimal, e.g. 12 or 12.5)");
            out.params.emplace_back(std::string(f.field[1]), x);
        } else if (kind == "stat") {
            if (f.count != 3)
                return fail(line_no, f.count < 3 ? "missing field" : "too many fields");
            if (!testing::parse_decimal(f.field[2], v[0]))
                return fail(line_no, "bad number (expected unsigned decimal below 2^64)");
            out.stats.emplace_back(std::string(f.field[1]), v[0]);
        } else {
            return fail(line_no, "unknown record " + detail::quoted_field(kind));
        }
    }
    if (!header)
        return fail(0, "empty: no 'qlimits-capture v1' line");
    // Units of dropped items are unknown (any number each, zero included): with drops, the
    // completed units cannot be checked against the queued ones. Their count is known.
    if (out.dropped_items == 0 && completed_units > queued_units)
        return fail(0, "more units completed than queued");
    // Compared without the sum, which wraps for a drop count near 2^64 (review 2026-12-04).
    if (served_items > out.items.size() && served_items - out.items.size() > out.dropped_items)
        return fail(0, "more items served than recorded");
    return res;
}

} // namespace v0
} // namespace qlimits
