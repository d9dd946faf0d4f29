// membarrier(2) denied by a seccomp filter, before and after the channels are built (issue 8,
// finding 1): a one-item ping-pong over two channels must lose no wake-up. Each case runs in a
// forked child, since a seccomp filter cannot be removed; the child's watchdog fails the case
// if no round trip completes for 2 s (a consumer asleep with the item in the ring). The number
// of round trips is QLIMITS_SECCOMP_ROUND_TRIPS (10^7 in CI's gcc Release configuration).
//
// The filter is a raw BPF program installed with prctl(PR_SET_NO_NEW_PRIVS) and
// prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER): membarrier returns ENOSYS (as on a kernel without
// it, or in a sandbox), every other system call is allowed.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>

#include <cerrno>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"

#ifndef QLIMITS_SECCOMP_ROUND_TRIPS
#define QLIMITS_SECCOMP_ROUND_TRIPS 100000
#endif

namespace {
using ring_t = rings::spsc_ring<std::uint64_t, 4>;
using chan = qlimits::channel<ring_t, qlimits::unlimited<>>;

#if defined(__x86_64__)
constexpr std::uint32_t this_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t this_arch = AUDIT_ARCH_AARCH64;
#else
#error "seccomp test: add this architecture's AUDIT_ARCH value"
#endif

bool deny_membarrier() {
    sock_filter code[] = {
        // A foreign architecture's system call numbers mean something else: allow them.
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, this_arch, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

enum exit_code : int { passed = 0, lost_wakeup = 2, wrong_order = 3, wrong_mode = 4, no_filter = 5 };

// Ping-pong: main sends i on `there`, the echo thread sends it back on `back`. Returns an
// exit code for the child.
int ping_pong(chan& there, chan& back, std::uint64_t round_trips) {
    std::atomic<std::uint64_t> progress{0};
    std::atomic<bool> done{false};
    std::thread echo([&] {
        std::uint64_t v = 0;
        while (there.receive(v))
            if (back.send(std::uint64_t{v}) != qlimits::send_status::ok)
                return;
    });
    std::thread dog([&] {
        std::uint64_t last = 0;
        auto since = std::chrono::steady_clock::now();
        while (!done.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            const std::uint64_t now_at = progress.load(std::memory_order_relaxed);
            if (now_at != last) {
                last = now_at;
                since = std::chrono::steady_clock::now();
            } else if (std::chrono::steady_clock::now() - since > std::chrono::seconds(2)) {
                std::fprintf(stderr, "lost wake-up after %llu round trips\n",
                             static_cast<unsigned long long>(now_at));
                std::fflush(stderr);
                ::_exit(lost_wakeup);
            }
        }
    });
    // Let the echo thread fall asleep once, so the failing membarrier is certainly called.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int rc = passed;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < round_trips; ++i) {
        std::uint64_t v = 0;
        if (there.send(std::uint64_t{i}) != qlimits::send_status::ok || !back.receive(v) ||
            v != i) {
            rc = wrong_order;
            break;
        }
        progress.store(i + 1, std::memory_order_relaxed);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    there.close();
    echo.join();
    done.store(true);
    dog.join();
    const auto s1 = there.stats();
    const auto s2 = back.stats();
    std::printf("%llu round trips in %.2f s; consumer sleeps %llu + %llu; membarrier failures "
                "%llu + %llu\n",
                static_cast<unsigned long long>(round_trips), secs,
                static_cast<unsigned long long>(s1.consumer_sleeps),
                static_cast<unsigned long long>(s2.consumer_sleeps),
                static_cast<unsigned long long>(s1.membarrier_failures),
                static_cast<unsigned long long>(s2.membarrier_failures));
    return rc;
}

// Runs `body` in a forked child and returns its exit code (or 100 + signal).
template <class Body>
int in_child(Body body) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int rc = body();
        std::fflush(nullptr);
        ::_exit(rc);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}
} // namespace

TEST_CASE("seccomp: membarrier denied after the channels were built: no lost wake-up") {
    const int rc = in_child([] {
        auto r1 = std::make_unique<ring_t>();
        auto r2 = std::make_unique<ring_t>();
        chan there(*r1), back(*r2);
        const bool started_asymmetric = there.stats().barrier == qlimits::barrier_in_use::membarrier;
        if (!deny_membarrier())
            return int{no_filter};
        const int result = ping_pong(there, back, QLIMITS_SECCOMP_ROUND_TRIPS);
        if (result != passed)
            return result;
        // Where membarrier worked at construction, the first failed F4 switched to fences.
        if (started_asymmetric &&
            (there.stats().barrier != qlimits::barrier_in_use::fences_after_failure ||
             there.stats().membarrier_failures == 0))
            return int{wrong_mode};
        if (!started_asymmetric && there.stats().barrier != qlimits::barrier_in_use::fences)
            return int{wrong_mode};
        return int{passed};
    });
    CHECK(rc == passed);
}

TEST_CASE("seccomp: membarrier denied before the channels were built: fences from the start") {
    const int rc = in_child([] {
        if (!deny_membarrier())
            return int{no_filter};
        auto r1 = std::make_unique<ring_t>();
        auto r2 = std::make_unique<ring_t>();
        chan there(*r1), back(*r2);
        if (there.stats().barrier != qlimits::barrier_in_use::fences)
            return int{wrong_mode};
        const int result = ping_pong(there, back, QLIMITS_SECCOMP_ROUND_TRIPS / 10);
        if (result != passed)
            return result;
        return there.stats().membarrier_failures == 0 ? int{passed} : int{wrong_mode};
    });
    CHECK(rc == passed);
}

TEST_CASE("seccomp: after membarrier fails, an idle consumer sleeps without a deadline again") {
    // The consumer whose membarrier failed sleeps at most 1 ms at a time until the producer
    // acknowledges the switch to fences (its next doorbell); after that its sleeps have no
    // deadline again. A channel that never acknowledged (the doorbell's acknowledge_fences()
    // removed) passed the ping-pongs above, its idle consumer waking 1,000 times a second
    // (review 2026-12-03).
    const int rc = in_child([] {
        auto r1 = std::make_unique<ring_t>();
        chan ch(*r1);
        if (ch.stats().barrier != qlimits::barrier_in_use::membarrier)
            return int{passed}; // membarrier unavailable here: nothing to switch from
        if (!deny_membarrier())
            return int{no_filter};
        std::atomic<int> got{0};
        std::thread consumer([&] {
            std::uint64_t v = 0;
            while (ch.receive(v)) got.fetch_add(1);
        });
        // The consumer goes to sleep on the empty ring: its F4 fails (switching). Waited for,
        // not slept on: a consumer not yet scheduled would fail its F4 after the send below.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (ch.stats().membarrier_failures == 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (ch.stats().membarrier_failures == 0)
            return int{wrong_mode};
        (void)ch.send(std::uint64_t{1}); // the producer acknowledges the switch
        while (got.load() < 1) std::this_thread::yield();
        if (ch.stats().barrier != qlimits::barrier_in_use::fences_after_failure)
            return int{wrong_mode};
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto before = ch.stats().consumer_sleeps;
        std::this_thread::sleep_for(std::chrono::milliseconds(100)); // idle: one sleep at most
        const auto slept = ch.stats().consumer_sleeps - before;
        ch.close();
        consumer.join();
        std::printf("sleeps of an idle consumer over 100 ms after the switch: %llu\n",
                    static_cast<unsigned long long>(slept));
        return slept <= 2 ? int{passed} : int{wrong_mode};
    });
    CHECK(rc == passed);
}
