// Rows of the interleaved A/B comparison of two versions of qlimits::channel
// (scripts/channel_ab.sh). This file is compiled twice into one binary: once against the
// previous headers with -Dv0=ab_prev_v0 -DAB_SIDE=ab_prev (the library's inline namespace
// renamed, so both versions coexist), once against the current ones with -DAB_SIDE=ab_cur.
// Each row moves 2^20 8-byte items from a producer thread (CPU 1) to the consumer (CPU 0).
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <sched.h>

#include "../../examples/rings/spsc_ring.hpp"
#include "channel_ab.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/software_limit.hpp"
#include "qlimits/limits/fixed.hpp"

namespace AB_SIDE {
namespace {
using item = std::uint64_t;
using ring_t = rings::spsc_ring<item, 1024>;
using ring16_t = rings::spsc_ring<item, 16>; // a small ring: a slipping consumer finds it full
constexpr std::uint64_t n_items = 1U << 20;
volatile item sink;

void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<unsigned>(cpu), &set);
    (void)::sched_setaffinity(0, sizeof set, &set);
}
// Spin as bm_channel_* does (a pause per retry, a yield after 64); returns the failed tries.
template <class F>
std::uint64_t spin(F&& done) {
    std::uint64_t k = 0;
    for (; !done(); ++k) {
        qlimits::detail::cpu_relax();
        if (k >= 64)
            std::this_thread::yield();
    }
    return k;
}
template <class P, class C>
ab::result run_pair(P produce, C consume, std::uint64_t items = n_items) {
    pin(0);
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<std::uint64_t> full{0};
    std::thread t([&] {
        pin(1);
        full = produce();
    });
    const std::uint64_t empty = consume();
    t.join();
    const double ns = std::chrono::duration<double, std::nano>(
                          std::chrono::steady_clock::now() - t0).count();
    return {ns / static_cast<double>(items), static_cast<double>(empty) / static_cast<double>(items),
            static_cast<double>(full.load()) / static_cast<double>(items)};
}
template <class Pol, class Ring = ring_t>
using chan = qlimits::channel<Ring, Pol>;

// Item by item on both sides, spinning: push(item) and pop(out) say whether they succeeded.
template <class Push, class Pop>
ab::result stream(Push push, Pop pop) {
    return run_pair(
        [&] {
            std::uint64_t f = 0;
            for (item i = 0; i < n_items; ++i)
                f += spin([&] { return push(item{i}); });
            return f;
        },
        [&] {
            std::uint64_t e = 0;
            item v = 0, sum = 0;
            for (item i = 0; i < n_items; ++i) {
                e += spin([&] { return pop(v); });
                sum += v;
            }
            sink = sum;
            return e;
        });
}
template <class Ring = ring_t>
ab::result raw() {
    auto r = std::make_unique<Ring>();
    return stream([&](item x) { return r->try_push(std::move(x)); },
                  [&](item& v) { return r->try_pop(v); });
}
template <class Pol, class Ring = ring_t>
ab::result per_item(typename Pol::config_type cfg, qlimits::consumer_wait w) {
    auto r = std::make_unique<Ring>();
    auto ch = std::make_unique<chan<Pol, Ring>>(*r, cfg, w);
    return stream([&](item x) { return ch->try_send(std::move(x)) == qlimits::send_status::ok; },
                  [&](item& v) { return ch->try_receive(v); });
}
template <class Pol, class Ring = ring_t>
ab::result batched(typename Pol::config_type cfg) {
    auto r = std::make_unique<Ring>();
    auto ch = std::make_unique<chan<Pol, Ring>>(*r, cfg);
    return run_pair(
        [&] {
            std::uint64_t f = 0;
            for (item i = 0; i < n_items; ++i) {
                const bool more = (i + 1) % 32 != 0;
                f += spin([&] { return ch->try_send(item{i}, more) == qlimits::send_status::ok; });
            }
            ch->flush();
            return f;
        },
        [&] {
            std::uint64_t e = 0;
            std::array<item, 32> buf{};
            item sum = 0;
            for (std::uint64_t k = 0; k < n_items;) {
                std::size_t n = 0;
                e += spin([&] {
                    return (n = ch->try_receive_batch(buf, qlimits::completion::per_batch)) != 0;
                });
                for (std::size_t j = 0; j < n; ++j)
                    sum += buf[j];
                k += n;
            }
            sink = sum;
            return e;
        });
}
template <class Pol>
ab::result blocking(typename Pol::config_type cfg) {
    auto r = std::make_unique<ring_t>();
    auto ch = std::make_unique<chan<Pol>>(*r, cfg);
    return run_pair(
        [&] {
            for (item i = 0; i < n_items; ++i)
                (void)ch->send(item{i});
            return std::uint64_t{0};
        },
        [&] {
            item v = 0, sum = 0;
            for (item i = 0; i < n_items; ++i) {
                (void)ch->receive(v);
                sum += v;
            }
            sink = sum;
            return std::uint64_t{0};
        });
}
// One item there and back through two blocking channels: ns per round trip.
ab::result ping_pong() {
    constexpr std::uint64_t trips = 200000;
    using unl = qlimits::unlimited<>;
    auto r1 = std::make_unique<ring_t>(), r2 = std::make_unique<ring_t>();
    auto there = std::make_unique<chan<unl>>(*r1), back = std::make_unique<chan<unl>>(*r2);
    return run_pair(
        [&] {
            item v = 0;
            for (item i = 0; i < trips; ++i) {
                (void)there->send(item{i});
                (void)back->receive(v);
            }
            return std::uint64_t{0};
        },
        [&] {
            item v = 0;
            for (item i = 0; i < trips; ++i) {
                (void)there->receive(v);
                (void)back->send(item{v});
            }
            return std::uint64_t{0};
        },
        trips);
}
} // namespace

