// Record a live tx_gate (default jiffy clock, real time) with testing::recording, then replay the
// recording through dql and fixed_limit: the same traffic, each policy's decisions.
#include <chrono>
#include <iostream>
#include <thread>
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/testing/trace.hpp"
namespace qt = qlimits::testing;
struct nic_queue { // the driver's queue state (one thread here: a plain flag will do)
    bool off = false;
    bool stopped() const noexcept { return off; }
    void stop() noexcept { off = true; }
    void wake() noexcept { off = false; }
};
template <class Policy> // the limit Policy ends with when it sees the recorded traffic
std::uint32_t replayed_limit(std::string_view trace) {
    qt::limit_replayer<Policy> r;
    const auto skip = [](auto...) {}; // state lines and notes
    return qt::replay_limit_trace(r, trace, skip, false, nullptr, skip) ? 0 : r.policy().limit();
}
int main() {
    nic_queue q;
    using recorded_dql = qt::recording<qlimits::dql<>>; // writes every call to a string
    qlimits::tx_gate<recorded_dql, nic_queue> gate({}, qlimits::jiffy_clock::now());
    for (std::uint32_t round = 0, inflight = 0; round < 30; ++round) {
        for (; !q.stopped(); inflight += 1500)                         // post until stopped
            if (!gate.sent(q, 1500)) return 1; // refused: nothing counted (never at 1500 B)
        std::this_thread::sleep_for(std::chrono::microseconds(300));   // the device sends
        const std::uint32_t done = inflight < 30000 ? inflight : 30000; // 20 packets a round
        gate.completed(q, done, qlimits::jiffy_clock::now());
        inflight -= done;
    }
    const std::string& trace = gate.policy().sink().text; // the recording
    const std::uint32_t live = gate.policy().limit(), dql = replayed_limit<qlimits::dql<>>(trace);
    std::cout << "live dql " << live << ", replayed dql " << dql << ", fixed "
              << replayed_limit<qlimits::fixed_limit<>>(trace) << " bytes\n";
    return live == dql ? 0 : 1;
}
