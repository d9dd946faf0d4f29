// RapidCheck properties of net_dim and rdma_dim: the index stays in bounds, nothing is decided
// before 64 events, replay is deterministic, and only counter differences matter (wrap
// invariance), over random sample streams.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/rdma_dim.hpp"
#include "qlimits/testing/dim_trace.hpp"

namespace {
using qlimits::dim_sample;
using qlimits::net_dim;
using qlimits::rdma_dim;

// One raw step of a net stream: time advance (us, sometimes backwards), events, pkts, bytes
// increments. Increments come from a few scales so every comparison outcome shows up.
using net_step = std::tuple<std::int32_t, std::uint16_t, std::uint32_t, std::uint32_t, bool>;

struct net_stream {
    std::vector<dim_sample> samples;
};

net_stream realize(const std::vector<net_step>& steps, dim_sample origin) {
    net_stream s;
    dim_sample cur = origin;
    for (const auto& [dt, dev, dp, db, big] : steps) {
        cur.time += std::chrono::microseconds{dt % 3000};
        cur.events = static_cast<std::uint16_t>(cur.events + (big ? dev : dev % 70));
        cur.pkts += big ? dp : dp % 20000;
        cur.bytes += big ? db : db % 3'000'000;
        s.samples.push_back(cur);
    }
    return s;
}

// Feed a tuner as the replay does (apply at once, restart measuring); record every tuning.
std::vector<qlimits::dim_tuning> drive(net_dim& d, const std::vector<dim_sample>& samples) {
    std::vector<qlimits::dim_tuning> out;
    for (const dim_sample& s : samples) {
        if (d.on_sample(s)) d.on_applied();
        out.push_back(d.tuning());
    }
    return out;
}
} // namespace

TEST_CASE("dim properties: the net index always stays within 0..4") {
    CHECK(rc::check("net index in bounds", [](const std::vector<net_step>& steps, std::uint8_t ix,
                                              std::uint8_t table) {
        net_dim d{qlimits::net_dim_builtin_profile(
                      table % 2 ? qlimits::dim_direction::rx : qlimits::dim_direction::tx,
                      table % 4 < 2 ? qlimits::dim_cq_period_mode::start_from_eqe
                                    : qlimits::dim_cq_period_mode::start_from_cqe),
                  static_cast<std::uint8_t>(ix % 5)};
        const auto s = realize(steps, {});
        for (const dim_sample& x : s.samples) {
            const bool changed = d.on_sample(x);
            RC_ASSERT(d.profile_ix() < 5);
            RC_ASSERT(d.tired() <= 10);
            RC_ASSERT(changed == d.pending());
            if (changed) d.on_applied();
        }
    }));
}

TEST_CASE("dim properties: the rdma index always stays within 0..8 and never parks") {
    CHECK(rc::check("rdma index in bounds",
                    [](const std::vector<std::tuple<std::uint32_t, std::uint16_t>>& calls) {
                        rdma_dim r;
                        std::int64_t t = 0;
                        for (const auto& [n, dt] : calls) {
                            t += dt % 50;
                            for (int k = 0; k < 8; ++k) { // 8 calls per step: windows close often
                                if (r.on_completions(n % (1U << (k * 3 + 2)),
                                                     std::chrono::microseconds{t + k}))
                                    r.on_applied();
                                RC_ASSERT(r.profile_ix() < 9);
                                RC_ASSERT(r.tune_state() == qlimits::dim_tune_state::going_right ||
                                          r.tune_state() == qlimits::dim_tune_state::going_left);
                            }
                        }
                    }));
}

