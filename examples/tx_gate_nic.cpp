// tx_gate in front of a (simulated) NIC TX ring: the driver posts packets and calls sent(); the
// device completes in rounds and the driver calls completed(). The gate stops the queue when
// DQL's limit is reached and wakes it when a completion makes room; DQL learns the limit.
#include <atomic>
#include <cstdint>
#include <iostream>

#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/limits/dql.hpp"

struct nic_queue { // the driver's queue state: has stopped/stop/wake, so no specialization
    // Atomic: with the completion path on another thread (as in a driver) the gate calls these
    // from both sides at once. Relaxed is enough: the gate's own fences order the decisions.
    std::atomic<bool> xoff{false};
    bool stopped() const noexcept { return xoff.load(std::memory_order_relaxed); }
    void stop() noexcept { xoff.store(true, std::memory_order_relaxed); }
    void wake() noexcept { xoff.store(false, std::memory_order_relaxed); } // + reschedule qdisc
};

int main() {
    using clock = qlimits::manual_clock<std::chrono::milliseconds>; // simulated time
    nic_queue q;
    qlimits::tx_gate<qlimits::dql<clock>, nic_queue> gate({}, clock::now());
    std::uint32_t posted = 0; // bytes on the ring not yet completed
    for (int round = 0; round < 10; ++round) {
        while (!q.stopped()) { // the stack hands packets until the gate stops the queue
            if (!gate.sent(q, 1500))
                return 1; // refused (an item above max_object): nothing counted, nothing to post
            posted += 1500;
        }
        clock::advance(std::chrono::milliseconds(1)); // the device drains the ring...
        gate.completed(q, posted, clock::now());      // ...and reports one completion round
        posted = 0;
        std::cout << "round " << round << ": limit " << gate.policy().limit() << " bytes\n";
    }
    return gate.stats().wakeups == 10 ? 0 : 1;
}
