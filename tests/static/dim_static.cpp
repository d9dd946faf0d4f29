// Compile-time tests of DIM: if this file compiles, they pass. Constexpr table validation, the
// window maths, whole constexpr tuner runs, noexcept contracts and layout.
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/rdma_dim.hpp"
#include "qlimits/dim/stats.hpp"
#include "qlimits/testing/dim_trace.hpp"

namespace {
using namespace std::chrono_literals;
using qlimits::dim_tune_state;
using qlimits::moderation;
using qlimits::net_dim;
using qlimits::net_dim_profile;
using qlimits::rdma_dim;

// Built-in tables: the right size, the Linux values at the ends, default index 1.
static_assert(qlimits::net_dim_rx_eqe_profile.valid() && qlimits::net_dim_rx_cqe_profile.valid() &&
              qlimits::net_dim_tx_eqe_profile.valid() && qlimits::net_dim_tx_cqe_profile.valid());
static_assert(qlimits::rdma_dim_default_profile.valid());
static_assert(net_dim_profile::size() == 5 && qlimits::rdma_dim_profile::size() == 9);
static_assert(qlimits::net_dim_default_profile_ix == 1);
static_assert(qlimits::net_dim_rx_eqe_profile[1] == moderation{8, 256, 0});
static_assert(qlimits::net_dim_tx_cqe_profile[4] == moderation{64, 32, 0});
static_assert(qlimits::rdma_dim_default_profile[0] == moderation{1, 0, 1});
// Every entry of every built-in table, as in Linux lib/dim/net_dim.c (NET_DIM_{RX,TX}_{EQE,CQE}
// _PROFILES) and drivers/infiniband/core/cq.c (rdma_dim_prof): a wrong entry anywhere fails the
// build (mutant profile-rx-eqe).
template <class Table, std::size_t N>
constexpr bool table_is(const Table& t, const moderation (&want)[N]) {
    if (Table::size() != N) return false;
    for (std::size_t i = 0; i < N; ++i)
        if (!(t[i] == want[i])) return false;
    return true;
}
constexpr moderation linux_rx_eqe[] = {{1, 256, 0}, {8, 256, 0}, {64, 256, 0}, {128, 256, 0}, {256, 256, 0}};
constexpr moderation linux_rx_cqe[] = {{2, 256, 0}, {8, 128, 0}, {16, 64, 0}, {32, 64, 0}, {64, 64, 0}};
constexpr moderation linux_tx_eqe[] = {{1, 128, 0}, {8, 128, 0}, {32, 128, 0}, {64, 128, 0}, {128, 128, 0}};
constexpr moderation linux_tx_cqe[] = {{5, 128, 0}, {8, 64, 0}, {16, 32, 0}, {32, 32, 0}, {64, 32, 0}};
constexpr moderation linux_rdma[] = {{1, 0, 1},   {1, 0, 4},   {2, 0, 4},  {2, 0, 8}, {4, 0, 8},
                                     {16, 0, 8},  {16, 0, 16}, {32, 0, 16}, {32, 0, 32}};
static_assert(table_is(qlimits::net_dim_rx_eqe_profile, linux_rx_eqe));
static_assert(table_is(qlimits::net_dim_rx_cqe_profile, linux_rx_cqe));
static_assert(table_is(qlimits::net_dim_tx_eqe_profile, linux_tx_eqe));
static_assert(table_is(qlimits::net_dim_tx_cqe_profile, linux_tx_cqe));
static_assert(table_is(qlimits::rdma_dim_default_profile, linux_rdma));

// User tables are validated at compile time when constexpr.
constexpr net_dim_profile mine{{2, 64}, {8, 64}, {16, 64}, {32, 64}, {64, 64}};
static_assert(mine.valid());
static_assert(mine[3] == moderation{32, 64, 0});
constexpr net_dim_profile four{{2, 64}, {8, 64}, {16, 64}, {32, 64}};
static_assert(!four.valid() && four.error() == qlimits::dim_profile_error::too_few_entries);
constexpr net_dim_profile six{{1}, {2}, {3}, {4}, {5}, {6}};
static_assert(!six.valid() && six.error() == qlimits::dim_profile_error::too_many_entries);
static_assert(!net_dim_profile{}.valid());
static_assert(net_dim_profile{std::array<moderation, 5>{}}.valid());

// Window maths (docs/design.md §5).
static_assert(qlimits::compute_dim_stats({0ns, 0, 0, 0, 0}, {1ms, 64, 6400, 640000, 0})->bpms ==
              640000);
static_assert(!qlimits::compute_dim_stats({5us, 0, 0, 0, 0}, {5us, 64, 1, 1, 0}).has_value());
static_assert(qlimits::compute_dim_stats({0ns, 0, 0, 0, 0}, {7us, 64, 1, 1, 0})->epms == 9143);

// A whole constexpr net run: first window BETTER vs zero -> index 1, handoff, re-seed.
constexpr net_dim run_net() {
    net_dim d;
    (void)d.on_sample({0ns, 0, 0, 0, 0});
    const bool changed = d.on_sample({1ms, 64, 6400, 640000, 0});
    if (!changed || !d.pending()) return net_dim{};
    d.on_applied();
    (void)d.on_sample({2ms, 70, 7000, 700000, 0});
    return d;
}
static_assert(run_net().profile_ix() == 1);
static_assert(run_net().tune_state() == dim_tune_state::going_right);
static_assert(run_net().start_sample().time == 2ms);

// A constexpr tired sequence via decide(): 10 steps, then park tired.
constexpr net_dim run_tired() {
    net_dim d;
    const qlimits::dim_stats s{100, 1000, 64, 0, 0};
    for (int i = 0; i < 11; ++i) (void)d.decide(s);
    return d;
}
static_assert(run_tired().tune_state() == dim_tune_state::parking_tired);
static_assert(run_tired().tired() == 10);

// RDMA starts going right at 0 and turns at the right edge.
static_assert(rdma_dim{}.tune_state() == dim_tune_state::going_right && rdma_dim{}.profile_ix() == 0);
constexpr rdma_dim run_rdma_edge() {
    rdma_dim r;
    std::int32_t c = 100;
    (void)r.decide({0, 0, 100, c, 0});
    for (int i = 0; i < 9; ++i) (void)r.decide({0, 0, 100, c *= 2, 0});
    return r;
}
static_assert(run_rdma_edge().profile_ix() == 8);
static_assert(run_rdma_edge().tune_state() == dim_tune_state::going_left);

// The trace parser is constexpr too.
static_assert(qlimits::testing::parse_dim_line("s 1 2 3 4").directive.bytes == 4);

// noexcept contracts.
static_assert(noexcept(std::declval<net_dim&>().on_sample(qlimits::dim_sample{})));
static_assert(noexcept(std::declval<net_dim&>().on_applied()));
static_assert(noexcept(std::declval<rdma_dim&>().on_completions(1U, std::declval<std::chrono::nanoseconds>())));
static_assert(noexcept(std::declval<net_dim&>().set_profile(mine)));
static_assert(std::is_trivially_copyable_v<net_dim> && std::is_trivially_copyable_v<rdma_dim>);
static_assert(std::is_trivially_copyable_v<qlimits::dim_sample>);

// Layout: the no-decision path reads the first two fields of one small object.
static_assert(sizeof(qlimits::dim_sample) == 24);
static_assert(sizeof(net_dim) <= 128);
} // namespace
