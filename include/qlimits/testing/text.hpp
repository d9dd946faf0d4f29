// SPDX-License-Identifier: MIT
// qlimits/testing/text.hpp: the lexical rules shared by the public trace formats.
//
// One directive per line; '#' starts a comment that runs to the end of the line; fields are
// separated by spaces or tabs; numbers are unsigned decimal (no sign, no prefix) and must fit the
// field's type. Nothing here allocates or throws.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <system_error>

namespace qlimits {
inline namespace v0 {
namespace testing {

/// At most this many fields per line are looked at; a line with more is malformed.
inline constexpr std::size_t max_trace_fields = 8;

/// A line split into fields, comments and surrounding blanks removed.
struct trace_fields {
    std::array<std::string_view, max_trace_fields> field{};
    std::size_t count = 0;
    bool too_many = false;
    [[nodiscard]] constexpr bool empty() const noexcept { return count == 0 && !too_many; }
};

/// Split one line (without its newline; a trailing '\r' is ignored) into fields. A '\r'
/// anywhere else is part of a field, which is then malformed (review 2026-12-04: it separated
/// fields, so "q\r10" was read as "q 10").
[[nodiscard]] constexpr trace_fields split_trace_line(std::string_view line) noexcept {
    trace_fields out;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
        line = line.substr(0, hash);
    std::size_t i = 0;
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    while (i < line.size()) {
        while (i < line.size() && blank(line[i])) ++i;
        if (i == line.size()) break;
        std::size_t j = i;
        while (j < line.size() && !blank(line[j])) ++j;
        if (out.count == max_trace_fields) {
            out.too_many = true;
            break;
        }
        out.field[out.count++] = line.substr(i, j - i);
        i = j;
    }
    return out;
}

/// Parse an unsigned decimal that must fit in T. Returns false for anything else
/// (empty, a sign, a non-digit, too large). Leading zeros are allowed, however many: the value
/// decides, not the length.
template <class T>
[[nodiscard]] constexpr bool parse_decimal(std::string_view s, T& out) noexcept {
    static_assert(std::numeric_limits<T>::is_integer && !std::numeric_limits<T>::is_signed);
    if (s.empty()) return false;
    std::uint64_t v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return false;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
        v = v * 10 + digit;
    }
    if (v > std::numeric_limits<T>::max()) return false;
    out = static_cast<T>(v);
    return true;
}

/// Write v in decimal to buf (at least 20 chars); returns the end.
[[nodiscard]] inline char* format_decimal(char* first, char* last, std::uint64_t v) noexcept {
    return std::to_chars(first, last, v).ptr;
}
[[nodiscard]] inline char* format_decimal(char* first, char* last, std::int64_t v) noexcept {
    return std::to_chars(first, last, v).ptr;
}

static_assert(split_trace_line("  q 10 # c 5").count == 2);
static_assert(split_trace_line("# only a comment").empty());
static_assert(split_trace_line("q 10\r").count == 2 && split_trace_line("q 10\r").field[1] == "10");
static_assert(split_trace_line("q\r10").count == 1);
static_assert([] {
    std::uint32_t v = 0;
    return parse_decimal("4294967295", v) && v == 4294967295U && !parse_decimal("4294967296", v) &&
           !parse_decimal("-1", v) && !parse_decimal("+1", v) && !parse_decimal("1x", v) &&
           parse_decimal("000000000000000000001", v) && v == 1;
}());

} // namespace testing
} // namespace v0
} // namespace qlimits
