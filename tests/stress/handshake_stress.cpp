// Issue 14, the fences under load: a one-item ping-pong through a channel whose limit is 0, so
// every round trip runs both handshake windows at once: the producer stops after each send
// (F1: store stopped, re-check) while the consumer completes it (F3: read the state, wake), and
// the consumer sleeps on the empty ring (F4) while the producer's next push rings the doorbell
// (F2). Random short delays on both sides move each side's fence across the other's window. A
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
