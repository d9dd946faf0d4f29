// A user's program: includes the umbrella header and drives a dql the way a driver would.
#include <qlimits/qlimits.hpp>

#include <cstdio>

int main() {
    using clock = qlimits::manual_clock<std::chrono::milliseconds>;
    qlimits::dql<clock> q({.min_limit = 3000}, clock::time_point{});
    q.on_queued(1500);
    q.on_completed(1500, clock::time_point{std::chrono::milliseconds{1}});
    std::printf("qlimits %d: limit %u\n", qlimits::version, q.limit());
    return q.limit() == 3000 ? 0 : 1;
}
