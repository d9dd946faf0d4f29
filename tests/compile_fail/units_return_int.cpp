// Deliberately wrong: item_units specialized with an `of` that returns int and may throw. The
// compiler's message must name the rule (ring_item_units_are_noexcept_uint32). Built only by
// CTest.
#include <cstdint>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"

struct packet {
    int bytes = 0;
};
template <>
struct qlimits::item_units<packet> {
    static int of(const packet& p) { return p.bytes; }
};

struct packet_ring {
    using value_type = packet;
    bool try_push(packet&&) noexcept { return true; }
    bool try_pop(packet&) noexcept { return false; }
};

int main() {
    packet_ring ring;
    qlimits::channel<packet_ring, qlimits::fixed_limit<>> ch(ring);
    return ch.try_send(packet{1500}) == qlimits::send_status::ok ? 0 : 1;
}
