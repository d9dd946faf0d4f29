// Unit tests of qlimits/dim/{sample,stats,profiles}.hpp. Every expected value is reasoned from
// the behaviour description (docs/design.md §5) in the comments;
// none was produced by kernel code.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "contract_probe.hpp"
#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/rdma_dim.hpp"
#include "qlimits/dim/sample.hpp"
#include "qlimits/dim/stats.hpp"

namespace {
using namespace std::chrono_literals;
using qlimits::dim_sample;
using qlimits::dim_stats;
using qlimits::dim_verdict;

dim_sample at(std::chrono::nanoseconds t, std::uint16_t ev, std::uint32_t pkts, std::uint32_t bytes,
              std::uint32_t comps = 0) {
    return dim_sample{t, ev, pkts, bytes, comps};
}
dim_stats net(std::int32_t ppms, std::int32_t bpms, std::int32_t epms) {
    return dim_stats{ppms, bpms, epms, 0, 0};
}
} // namespace

TEST_CASE("dim stats: rates are rounded up per ms") {
    // 1000 us window: the deltas are the per-ms rates; epms = 64000 / 1000 = 64.
    auto s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(1ms, 64, 6400, 640000));
    REQUIRE(s.has_value());
    CHECK(s->ppms == 6400);
    CHECK(s->bpms == 640000);
    CHECK(s->epms == 64);
    CHECK(s->cpms == 0);
    CHECK(s->cpe_ratio == 0);
    // 3 us window, 1 packet: ceil(1000 / 3) = 334; epms ceil(64000 / 3) = 21334.
    s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(3us, 64, 1, 0));
    REQUIRE(s.has_value());
    CHECK(s->ppms == 334);
    CHECK(s->bpms == 0);
    CHECK(s->epms == 21334);
}

TEST_CASE("dim stats: epms comes from the constant 64, not the events that happened") {
    // 200 events in 1000 us still give epms 64.
    const auto s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(1ms, 200, 10, 10));
    REQUIRE(s.has_value());
    CHECK(s->epms == 64);
}

TEST_CASE("dim stats: window length is truncated to whole us; 0 us gives no stats") {
    CHECK_FALSE(qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(999ns, 64, 5, 5)).has_value());
    // -500 ns truncates toward zero: 0 us.
    CHECK_FALSE(qlimits::compute_dim_stats(at(1000ns, 0, 0, 0), at(500ns, 64, 5, 5)).has_value());
    // 1999 ns is 1 us: ppms = 5 * 1000 / 1 = 5000, epms = 64000.
    const auto s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(1999ns, 64, 5, 5));
    REQUIRE(s.has_value());
    CHECK(s->ppms == 5000);
    CHECK(s->epms == 64000);
}

TEST_CASE("dim stats: a negative window wraps to a huge u32 microsecond count") {
    // -1 us -> 4294967295 us: 1 packet -> ceil(1000 / 4294967295) = 1; epms = 1.
    const auto s = qlimits::compute_dim_stats(at(2us, 0, 0, 0), at(1us, 64, 1, 0));
    REQUIRE(s.has_value());
    CHECK(s->ppms == 1);
    CHECK(s->bpms == 0);
    CHECK(s->epms == 1);
    CHECK(qlimits::detail::dim_window_us(0ns, -1000ns) == 4294967295U);
}

TEST_CASE("dim stats: windows over 2^32 us wrap") {
    // 2^32 us + 1000 us reads as 1000 us.
    const std::chrono::nanoseconds len{(std::int64_t{1} << 32) * 1000 + 1'000'000};
    const auto s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(len, 64, 1000, 0));
    REQUIRE(s.has_value());
    CHECK(s->ppms == 1000);
    CHECK(s->epms == 64);
}

TEST_CASE("dim stats: counter deltas are taken modulo 2^32") {
    // pkts 4294967000 -> 200 is 496 packets; bytes 4294960000 -> 100000 is 107296 bytes; 500 us.
    const auto s = qlimits::compute_dim_stats(at(0ns, 65500, 4294967000U, 4294960000U),
                                              at(500us, 28, 200, 100000));
    REQUIRE(s.has_value());
    CHECK(s->ppms == 992);
    CHECK(s->bpms == 214592);
    CHECK(s->epms == 128);
}

TEST_CASE("dim stats: a rate above INT_MAX wraps negative") {
    // 4294967295 bytes in 1 us: 4294967295000 per ms; modulo 2^32 that is 2^32 - 1000 -> -1000.
    const auto s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0), at(1us, 64, 0, 4294967295U));
    REQUIRE(s.has_value());
    CHECK(s->bpms == -1000);
}