TEST_CASE("dim properties: nothing is decided before 64 events") {
    CHECK(rc::check("net: no decision below 64 events", [](const std::vector<net_step>& warmup,
                                                           const std::vector<std::uint8_t>& gaps,
                                                           std::uint16_t ev0) {
        net_dim d;
        (void)drive(d, realize(warmup, {std::chrono::nanoseconds{0}, ev0, 0, 0, 0}).samples);
        // Open a fresh window, then feed samples whose events total fewer than 64.
        if (d.pending()) d.on_applied();
        dim_sample s = d.start_sample();
        s.time += std::chrono::milliseconds{1};
        s.events = static_cast<std::uint16_t>(s.events + 200);
        if (d.on_sample(s)) d.on_applied();
        if (d.state() == qlimits::dim_state::start_measure) (void)d.on_sample(s);
        RC_ASSERT(d.state() == qlimits::dim_state::measure_in_progress);
        const auto tuning = d.tuning();
        const auto prev = d.prev_stats();
        const auto start = d.start_sample();
        unsigned total = 0;
        for (const std::uint8_t g : gaps) {
            if (total + g % 16 >= 64) break;
            total += g % 16;
            s.events = static_cast<std::uint16_t>(start.events + total);
            s.time += std::chrono::microseconds{g};
            s.pkts += 1000U * g;
            s.bytes += 100000U * g;
            RC_ASSERT(!d.on_sample(s));
        }
        RC_ASSERT(d.tuning() == tuning);
        RC_ASSERT(d.prev_stats() == prev);
        RC_ASSERT(d.start_sample() == start);
    }));
    CHECK(rc::check("rdma: no decision in the first 64 calls", [](const std::vector<std::uint32_t>& n) {
        rdma_dim r;
        std::int64_t t = 0;
        for (std::size_t i = 0; i < n.size() && i < 64; ++i)
            RC_ASSERT(!r.on_completions(n[i], std::chrono::microseconds{t += 7}));
        RC_ASSERT(r.tuning() == rdma_dim{}.tuning());
        RC_ASSERT(r.prev_stats() == qlimits::dim_stats{});
    }));
}

TEST_CASE("dim properties: replay is deterministic") {
    CHECK(rc::check("same trace, same output", [](const std::vector<net_step>& steps, bool rx) {
        std::string text = rx ? "mode rx_cqe\n" : "mode tx_eqe\n";
        for (const dim_sample& s : realize(steps, {}).samples) {
            if (s.time.count() < 0) continue; // the format has unsigned times
            text += "s " + std::to_string(s.time.count() / 1000) + " " + std::to_string(s.events) +
                    " " + std::to_string(s.pkts) + " " + std::to_string(s.bytes) + "\n";
        }
        std::string a, b;
        const char* why = nullptr;
        const auto ra = qlimits::testing::replay_dim_trace(
            text, [&a](std::string_view s) { a.append(s); }, &why);
        const auto rb = qlimits::testing::replay_dim_trace(
            text, [&b](std::string_view s) { b.append(s); }, &why);
        RC_ASSERT(ra == 0U);
        RC_ASSERT(rb == 0U);
        RC_ASSERT(a == b);
    }));
}

TEST_CASE("dim properties: only counter differences matter (wrap invariance)") {
    CHECK(rc::check("net: offsets on every counter and the clock change nothing",
                    [](const std::vector<net_step>& steps, std::uint16_t ev, std::uint32_t pk,
                       std::uint32_t by, std::int32_t t_us) {
                        net_dim a, b;
                        const auto x = realize(steps, {});
                        const auto y = realize(steps, {std::chrono::microseconds{t_us}, ev, pk, by, 0});
                        RC_ASSERT(drive(a, x.samples) == drive(b, y.samples));
                        RC_ASSERT(a.prev_stats() == b.prev_stats());
                    }));
    CHECK(rc::check("rdma: a completion counter offset changes nothing",
                    [](const std::vector<std::uint8_t>& n, std::uint32_t offset) {
                        rdma_dim a, b;
                        (void)a.on_completions(0, std::chrono::microseconds{0});
                        (void)b.on_completions(offset, std::chrono::microseconds{0});
                        std::int64_t t = 0;
                        for (int rep = 0; rep < 4; ++rep) {
                            for (const std::uint8_t c : n) {
                                t += 3;
                                const auto at = std::chrono::microseconds{t};
                                const bool ca = a.on_completions(c, at);
                                const bool cb = b.on_completions(c, at);
                                RC_ASSERT(ca == cb);
                                if (ca) {
                                    a.on_applied();
                                    b.on_applied();
                                }
                                RC_ASSERT(a.tuning() == b.tuning());
                            }
                        }
                    }));
}
