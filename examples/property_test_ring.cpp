// Property-test your own ring through channel with RapidCheck: random sends and receives on a
// hand-written SPSC ring (swap in yours), the policy wrapped in testing::checked<> so its books
// are verified after every call. Items must come out once each, in order, and nothing may stay
// in flight.
#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/testing/invariants.hpp"
#include "rings/spsc_ring.hpp"

int main() {
    const bool ok = rc::check("FIFO, exactly once, books balanced", [](std::vector<bool> ops) {
        using ring_t = rings::spsc_ring<std::uint64_t, 64>;                 // your ring
        using policy_t = qlimits::testing::checked<qlimits::fixed_limit<>>; // any policy
        ring_t ring;
        qlimits::channel<ring_t, policy_t> ch(ring, {.limit = 16});
        std::uint64_t sent = 0, received = 0, item = 0;
        for (const bool send : ops) {
            if (send && ch.try_send(std::uint64_t{sent}) == qlimits::send_status::ok) ++sent;
            if (!send && ch.try_receive(item)) RC_ASSERT(item == received++);
        }
        while (ch.try_receive(item)) RC_ASSERT(item == received++);
        RC_ASSERT(received == sent);
        RC_ASSERT(ch.inflight() == 0U);
        RC_ASSERT(ch.policy().ok()); // every invariant of checked<> held
    });
    return ok ? 0 : 1;
}
