// Shared by the stress tests: the item type, the per-test share of QLIMITS_STRESS_ITEMS, and a
// watchdog that turns a lost wake-up (a side asleep although it could run) into a test failure
// instead of a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "qlimits/adapters/ring_traits.hpp"

#ifndef QLIMITS_STRESS_ITEMS
#define QLIMITS_STRESS_ITEMS 10000000
#endif

namespace stress {

/// Items moved by the whole stress suite. Each test takes a share in per mille of it; the
/// shares add up to about 1200, so the suite moves about 1.2 x QLIMITS_STRESS_ITEMS items
/// (CI's TSan job sizes its run with this one number).
inline constexpr std::uint64_t total_items = QLIMITS_STRESS_ITEMS;
constexpr std::uint64_t share(std::uint64_t permille) noexcept {
    const std::uint64_t n = total_items * permille / 1000;
    return n < 1000 ? 1000 : n;
}

/// A packet with a sequence number (to prove order and exactly-once) and a size in bytes.
struct packet {
    std::uint64_t seq = 0;
    std::uint32_t bytes = 0;
};
inline constexpr std::uint32_t max_packet = 1500;
/// Sizes spread over [64, 1500] so limits measured in bytes are crossed at varying points.
constexpr std::uint32_t bytes_for(std::uint64_t seq) noexcept {
    return 64 + static_cast<std::uint32_t>((seq * 2654435761U) % (max_packet - 64 + 1));
}

/// Samples `stuck()` every 2 ms; if it holds continuously for 1 s, sets fired() and calls
/// `rescue()` once (which must unblock the test's threads, e.g. close the channel). If the test
/// has not stopped the watchdog 5 s after the rescue (a thread blocked where close() cannot
/// reach it: a futex wait whose flag was cleared without the wake), the process exits with a
/// failure at once instead of hanging until ctest's timeout.
template <class Stuck, class Rescue>
class watchdog {
public:
    watchdog(Stuck stuck, Rescue rescue)
        : stuck_(stuck), rescue_(rescue), thread_([this] { run(); }) {}
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;
    ~watchdog() { stop(); }
    void stop() {
        done_.store(true);
        if (thread_.joinable())
            thread_.join();
    }
    [[nodiscard]] bool fired() const noexcept { return fired_.load(); }

private:
    void run() {
        using clock = std::chrono::steady_clock;
        auto since = clock::time_point{};
        bool holding = false;
        while (!done_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            if (!stuck_()) {
                holding = false;
                continue;
            }
            const auto now = clock::now();
            if (!holding) {
                holding = true;
                since = now;
            } else if (now - since >= std::chrono::seconds(1)) {
                fired_.store(true);
                rescue_();
                const auto rescued = clock::now();
                while (!done_.load()) {
                    if (clock::now() - rescued >= std::chrono::seconds(5)) {
                        std::fprintf(stderr, "stress watchdog: still blocked 5 s after the "
                                             "rescue; failing the run\n");
                        std::fflush(stderr);
                        std::_Exit(EXIT_FAILURE);
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
                return;
            }
        }
    }
    Stuck stuck_;
    Rescue rescue_;
    std::atomic<bool> done_{false};
    std::atomic<bool> fired_{false};
    std::thread thread_;
};

// The queue-stopped flag of a NIC TX queue. wake() is idempotent and wakes a waiting producer.
struct nic_queue {
    std::atomic<std::uint32_t> xoff{0};
    [[nodiscard]] bool stopped() const noexcept {
        return xoff.load(std::memory_order_relaxed) != 0;
    }
    void stop() noexcept { xoff.store(1, std::memory_order_relaxed); }
    void wake() noexcept {
        // Release: pairs with the acquire wait in the producer, which then sees the completion.
        if (xoff.exchange(0, std::memory_order_release) != 0)
            xoff.notify_one();
    }
};

/// A `stuck()` condition: nothing received since the previous sample while `in_flight()` says
/// work is waiting (items sent and not received, or a run not yet complete). Held for the
/// watchdog's 1 s it means no progress for 1 s, whatever the channel's flags say (issue 14: with
/// the doorbell's futex wake removed, `consumer_asleep` is already cleared while the consumer
/// stays blocked, so the flag-based conditions never fire).
template <class InFlight>
class no_progress {
public:
    no_progress(const std::atomic<std::uint64_t>& received, InFlight in_flight)
        : received_(&received), in_flight_(in_flight) {}
    bool operator()() {
        const std::uint64_t now = received_->load(std::memory_order_relaxed);
        const bool same = now == last_;
        last_ = now;
        return same && in_flight_();
    }

private:
    const std::atomic<std::uint64_t>* received_;
    InFlight in_flight_;
    std::uint64_t last_ = ~std::uint64_t{0};
};

} // namespace stress

template <>
struct qlimits::item_units<stress::packet> {
    static constexpr std::uint32_t of(const stress::packet& p) noexcept { return p.bytes; }
};
