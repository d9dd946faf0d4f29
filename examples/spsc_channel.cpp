// A hand-written SPSC ring (rings/spsc_ring.hpp, picked up by its member functions) between two
// threads, its depth limited by classic DQL counting packets. The consumer takes batches and
// reports one completion per batch; it sleeps when the ring is empty.
#include <array>
#include <cstdint>
#include <iostream>
#include <thread>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"
#include "rings/spsc_ring.hpp"

int main() {
    using ring_t = rings::spsc_ring<std::uint64_t, 256>;
    ring_t ring;                                       // the user's ring; qlimits only wraps it
    qlimits::channel<ring_t, qlimits::dql<>> ch(ring); // default dql config, jiffy clock
    constexpr std::uint64_t n = 1'000'000;

    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n; ++i)
            (void)ch.send(std::uint64_t{i}); // waits if over
        ch.close();                          // receive_batch returns 0 once the ring is drained
    });
    std::array<std::uint64_t, 64> batch{};
    std::uint64_t sum = 0;
    while (const std::size_t got = ch.receive_batch(batch, qlimits::completion::per_batch))
        for (std::size_t k = 0; k < got; ++k)
            sum += batch[k];
    producer.join();

    const auto s = ch.stats();
    std::cout << "limit " << s.limit << " packets, stops " << s.stops << ", producer wake-ups "
              << s.producer_wakeups << ", consumer sleeps " << s.consumer_sleeps << '\n';
    return sum == n * (n - 1) / 2 ? 0 : 1;
}
