// SPDX-License-Identifier: MIT
// qlimits/detail/futex.hpp: sleep on a 32-bit atomic until it changes, optionally until a
// deadline; wake its sleepers.
//
// Linux: the futex system call on the atomic's own address (FUTEX_WAIT_BITSET with an absolute
// CLOCK_MONOTONIC deadline, which is what std::chrono::steady_clock reads on Linux with
// libstdc++ and libc++). A wait with a deadline therefore blocks instead of polling. Precision:
// the kernel wakes the thread after the deadline plus the thread's timer slack (50 us by default,
// prctl(PR_SET_TIMERSLACK)) plus scheduling delay; docs/design.md has the measured lateness.
// Elsewhere: std::atomic wait/notify, and a deadline wait polls with sleeps of at most 50 us.
//
// wait_until() returns when the value is no longer `expected` (acquire), or at the
// deadline (false). Spurious returns are absorbed by re-checking the value.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <cerrno>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace qlimits {
inline namespace v0 {
namespace detail {

using deadline_clock = std::chrono::steady_clock;

#if defined(__linux__)
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "futex: std::atomic<uint32_t> must be a plain 32-bit word");

// The futex word is the atomic's object representation (a lock-free atomic of the same size).
inline std::uint32_t* futex_word(std::atomic<std::uint32_t>& a) noexcept {
    return reinterpret_cast<std::uint32_t*>(&a);
}
#endif

/// Sleep while `a == expected`, until `deadline` (nullptr: no deadline). False on timeout.
/// `sleepers` counts the threads inside; a waker that finds it zero skips the system call.
inline bool wait_until(std::atomic<std::uint32_t>& a, std::atomic<std::uint32_t>& sleepers,
                       std::uint32_t expected, const deadline_clock::time_point* deadline) noexcept {
    // seq_cst: with the waker's seq_cst exchange and load of `sleepers`, either our load of `a`
    // below sees its new value or it sees us counted (and the futex closes the rest of the race:
    // the kernel re-checks the value before it puts us to sleep).
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    bool changed = true;
#if defined(__linux__)
    timespec ts{};
    if (deadline != nullptr) {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            deadline->time_since_epoch())
                            .count();
        ts.tv_sec = static_cast<time_t>(ns > 0 ? ns / 1'000'000'000 : 0);
        ts.tv_nsec = static_cast<long>(ns > 0 ? ns % 1'000'000'000 : 0);
    }
    while (a.load(std::memory_order_seq_cst) == expected) {
        const long r = ::syscall(SYS_futex, futex_word(a), FUTEX_WAIT_BITSET_PRIVATE, expected,
                                 deadline != nullptr ? &ts : nullptr, nullptr,
                                 FUTEX_BITSET_MATCH_ANY);
        if (r != 0 && errno == ETIMEDOUT) {
            changed = a.load(std::memory_order_acquire) != expected;
            break;
        }
    }
#else
    if (deadline == nullptr) {
        a.wait(expected, std::memory_order_seq_cst);
    } else {
        while (a.load(std::memory_order_seq_cst) == expected) {
            const auto left = *deadline - deadline_clock::now();
            if (left <= left.zero()) {
                changed = false;
                break;
            }
            std::this_thread::sleep_for(std::min<deadline_clock::duration>(
                left, std::chrono::duration_cast<deadline_clock::duration>(
                          std::chrono::microseconds{50})));
        }
    }
#endif
    sleepers.fetch_sub(1, std::memory_order_release);
    // Acquire: pairs with the waker's exchange, so what it did before is visible to the caller.
    (void)a.load(std::memory_order_acquire);
    return changed;
}

/// The wake-up call itself: wake the sleepers of `a` (one, or all), a system call on Linux.
/// Callers check first that somebody sleeps (wake() does).
inline void wake_call(std::atomic<std::uint32_t>& a, bool all) noexcept {
#if defined(__linux__)
    (void)::syscall(SYS_futex, futex_word(a), FUTEX_WAKE_PRIVATE, all ? 0x7fffffff : 1, nullptr,
                    nullptr, 0);
#else
    if (all)
        a.notify_all();
    else
        a.notify_one();
#endif
}

/// Whether a wake of `a` would make the call: somebody sleeps on it (seq_cst, read after the
/// waker changed `a` with a seq_cst read-modify-write).
inline bool has_sleepers(const std::atomic<std::uint32_t>& sleepers) noexcept {
    return sleepers.load(std::memory_order_seq_cst) != 0;
}

/// Wake the sleepers of `a` after changing its value with a seq_cst read-modify-write (one, or
/// all). No system call when nobody sleeps.
inline void wake(std::atomic<std::uint32_t>& a, std::atomic<std::uint32_t>& sleepers,
                 bool all) noexcept {
    if (has_sleepers(sleepers))
        wake_call(a, all);
}

/// A spin-wait hint: lets the sibling hyperthread run and stops hammering a shared line.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

} // namespace detail
} // namespace v0
} // namespace qlimits
