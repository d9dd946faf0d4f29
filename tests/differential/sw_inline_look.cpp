// Differential driver for software_limit's inline look (running_look() in
// software_limit.hpp): a fast path that must do exactly what the slow path (settle()) does in
// the cases it takes. This program drives one software_limit through a seeded random sequence
// of calls and prints a hash of stats() (and of the clock reads it asked for) every 4096 calls.
// CMake builds it twice, once with QLIMITS_SOFTWARE_LIMIT_NO_INLINE_LOOK (every look through
// settle()), and compare.cmake runs both over seeds and configurations: any difference in
// output is a behaviour the fast path changed. (A review of 2026-12-03 found one this way:
// a producer posting 2^31 past its room.)
//
// The calls: posts that honour available() or ignore it (up to max_object + 1 units, which is
// refused); completions per item, in random chunks or of everything, through on_completed,
// on_taken with a given time and on_taken with a clock function whose reads may find time
// moved on, with random same_take parts; time steps of 0, small, large, backwards and wild;
// rare resets; starts near 2^63 and 2^64 ticks.
// Usage: qlimits_sw_inline_look SEED CONFIG CALLS   (CONFIG 0-9, see configure())
#include <qlimits/limits/software_limit.hpp>

#include "../../bench/lab/sim/rng.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
using clock_ns = qlimits::manual_clock<std::chrono::nanoseconds>;
using policy = qlimits::software_limit<clock_ns>;

using rng = lab::sim::rng; // the lab's seeded generator: the same stream on every platform
bool per_mille(rng& r, unsigned p) noexcept { return r.below(1000) < p; }

qlimits::software_limit_config configure(int id) {
    using namespace std::chrono;
    qlimits::software_limit_config c{};
    switch (id) {
    case 1: c.sojourn_budget = nanoseconds{1}; break;
    case 2: c.min_limit = c.max_limit = 1U << 30; break; // a limit that never bites
    case 3: c.learn_wake_cost = true; break;
    case 4:
        c.sojourn_budget = nanoseconds{300};
        c.window = nanoseconds{2000};
        c.learn_wake_cost = true;
        c.cache_floor = 0;
        c.max_limit = 64;
        c.wake_cost = nanoseconds{0};
        break;
    case 5:
        c.sojourn_budget = nanoseconds{3};
        c.window = nanoseconds{50};
        c.min_limit = 1;
        c.max_limit = qlimits::software_max_limit;
        break;
    case 6:
        c.max_limit = qlimits::software_max_limit;
        c.sojourn_budget = milliseconds{10};
        c.window = milliseconds{100};
        break;
    case 7:
        c.min_limit = 3;
        c.max_limit = 40;
        c.overhead_share_pct = 1;
        c.wake_cost = microseconds{50};
        c.learn_wake_cost = true;
        break;
    case 8: c.min_limit = 64; break;
    case 9:
        c.min_limit = 64;
        c.sojourn_budget = nanoseconds{20};
        c.window = nanoseconds{5000};
        break;
    default: break; // 0: the defaults
    }
    return c;
}

