// moodycamel::ReaderWriterQueue (a ring we cannot edit) joined through the ring_traits
// specialization in rings/moodycamel_ring.hpp; a dql limit counted in packets; the consumer
// takes batches and completes once per batch.
#include <array>
#include <cstdint>
#include <iostream>
#include <span>
#include <thread>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"
#include "rings/moodycamel_ring.hpp"

int main() {
    moodycamel::ReaderWriterQueue<std::uint64_t> ring(1024); // 1024 slots, preallocated
    qlimits::channel<moodycamel::ReaderWriterQueue<std::uint64_t>, qlimits::dql<>> ch(ring);
    constexpr std::uint64_t n = 200'000;
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n; ++i)
            (void)ch.send(std::uint64_t{i});
        ch.close();
    });
    std::array<std::uint64_t, 64> batch{};
    std::uint64_t got = 0, expect = 0;
    while (const std::size_t k = ch.receive_batch(std::span(batch), qlimits::completion::per_batch))
        for (std::size_t j = 0; j < k; ++j, ++got)
            if (batch[j] != expect++)
                return 1;
    producer.join();
    const auto s = ch.stats();
    std::cout << got << " items, " << s.stops << " stops, limit " << s.limit << " packets\n";
    return got == n && s.inflight == 0 ? 0 : 1;
}