TEST_CASE("dim stats: cpe_ratio, including the 32-bit wrap of cpms * 100") {
    // 640 completions in 640 us: cpms 1000, epms 100, cpe = 1000 * 100 / 100 = 1000.
    auto s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0, 0), at(640us, 64, 0, 0, 640));
    REQUIRE(s.has_value());
    CHECK(s->cpms == 1000);
    CHECK(s->cpe_ratio == 1000);
    // 13 in 640 us: cpms ceil(20.3125) = 21; cpe 21.
    s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0, 0), at(640us, 64, 0, 0, 13));
    REQUIRE(s.has_value());
    CHECK(s->cpms == 21);
    CHECK(s->cpe_ratio == 21);
    // 30000 in 1 us: cpms 30,000,000; * 100 = 3,000,000,000 wraps to -1,294,967,296; as u64
    // 2^64 - 1,294,967,296; / epms 64000 = 288,230,376,131,477; low 32 bits as int: -584,135,787.
    s = qlimits::compute_dim_stats(at(0ns, 0, 0, 0, 0), at(1us, 64, 0, 0, 30000));
    REQUIRE(s.has_value());
    CHECK(s->cpms == 30'000'000);
    CHECK(s->epms == 64000);
    CHECK(s->cpe_ratio == -584'135'787);
}

TEST_CASE("dim stats: significance is >= 11% of the previous value, in integers") {
    CHECK_FALSE(qlimits::dim_significant(110, 100));
    CHECK(qlimits::dim_significant(111, 100));
    CHECK_FALSE(qlimits::dim_significant(1109, 1000));
    CHECK(qlimits::dim_significant(1110, 1000)); // 100 * 110 / 1000 = 11
    CHECK(qlimits::dim_significant(89, 100));    // |-11| -> 11
    CHECK_FALSE(qlimits::dim_significant(90, 100));
    CHECK_FALSE(qlimits::dim_significant(12345, 0)); // zero reference: never
    CHECK_FALSE(qlimits::dim_significant(5, -1));    // negative reference: a huge divisor
    // Up and down are not symmetric: 100 -> 89 is significant, 89 -> 100 is 100*11/89 = 12: yes;
    // 100 -> 90 is not, 90 -> 100 is 100*10/90 = 11: yes.
    CHECK(qlimits::dim_significant(100, 90));
    // A difference of INT_MIN keeps its sign: (u64)(i64)INT_MIN * 100 is still huge -> yes.
    CHECK(qlimits::dim_significant(std::numeric_limits<std::int32_t>::min() + 1, 1));
    // INT_MIN - 1 wraps to INT_MAX: 100 * INT_MAX / 1 > 10 -> yes.
    CHECK(qlimits::dim_significant(std::numeric_limits<std::int32_t>::min(), 1));
}

TEST_CASE("dim stats: net comparison order bytes -> packets -> events") {
    using qlimits::net_dim_compare;
    // previous bpms 0: BETTER when current bytes flow, else SAME (even with packets changing)
    CHECK(net_dim_compare(net(1, 1, 64), net(0, 0, 64)) == dim_verdict::better);
    CHECK(net_dim_compare(net(500, 0, 64), net(1, 0, 64)) == dim_verdict::same);
    // bytes dominate: bytes +20% but packets -50% -> BETTER; bytes -20% -> WORSE
    CHECK(net_dim_compare(net(50, 1200, 64), net(100, 1000, 64)) == dim_verdict::better);
    CHECK(net_dim_compare(net(200, 800, 64), net(100, 1000, 64)) == dim_verdict::worse);
    // bytes within 10%: packets decide
    CHECK(net_dim_compare(net(120, 1050, 64), net(100, 1000, 64)) == dim_verdict::better);
    CHECK(net_dim_compare(net(80, 1050, 64), net(100, 1000, 64)) == dim_verdict::worse);
    // previous ppms 0 (bytes same): BETTER if packets now, else SAME
    CHECK(net_dim_compare(net(3, 1000, 64), net(0, 1000, 64)) == dim_verdict::better);
    CHECK(net_dim_compare(net(0, 1000, 64), net(0, 1000, 64)) == dim_verdict::same);
    // both within 10%: fewer events per ms is better
    CHECK(net_dim_compare(net(100, 1000, 50), net(100, 1000, 64)) == dim_verdict::better);
    CHECK(net_dim_compare(net(100, 1000, 80), net(100, 1000, 64)) == dim_verdict::worse);
    CHECK(net_dim_compare(net(100, 1000, 70), net(100, 1000, 64)) == dim_verdict::same);
    // previous epms 0: SAME
    CHECK(net_dim_compare(net(100, 1000, 5), net(100, 1000, 0)) == dim_verdict::same);
}

