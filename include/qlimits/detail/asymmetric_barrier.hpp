// SPDX-License-Identifier: MIT
// qlimits/detail/asymmetric_barrier.hpp: a store-load barrier whose cost sits on the rare side.
//
// A Dekker handshake (each side stores its flag, then loads the other's) needs a full barrier
// on both sides. When one side runs on every item (a producer about to wake a sleeping
// consumer) and the other only on its way to sleep, the full barrier can move entirely to the
// rare side: Linux membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every running thread of
// the process execute a full barrier before it returns, so the frequent side needs only a
// compiler barrier. The pairing: light side `store A; light(); load B`, heavy side `store B;
// heavy(); load A`: at least one of the two loads sees the other side's store. (The technique
// of folly's asymmetricLightBarrier/asymmetricHeavyBarrier and liburcu's membarrier flavour.)
//
// Costs (measured on the development VM, docs/benchmarks.md): heavy() is a system call that
// interrupts (IPI) every CPU currently running a thread of this process: a few hundred ns for
// the caller, more with other threads running, and a stall on every busy-polling core of the
// process. register_process() (the first available() call) can take milliseconds: the kernel
// waits for an RCU grace period. Callers that cannot afford either use full fences instead.
//
// heavy() can FAIL after available() said yes: a seccomp filter installed later (sandboxes do
// this) can make membarrier return an error at any time. heavy() then returns false after a
// local full fence, and the caller must not rely on the pairing for that handshake: the light
// side may have run only a compiler barrier (channel.hpp switches to full fences for good and
// bounds the one sleep whose handshake was not made).
#pragma once

#include <atomic>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace qlimits {
inline namespace v0 {
namespace detail {

class asymmetric_barrier {
public:
    /// Whether heavy() can be a process-wide barrier (registers the process once; the first
    /// call may block for milliseconds). False where membarrier is missing or refused.
    [[nodiscard]] static bool available() noexcept {
        static const bool ok = register_process();
        return ok;
    }
    /// The frequent side: orders only the compiler (the heavy side does the hardware's part).
    static void light() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }
    /// The rare side: a full barrier on every running thread of the process. True when that
    /// happened; false when the system call failed (only a local full fence was run).
    [[nodiscard]] static bool heavy() noexcept {
#if defined(__linux__)
        if (::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
            return true;
#endif
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return false;
    }

private:
    static bool register_process() noexcept {
#if defined(__linux__)
        const long cmds = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
            return false;
        return ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
        return false;
#endif
    }
};

} // namespace detail
} // namespace v0
} // namespace qlimits