std::vector<ab::row> rows() {
    using unl = qlimits::unlimited<>;
    using fixed = qlimits::fixed_limit<>;
    using dql = qlimits::dql<>;
    const fixed::config_type fixed_never_bites{.limit = 1U << 30};
    const dql::config_type dql_never_bites{.min_limit = 1U << 30};
    using sw = qlimits::software_limit<>;
    const sw::config_type sw_never_bites{.min_limit = 1U << 30, .max_limit = 1U << 30};
    constexpr auto sleep = qlimits::consumer_wait::sleep;
    constexpr auto spin_wait = qlimits::consumer_wait::spin;
    return {
        {"raw_ring", [] { return raw(); }},
        {"raw_ring16", [] { return raw<ring16_t>(); }},
        {"ping_pong_round_trip", [] { return ping_pong(); }},
        {"unlimited_per_item", [] { return per_item<unl>({}, sleep); }},
        {"unlimited_per_item_spin", [] { return per_item<unl>({}, spin_wait); }},
        {"fixed_per_item", [=] { return per_item<fixed>(fixed_never_bites, sleep); }},
        {"dql_per_item", [=] { return per_item<dql>(dql_never_bites, sleep); }},
        {"dql_default_per_item", [] { return per_item<dql>({}, sleep); }},
        {"unlimited_batched", [] { return batched<unl>({}); }},
        {"fixed_batched", [=] { return batched<fixed>(fixed_never_bites); }},
        {"dql_batched", [=] { return batched<dql>(dql_never_bites); }},
        {"dql_default_batched", [] { return batched<dql>({}); }},
        {"blocking_unlimited", [] { return blocking<unl>({}); }},
        {"blocking_fixed", [=] { return blocking<fixed>(fixed_never_bites); }},
        {"blocking_dql", [=] { return blocking<dql>(dql_never_bites); }},
        {"blocking_dql_default", [] { return blocking<dql>({}); }},
        {"sw_per_item", [=] { return per_item<sw>(sw_never_bites, sleep); }},
        {"sw_default_per_item", [] { return per_item<sw>({}, sleep); }},
        {"sw_batched", [=] { return batched<sw>(sw_never_bites); }},
        {"blocking_sw", [=] { return blocking<sw>(sw_never_bites); }},
        {"blocking_sw_default", [] { return blocking<sw>({}); }},
        {"unlimited_per_item_ring16", [] { return per_item<unl, ring16_t>({}, sleep); }},
        {"unlimited_batched_ring16", [] { return batched<unl, ring16_t>({}); }},
        {"fixed_batched_ring16", [=] { return batched<fixed, ring16_t>(fixed_never_bites); }},
    };
}
} // namespace AB_SIDE