struct hasher { // FNV-1a over the bytes of each value
    std::uint64_t h = 0xcbf29ce484222325ULL;
    template <class T>
    void add(const T& v) noexcept {
        const auto* b = reinterpret_cast<const unsigned char*>(&v);
        for (std::size_t i = 0; i < sizeof v; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
    }
};
} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s SEED CONFIG CALLS\n", argv[0]);
        return 2;
    }
    const std::uint64_t seed = std::strtoull(argv[1], nullptr, 10);
    const int config = std::atoi(argv[2]);
    const std::uint64_t calls = std::strtoull(argv[3], nullptr, 10);
    rng r{seed * 7919 + static_cast<std::uint64_t>(config)};
    rng clock_moves{seed ^ 0xabcdefULL}; // its own stream: reads happen only on some paths

    const std::uint64_t starts[] = {0, 1'000'000'000ULL, ~0ULL - 3'000'000ULL,
                                    (1ULL << 63) - 2'000'000ULL, ~0ULL - (1ULL << 62)};
    std::uint64_t t = starts[r.below(5)];
    const auto at = [](std::uint64_t ticks) {
        return clock_ns::time_point{std::chrono::nanoseconds{static_cast<std::int64_t>(ticks)}};
    };
    policy p(configure(config), at(t));
    std::uint32_t queued = 0, done = 0;
    std::uint64_t reads = 0;
    const auto api = r.below(4); // 0 on_completed, 1 on_taken (clock function), 2 given, 3 mixed
    std::uint64_t phase_left = 0;
    unsigned producer = 0, consumer = 0, steps = 0;
    bool last_was_take = false;
    hasher h;

    for (std::uint64_t i = 0; i < calls; ++i) {
        if (phase_left == 0) { // a new phase: how each side behaves for a while
            phase_left = 100 + r.below(20000);
            producer = static_cast<unsigned>(r.below(5));
            consumer = static_cast<unsigned>(r.below(5));
            steps = static_cast<unsigned>(r.below(5));
        }
        --phase_left;
        const std::uint64_t what = r.below(1000);
        const std::uint32_t lim = p.limit();
        if (what < 2 && per_mille(r, 30)) {
            p.reset(at(t));
            queued = done = 0;
        } else if (what < 420) { // post
            std::uint32_t n = 1;
            switch (producer) {
            case 0: n = static_cast<std::uint32_t>(r.below(8)); break;
            case 1: n = static_cast<std::uint32_t>(r.below(2ULL * lim + 2)); break;
            case 2: n = static_cast<std::uint32_t>(r.below(64)); break; // ignores available()
            case 3: n = 1; break;
            default: // huge, sometimes ignoring available()
                n = per_mille(r, 100) ? qlimits::software_max_object + (per_mille(r, 100) ? 1U : 0U)
                                     : static_cast<std::uint32_t>(
                                           r.below(qlimits::software_max_object));
            }
            const bool honours = producer != 2 && !(producer == 4 && per_mille(r, 300));
            if ((!honours || p.available() >= 0) && p.on_queued(n)) queued += n;
        } else if (what < 880) { // complete or take
            const std::uint32_t inflight = queued - done;
            std::uint32_t n = 0;
            switch (consumer == 4 ? static_cast<unsigned>(r.below(4)) : consumer) {
            case 0: n = inflight; break;
            case 1: n = inflight != 0 ? 1 : 0; break;
            case 2: n = static_cast<std::uint32_t>(r.below(std::uint64_t{inflight} + 1)); break;
            default:
                n = static_cast<std::uint32_t>(
                    std::min<std::uint64_t>(inflight, 1 + r.below(2ULL * lim + 1)));
            }
            if (per_mille(r, 20)) n = 0;
            const auto how = api == 3 ? r.below(3) : api;
            const bool same_take = last_was_take && per_mille(r, 300);
            bool ok = false;
            if (how == 0) {
                ok = p.on_completed(n, at(t));
                last_was_take = false;
            } else if (how == 1) {
                ok = p.on_taken(
                    n,
                    [&]() noexcept {
                        ++reads; // a read may find time moved on
                        if (per_mille(clock_moves, 300))
                            t += clock_moves.below(steps == 4 ? 2'000'000 : 300);
                        return at(t);
                    },
                    same_take);
                last_was_take = true;
            } else {
                ok = p.on_taken(n, at(t), same_take);
                last_was_take = true;
            }
            if (ok) done += n;
        } else { // time passes
            std::uint64_t dt = 0;
            switch (steps) {
            case 0: dt = r.below(3); break;
            case 1: dt = r.below(200); break;
            case 2: dt = per_mille(r, 900) ? r.below(50) : r.below(3'000'000); break;
            case 3: dt = per_mille(r, 700) ? 0 : (per_mille(r, 500) ? 1 : r.below(150'000)); break;
            default: dt = r.below(1'200'000);
            }
            if (per_mille(r, 30)) dt = 0 - r.below(per_mille(r, 200) ? 5'000'000 : 100); // back
            if (per_mille(r, 1)) dt = r.next();                                        // wild
            t += dt;
        }
        const qlimits::software_limit_stats s = p.stats();
        h.add(s.limit), h.add(s.inflight), h.add(s.available), h.add(s.lead), h.add(s.step);
        h.add(s.floor), h.add(s.cap), h.add(s.drain_rate_per_s), h.add(s.sojourn_last_ns);
        h.add(s.stop_frequency), h.add(s.wake_cost_ns), h.add(s.gap), h.add(s.gap_stage);
        h.add(s.sojourn_samples), h.add(s.stops), h.add(s.starvations), h.add(s.budget_cuts);
        h.add(s.rejected_enqueues), h.add(reads), h.add(t);
        if ((i + 1) % 4096 == 0 || i + 1 == calls)
            std::printf("%" PRIu64 " %016" PRIx64 "\n", i + 1, h.h);
    }
    return 0;
}
