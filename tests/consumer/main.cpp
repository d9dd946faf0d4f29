// A user's program over the installed package (or add_subdirectory): drives a dql the way a
// driver would, and uses the public test aids the way a user's own tests would: records a
// tx_gate running on the default clock, replays the recording through checked<dql<>> and
// fixed_limit without editing it, and runs the fuzz entry point's checks on some bytes.
#include <qlimits/qlimits.hpp>
#include <qlimits/testing/fuzz.hpp>
#include <qlimits/testing/invariants.hpp>
#include <qlimits/testing/trace.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {
struct nic_queue {
    bool off = false;
    bool stopped() const noexcept { return off; }
    void stop() noexcept { off = true; }
    void wake() noexcept { off = false; }
};

template <class Policy>
bool replays(const std::string& trace, qlimits::testing::limit_replayer<Policy>& r) {
    return qlimits::testing::replay_limit_trace(r, trace, [](std::string_view) {}, false, nullptr,
                                                [](std::size_t, const char*) {}) == 0;
}
} // namespace

int main() {
    using clock = qlimits::manual_clock<std::chrono::milliseconds>;
    qlimits::dql<clock> q({.min_limit = 3000}, clock::time_point{});
    q.on_queued(1500);
    q.on_completed(1500, clock::time_point{std::chrono::milliseconds{1}});
    std::printf("qlimits %d: limit %u\n", qlimits::version, q.limit());
    if (q.limit() != 3000) return 1;

    // Record a tx_gate on the default clock (jiffy_clock), completing in rounds.
    nic_queue ring;
    qlimits::tx_gate<qlimits::testing::recording<qlimits::dql<>>, nic_queue> gate(
        {}, qlimits::jiffy_clock::now());
    auto t = qlimits::jiffy_clock::now();
    for (int round = 0; round < 50; ++round) {
        std::uint32_t posted = 0;
        for (; !ring.stopped() && posted < 64 * 1500; posted += 1500) gate.sent(ring, 1500);
        t += std::chrono::milliseconds{1};
        gate.completed(ring, posted, t);
    }
    const std::string& trace = gate.policy().sink().text;
    qlimits::testing::limit_replayer<qlimits::testing::checked<qlimits::dql<>>> checked;
    qlimits::testing::limit_replayer<qlimits::fixed_limit<>> fixed;
    if (!replays(trace, checked) || !checked.policy().ok()) return 2;
    if (checked.policy().limit() != gate.policy().limit()) return 3;
    if (!replays(trace, fixed)) return 4;

    // The fuzz entry point's checks, on a few bytes.
    const std::uint8_t bytes[] = {0, 220, 5, 0, 0, 5, 3, 0, 0, 0, 3, 0, 0, 0, 0, 4, 1, 0, 0, 0};
    if (qlimits::testing::check_limit_policy_bytes<qlimits::dql<>>(bytes, sizeof bytes).failure)
        return 5;
    std::printf("recorded %zu bytes of trace; replayed through checked<dql<>> and fixed\n",
                trace.size());
    return 0;
}
