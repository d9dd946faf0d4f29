// Deliberately wrong: a NIC ring with stopped() and stop() but no wake() handed to tx_gate. The
// compiler's message must name the missing member (ring_has_wake). Built only by CTest.
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/limits/fixed.hpp"

struct nic_without_wake {
    bool off = false;
    [[nodiscard]] bool stopped() const noexcept { return off; }
    void stop() noexcept { off = true; }
};

int main() {
    nic_without_wake ring;
    qlimits::tx_gate<qlimits::fixed_limit<>, nic_without_wake> gate({}, {});
    return gate.sent(ring, 1) ? 0 : 1;
}
