// SPDX-License-Identifier: MIT
// qlimits/config.hpp: build-wide settings and the contract-violation handler.
//
// Contract violations (completing more than is in flight, an invalid configuration handed to a
// constructor) go to one process-wide handler. The default prints a clear message to stderr and
// aborts, as the kernel's BUG_ON would stop the machine. A handler installed with
// set_contract_handler() may return instead; the operation that broke the contract is then
// refused and the policy's state is left exactly as it was, so tests and fuzzers can probe
// misuse without dying. The handler is a runtime setting, not a macro, so two translation units
// can never disagree about it (no ODR trap).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#ifndef QLIMITS_CACHE_LINE_SIZE
// 64 bytes: the line size of every x86-64 and most AArch64 cores. Override project-wide only,
// through the CMake cache variable QLIMITS_CACHE_LINE_SIZE (it becomes an INTERFACE definition,
// so every translation unit sees the same value).
#define QLIMITS_CACHE_LINE_SIZE 64
#endif

namespace qlimits {
inline namespace v0 {

/// Distance that keeps the producer's and the completion path's fields from false sharing.
inline constexpr std::size_t cache_line_size = QLIMITS_CACHE_LINE_SIZE;

/// What a contract handler is told: which rule was broken, in words.
struct contract_violation {
    const char* what;  ///< e.g. "over-completion: completed more than is in flight"
    const char* where; ///< the operation, e.g. "dql::on_completed"
};

/// Signature of a contract handler. It may return; the offending call is then refused.
using contract_handler = void (*)(const contract_violation&) noexcept;

namespace detail {
[[noreturn]] inline void default_contract_handler_impl(const contract_violation& v) noexcept {
    std::fprintf(stderr, "qlimits: contract violated in %s: %s\n", v.where, v.what);
    std::abort();
}
inline void default_contract_handler(const contract_violation& v) noexcept {
    default_contract_handler_impl(v);
}
inline std::atomic<contract_handler>& contract_handler_slot() noexcept {
    static std::atomic<contract_handler> slot{&default_contract_handler};
    return slot;
}
/// Report a broken contract; returns only if the installed handler returns.
[[gnu::cold, gnu::noinline]] inline void contract_failed(const char* where,
                                                         const char* what) noexcept {
    contract_handler_slot().load(std::memory_order_acquire)(contract_violation{what, where});
}
} // namespace detail

/// Install a contract handler for the whole process; returns the previous one.
/// Passing nullptr restores the default (print and abort).
inline contract_handler set_contract_handler(contract_handler h) noexcept {
    if (h == nullptr) h = &detail::default_contract_handler;
    return detail::contract_handler_slot().exchange(h, std::memory_order_acq_rel);
}

} // namespace v0
} // namespace qlimits
