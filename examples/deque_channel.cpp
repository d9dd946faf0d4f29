// A mutex-protected std::deque (rings/locked_deque.hpp: a plain struct joined by a ring_traits
// specialization) under classic DQL, with try_send showing why it refused, and a consumer that
// waits with a deadline.
#include <chrono>
#include <iostream>
#include <thread>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"
#include "rings/locked_deque.hpp"

int main() {
    rings::locked_deque<int> ring;
    ring.capacity = 64;
    qlimits::channel<rings::locked_deque<int>, qlimits::dql<>> ch(ring);
    std::thread producer([&] {
        int over_limit = 0;
        for (int i = 0; i < 100'000;) {
            const auto r = ch.try_send(int{i});
            if (r == qlimits::send_status::ok) {
                ++i;
                continue;
            }
            over_limit += r == qlimits::send_status::over_limit ? 1 : 0; // else ring_full
            std::this_thread::yield();
        }
        std::cout << "producer refused " << over_limit << " times by the limit\n";
    });
    int v = 0, expect = 0;
    while (expect < 100'000)
        if (ch.receive(v, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)))
            if (v != expect++)
                return 1; // in order, exactly once
    producer.join();
    std::cout << "limit " << ch.limit() << ", inflight " << ch.inflight() << '\n';
    return 0;
}