TEST_CASE("dim stats: rdma comparison order completions -> completions per event") {
    using qlimits::rdma_dim_compare;
    const auto r = [](std::int32_t cpms, std::int32_t cpe) { return dim_stats{0, 0, 100, cpms, cpe}; };
    CHECK(rdma_dim_compare(r(500, 500), r(0, 0)) == dim_verdict::same); // prev cpms 0
    CHECK(rdma_dim_compare(r(200, 0), r(100, 900)) == dim_verdict::better);
    CHECK(rdma_dim_compare(r(50, 900), r(100, 0)) == dim_verdict::worse);
    CHECK(rdma_dim_compare(r(100, 150), r(100, 100)) == dim_verdict::better);
    CHECK(rdma_dim_compare(r(105, 50), r(100, 100)) == dim_verdict::worse);
    CHECK(rdma_dim_compare(r(105, 105), r(100, 100)) == dim_verdict::same);
    CHECK(rdma_dim_compare(r(100, 999), r(100, 0)) == dim_verdict::same); // cpe ref 0: not significant
}

TEST_CASE("dim sample: make_dim_sample truncates to the kernel widths") {
    const auto s = qlimits::make_dim_sample(7ns, 0x12345, 0x1'0000'0005ULL, 0x2'0000'0006ULL,
                                            0x3'0000'0007ULL);
    CHECK(s.time == 7ns);
    CHECK(s.events == 0x2345);
    CHECK(s.pkts == 5);
    CHECK(s.bytes == 6);
    CHECK(s.comps == 7);
}

TEST_CASE("dim profiles: the built-in tables") {
    using qlimits::moderation;
    CHECK(qlimits::net_dim_rx_eqe_profile[0] == moderation{1, 256, 0});
    CHECK(qlimits::net_dim_rx_eqe_profile[4] == moderation{256, 256, 0});
    CHECK(qlimits::net_dim_rx_cqe_profile[2] == moderation{16, 64, 0});
    CHECK(qlimits::net_dim_tx_eqe_profile[3] == moderation{64, 128, 0});
    CHECK(qlimits::net_dim_tx_cqe_profile[0] == moderation{5, 128, 0});
    CHECK(qlimits::rdma_dim_default_profile[8] == moderation{32, 0, 32});
    CHECK(qlimits::rdma_dim_default_profile[1] == moderation{1, 0, 4});
    using qlimits::dim_cq_period_mode;
    using qlimits::dim_direction;
    CHECK(qlimits::net_dim_default_moderation(dim_direction::rx, dim_cq_period_mode::start_from_eqe) ==
          moderation{8, 256, 0});
    CHECK(qlimits::net_dim_default_moderation(dim_direction::tx, dim_cq_period_mode::start_from_cqe) ==
          moderation{8, 64, 0});
    CHECK(&qlimits::net_dim_builtin_profile(dim_direction::rx, dim_cq_period_mode::start_from_cqe) ==
          &qlimits::net_dim_rx_cqe_profile);
}

TEST_CASE("dim profiles: user tables need exactly 5 entries, checked at run time") {
    std::vector<qlimits::moderation> v{{1, 1, 0}, {2, 2, 0}, {3, 3, 0}, {4, 4, 0}};
    qlimits::net_dim_profile four{std::span<const qlimits::moderation>(v)};
    CHECK_FALSE(four.valid());
    CHECK(four.error() == qlimits::dim_profile_error::too_few_entries);
    CHECK(four.given() == 4);
    CHECK(std::string_view(four.error_message()).find("exactly 5") != std::string_view::npos);
    v.push_back({5, 5, 0});
    const qlimits::net_dim_profile five{std::span<const qlimits::moderation>(v)};
    CHECK(five.valid());
    CHECK(five[4] == qlimits::moderation{5, 5, 0});
    v.push_back({6, 6, 0});
    const qlimits::net_dim_profile six{std::span<const qlimits::moderation>(v)};
    CHECK(six.error() == qlimits::dim_profile_error::too_many_entries);

    // A tuner refuses an invalid table through the contract handler and keeps its own.
    test::contract_probe probe;
    qlimits::net_dim d;
    CHECK_FALSE(d.set_profile(four));
    CHECK(probe.count() == 1);
    CHECK(d.profile() == qlimits::net_dim_rx_eqe_profile);
    CHECK(d.set_profile(five));
    CHECK(d.current_moderation() == qlimits::moderation{1, 1, 0});
    qlimits::rdma_dim r;
    CHECK_FALSE(r.set_profile(qlimits::rdma_dim_profile{{1, 0, 1}}));
    CHECK(probe.count() == 2);
}
