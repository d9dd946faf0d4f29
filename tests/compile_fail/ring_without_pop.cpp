// Deliberately wrong: a ring with try_push but no try_pop handed to qlimits::channel. This must
// not compile, and the compiler's message must name the missing member (try_pop), so a user who
// forgets it reads what to add. Built only by the CTest entry in CMakeLists.txt next to it.
#include <cstdint>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"

struct ring_without_pop {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
};

int main() {
    ring_without_pop ring;
    qlimits::channel<ring_without_pop, qlimits::fixed_limit<>> ch(ring);
    return ch.try_send(1) == qlimits::send_status::ok ? 0 : 1;
}
