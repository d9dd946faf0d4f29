// Capture your own channel's workload for `qlimits-lab whatif`: wrap the policy in
// qlimits::capturing (it records each item entering and each completion), mark when the
// producer wanted to send and when the consumer worked, then write the file.
//   ./qlimits_example_capture_channel my.capture && qlimits-lab whatif my.capture
#include <array>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "qlimits/adapters/channel.hpp"
#include "qlimits/capture/format.hpp"
#include "qlimits/capture/recorder.hpp"
#include "qlimits/limits/dql.hpp"
#include "rings/spsc_ring.hpp"

int main(int argc, char** argv) {
    using ring_t = rings::spsc_ring<std::uint64_t, 256>;
    using policy = qlimits::capturing<qlimits::dql<>>;
    constexpr std::uint64_t n = 100'000;
    ring_t ring;
    qlimits::capture_log log({.items = n, .completions = n, .services = n}); // allocated here
    qlimits::channel<ring_t, policy> ch(ring, policy::config_type{.policy = {}, .log = &log});

    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n; ++i) {
            log.wanted();                    // the producer wants to send now
            (void)ch.send(std::uint64_t{i}); // entry recorded by capturing<>
            log.sent();                      // the send returned
        }
        ch.close();
    });
    std::array<std::uint64_t, 64> batch{};
    std::uint64_t sum = 0;
    while (const std::size_t got = ch.receive_batch(batch, qlimits::completion::per_batch)) {
        const std::uint64_t start = log.now();
        for (std::size_t k = 0; k < got; ++k)
            sum += batch[k] * batch[k] % 7;                 // your work
        log.served(static_cast<std::uint32_t>(got), start); // what the work took
    }
    producer.join();

    std::FILE* f = std::fopen(argc > 1 ? argv[1] : "channel.capture", "wb");
    if (f == nullptr)
        return 1;
    qlimits::write_capture(
        log, [f](std::string_view s) { std::fwrite(s.data(), 1, s.size(), f); },
        "meta policy dql-batch\nmeta ring 256\nmeta batch 64\n");
    const bool written = std::fclose(f) == 0;
    std::printf("%zu items captured (%llu dropped), checksum %llu\n", log.item_count(),
                static_cast<unsigned long long>(log.dropped_items()),
                static_cast<unsigned long long>(sum));
    return written && log.item_count() == n ? 0 : 1;
}
