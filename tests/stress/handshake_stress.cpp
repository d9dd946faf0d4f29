// Issue 14, the fences under load: one-item ping-pongs with a limit of 0. Through a channel
// every round trip runs both handshake windows at once: the producer stops after each send
// (F1: store stopped, re-check) while the consumer completes it (F3: read the state, wake), and
// the consumer sleeps on the empty ring (F4) while the producer's next push rings the doorbell
// (F2). Through a tx_gate: every send stops the NIC queue and re-checks after its fence while
// the completer completes the item behind its own fence and wakes the queue. Random short delays on both sides move each side's fence across the other's window. A
// watchdog fails the test when nothing is received for 1 s (a lost wake-up) instead of hanging.
// Rounds: QLIMITS_HANDSHAKE_ROUNDS in the environment (default 20000, about a second; the
// mutation runs of scripts/mutate.sh set more). docs/design.md §8.8 says what this can and
// cannot show on x86; the exhaustive model is tests/unit/handshake_model_test.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>

#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/limits/fixed.hpp"
#include "stress_support.hpp"

namespace {
std::uint64_t rounds() {
    if (const char* e = std::getenv("QLIMITS_HANDSHAKE_ROUNDS")) {
        const std::uint64_t n = std::strtoull(e, nullptr, 10);
        if (n > 0) return n;
    }
    return 20000;
}
// A delay of 0 to ~1 us of busy work, drawn from a per-thread generator.
void jitter(std::uint64_t& x) noexcept {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL; // Knuth's MMIX LCG
    const unsigned spins = static_cast<unsigned>(x >> 59);     // 0..31
    for (unsigned i = 0; i < spins * 8; ++i)
        qlimits::detail::cpu_relax();
}
} // namespace

TEST_CASE("channel handshakes: one-item ping-pong with limit 0 and random delays") {
    using ring_t = rings::spsc_ring<std::uint64_t, 4>;
    auto ring = std::make_unique<ring_t>();
    qlimits::channel<ring_t, qlimits::fixed_limit<>> ch(*ring, {.limit = 0});
    const std::uint64_t n = rounds();
    std::atomic<std::uint64_t> received{0};
    stress::watchdog dog(stress::no_progress(received, [&] { return received.load() < n; }),
                         [&] { ch.close(); });
    std::thread producer([&] {
        std::uint64_t x = 1;
        for (std::uint64_t i = 0; i < n; ++i) {
            jitter(x);
            if (ch.send(std::uint64_t{i}) != qlimits::send_status::ok) return;
        }
    });
    std::uint64_t x = 2, v = 0, order_errors = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        jitter(x);
        if (!ch.receive(v)) break;
        order_errors += v != i;
        received.store(i + 1, std::memory_order_relaxed);
    }
    producer.join();
    dog.stop();
    CHECK_FALSE(dog.fired());
    CHECK(received.load() == n);
    CHECK(order_errors == 0);
    const auto s = ch.stats();
    MESSAGE("rounds " << n << ", stops " << s.stops << ", restarts " << s.restarts
                      << ", producer wake-ups " << s.producer_wakeups << ", consumer sleeps "
                      << s.consumer_sleeps << ", consumer wake-ups " << s.consumer_wakeups);
    CHECK(s.stops > 0);
}

TEST_CASE("tx_gate handshakes: two items in flight against a limit of 1, random delays") {
    // The completer completes item j once item j + 1 is announced, so that completion races
    // the producer's stop decision for item j + 1 (2 in flight > 1: stop, re-check).
    using gate_t = qlimits::tx_gate<qlimits::fixed_limit<>, stress::nic_queue>;
    stress::nic_queue nic;
    gate_t gate({.limit = 1}, gate_t::time_point{});
    const std::uint64_t n = rounds();
    std::atomic<std::uint64_t> announced{0}, completed{0};
    std::atomic<bool> abort{false};
    stress::watchdog dog(stress::no_progress(completed, [&] { return completed.load() + 1 < n; }),
                         [&] {
                             abort.store(true);
                             nic.wake();
                         });
    std::thread producer([&] {
        std::uint64_t x = 1;
        for (std::uint64_t i = 0; i < n && !abort.load(std::memory_order_relaxed); ++i) {
            jitter(x);
            // Acquire: pairs with wake(); the stack hands a stopped queue nothing.
            while (nic.xoff.load(std::memory_order_acquire) != 0 && !abort.load())
                nic.xoff.wait(1, std::memory_order_acquire);
            announced.store(i + 1, std::memory_order_release); // item i - 1 is fully sent
            (void)gate.sent(nic, 1);
        }
    });
    std::uint64_t x = 2, refused = 0;
    for (std::uint64_t j = 0; j + 1 < n && !abort.load(std::memory_order_relaxed); ++j) {
        while (announced.load(std::memory_order_acquire) < j + 2 && !abort.load())
            std::this_thread::yield();
        if (abort.load()) break;
        jitter(x);
        refused += !gate.completed(nic, 1, gate_t::time_point{});
        completed.store(j + 1, std::memory_order_relaxed);
    }
    producer.join();
    dog.stop();
    refused += !gate.completed(nic, 1, gate_t::time_point{}); // the last item
    CHECK_FALSE(dog.fired());
    CHECK(completed.load() + 1 == n);
    CHECK(refused == 0);
    CHECK(gate.policy().inflight() == 0);
    const auto s = gate.stats();
    MESSAGE("rounds " << n << ", stops " << s.stops << ", restarts " << s.restarts
                      << ", wake-ups " << s.wakeups);
    CHECK(s.stops > 0);
}
