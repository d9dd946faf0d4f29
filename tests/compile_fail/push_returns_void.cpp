// Deliberately wrong: try_push returns void, so a full ring cannot be told apart. The
// compiler's message must say so (ring_try_push_returns_bool). Built only by CTest.
#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"

struct ring_push_returns_void {
    using value_type = int;
    void try_push(int&&) noexcept {}
    bool try_pop(int&) noexcept { return false; }
};

int main() {
    ring_push_returns_void ring;
    qlimits::channel<ring_push_returns_void, qlimits::fixed_limit<>> ch(ring);
    return ch.try_send(1) == qlimits::send_status::ok ? 0 : 1;
}
