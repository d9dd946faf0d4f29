// boost::lockfree::spsc_queue (a ring we cannot edit) joined through the ring_traits
// specialization in rings/boost_ring.hpp; packets counted in bytes through item_units; a fixed
// byte budget; the consumer completes per item.
#include <cstdint>
#include <iostream>
#include <thread>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"
#include "rings/boost_ring.hpp"

struct packet {
    std::uint32_t len = 0;
};
template <> // the limit counts bytes, not packets
struct qlimits::item_units<packet> {
    static std::uint32_t of(const packet& p) noexcept { return p.len; }
};

int main() {
    using ring_t = boost::lockfree::spsc_queue<packet, boost::lockfree::capacity<1024>>;
    ring_t ring;
    qlimits::channel<ring_t, qlimits::fixed_limit<>> ch(ring, {.limit = 16 * 1500}); // 24 KB
    constexpr int n = 200'000;
    std::thread producer([&] {
        for (int i = 0; i < n; ++i)
            (void)ch.send(packet{64 + static_cast<std::uint32_t>(i % 1437)});
        ch.close();
    });
    packet p;
    std::uint64_t bytes = 0;
    while (ch.receive(p))
        bytes += p.len; // one completion per packet
    producer.join();
    const auto s = ch.stats();
    std::cout << bytes << " bytes, " << s.stops << " stops at " << s.limit << " bytes in flight\n";
    return s.inflight == 0 ? 0 : 1;
}
