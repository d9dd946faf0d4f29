// Deliberately wrong: try_push is not noexcept (the channel calls it from noexcept code). The
// compiler's message must say so (ring_try_push_is_noexcept). Built only by CTest.
#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"

struct ring_push_may_throw {
    using value_type = int;
    bool try_push(int&&) { return true; }
    bool try_pop(int&) noexcept { return false; }
};

int main() {
    ring_push_may_throw ring;
    qlimits::channel<ring_push_may_throw, qlimits::fixed_limit<>> ch(ring);
    return ch.try_send(1) == qlimits::send_status::ok ? 0 : 1;
}
