// SPDX-License-Identifier: MIT
// qlimits/detail/wrap.hpp: modular (wrapping) counter arithmetic shared by the policies.
//
// The kernel keeps every DQL counter in a 32-bit unsigned int and compares them with signed
// differences, so all results depend only on differences modulo 2^32. C++20 defines the
// unsigned-to-signed conversion as two's complement, so these helpers are plain constexpr code.
#pragma once

#include <cstdint>

namespace qlimits {
inline namespace v0 {
namespace detail {

/// a - b when that difference, read as signed 32-bit, is positive; otherwise 0.
/// A true difference of 2^31 or more therefore counts as 0, exactly as the kernel's rule.
[[nodiscard]] constexpr std::uint32_t pos_diff(std::uint32_t a, std::uint32_t b) noexcept {
    const std::uint32_t d = a - b;
    return static_cast<std::int32_t>(d) > 0 ? d : 0U;
}

/// a is at or after b on the 32-bit circle.
[[nodiscard]] constexpr bool after_eq(std::uint32_t a, std::uint32_t b) noexcept {
    return static_cast<std::int32_t>(a - b) >= 0;
}

/// 64-bit tick comparisons on the circle, as the kernel compares jiffies on 64-bit machines.
[[nodiscard]] constexpr bool time_after(std::uint64_t a, std::uint64_t b) noexcept {
    return static_cast<std::int64_t>(b - a) < 0;
}
[[nodiscard]] constexpr bool time_after_eq(std::uint64_t a, std::uint64_t b) noexcept {
    return static_cast<std::int64_t>(a - b) >= 0;
}
[[nodiscard]] constexpr bool time_before(std::uint64_t a, std::uint64_t b) noexcept {
    return time_after(b, a);
}
[[nodiscard]] constexpr bool time_before_eq(std::uint64_t a, std::uint64_t b) noexcept {
    return time_after_eq(b, a);
}

static_assert(pos_diff(5U, 3U) == 2U);
static_assert(pos_diff(3U, 5U) == 0U);
static_assert(pos_diff(1U, 0xFFFF'FFFFU) == 2U);      // across the wrap
static_assert(pos_diff(0x8000'0000U, 0U) == 0U);      // a difference of 2^31 counts as none
static_assert(pos_diff(0x7FFF'FFFFU, 0U) == 0x7FFF'FFFFU);
static_assert(after_eq(0U, 0xFFFF'FFFFU) && after_eq(7U, 7U) && !after_eq(6U, 7U));
static_assert(time_after(1U, 0U) && !time_after(0U, 0U) && time_after(0U, ~std::uint64_t{0}));

} // namespace detail
} // namespace v0
} // namespace qlimits
