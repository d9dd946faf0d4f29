// Deliberately wrong: a ring_traits specialization whose units() returns int. It must be refused
// by name (ring_units_is_noexcept_uint32), not passed over for item_units, which would count
// every 1500-byte packet as one unit. Built only by CTest.
#include <cstdint>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"

struct packet {
    int bytes = 0;
};
struct opaque_ring {
    bool push(packet&&) noexcept { return true; }
    bool pop(packet&) noexcept { return false; }
};
template <>
struct qlimits::ring_traits<opaque_ring> {
    using value_type = packet;
    static bool try_push(opaque_ring& r, packet&& p) noexcept { return r.push(std::move(p)); }
    static bool try_pop(opaque_ring& r, packet& p) noexcept { return r.pop(p); }
    static int units(const packet& p) noexcept { return p.bytes; }
};

int main() {
    opaque_ring ring;
    qlimits::channel<opaque_ring, qlimits::fixed_limit<>> ch(ring);
    return ch.try_send(packet{1500}) == qlimits::send_status::ok ? 0 : 1;
}
