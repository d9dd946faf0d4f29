// Unit tests of qlimits/adapters/moderation.hpp (hook concept, counter sampler, synchronous and
// deferred handoff) and of qlimits/testing/dim_trace.hpp (the DIM trace reader and replayer).
#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "qlimits/adapters/moderation.hpp"
#include "qlimits/testing/dim_trace.hpp"
#include "contract_probe.hpp"

namespace {
using namespace std::chrono_literals;
using qlimits::moderation;

struct recording_hook {
    std::vector<moderation> applied;
    void apply(const moderation& m) noexcept { applied.push_back(m); }
};
struct flaky_hook { // refuses the first `refuse` calls, like a failed trylock
    int refuse = 0;
    int calls = 0;
    moderation last{};
    bool apply(const moderation& m) noexcept {
        ++calls;
        if (refuse > 0) {
            --refuse;
            return false;
        }
        last = m;
        return true;
    }
};
struct not_a_hook {
    int apply(const moderation&) { return 0; }
};
// apply() may throw: refused, since the moderator calls it from noexcept code (issue 8, item 6).
struct throwing_hook {
    void apply(const moderation&) {}
};
static_assert(!qlimits::moderation_hook<throwing_hook>);

// A ring that already counts what DIM needs (wider than the kernel's counters).
struct my_ring {
    std::uint64_t irqs = 0, rx_pkts = 0, rx_bytes = 0;
    std::uint64_t event_count() const noexcept { return irqs; }
    std::uint64_t packet_count() const noexcept { return rx_pkts; }
    std::uint64_t byte_count() const noexcept { return rx_bytes; }
};
// A type that cannot be edited: joins through a traits specialization.
struct legacy_ring {
    std::uint32_t a = 0, b = 0, c = 0, d = 0;
};
} // namespace

template <>
struct qlimits::dim_counter_traits<legacy_ring> {
    static constexpr std::uint64_t events(const legacy_ring& r) noexcept { return r.a; }
    static constexpr std::uint64_t packets(const legacy_ring& r) noexcept { return r.b; }
    static constexpr std::uint64_t bytes(const legacy_ring& r) noexcept { return r.c; }
    static constexpr std::uint64_t completions(const legacy_ring& r) noexcept { return r.d; }
};

static_assert(qlimits::moderation_hook<recording_hook>);
static_assert(qlimits::moderation_hook<flaky_hook>);
static_assert(!qlimits::moderation_hook<not_a_hook>);
static_assert(!qlimits::moderation_hook<int>);
static_assert(qlimits::dim_tuner<qlimits::net_dim> && qlimits::dim_tuner<qlimits::rdma_dim>);
static_assert(qlimits::dim_counted<my_ring> && qlimits::dim_counted<legacy_ring>);
static_assert(!qlimits::dim_counted<int>);

TEST_CASE("dim adapter: samples from a ring's cumulative counters, truncated") {
    my_ring r{0x1'0005, 0x1'0000'0007ULL, 9, };
    const auto s = qlimits::sample_counters(r, 3us);
    CHECK(s == qlimits::dim_sample{3us, 5, 7, 9, 0});
    const legacy_ring l{1, 2, 3, 4};
    CHECK(qlimits::sample_counters(l, 1ns) == qlimits::dim_sample{1ns, 1, 2, 3, 4});
}

TEST_CASE("dim adapter: synchronous handoff applies inside the call and restarts measuring") {
    qlimits::dim_moderator<qlimits::net_dim, recording_hook> m{recording_hook{}};
    my_ring ring;
    CHECK_FALSE(m.on_ring(ring, 0us));
    ring.irqs = 64;
    ring.rx_pkts = 6400;
    ring.rx_bytes = 640000;
    CHECK(m.on_ring(ring, 1ms)); // BETTER vs zero: index 1, applied at once
    REQUIRE(m.hook().applied.size() == 1);
    CHECK(m.hook().applied[0] == moderation{8, 256, 0});
    CHECK_FALSE(m.tuner().pending());
    CHECK(m.tuner().state() == qlimits::dim_state::start_measure);
    CHECK_FALSE(m.on_ring(ring, 2ms)); // opens the next window
    CHECK(m.tuner().start_sample().time == 2ms);
    CHECK(m.apply_current());
    CHECK(m.hook().applied.size() == 2);
}

TEST_CASE("dim adapter: a hook that refuses keeps the decision pending and is retried") {
    qlimits::dim_moderator<qlimits::net_dim, flaky_hook> m{flaky_hook{2}};
    (void)m.on_sample({0us, 0, 0, 0});
    CHECK(m.on_sample({1ms, 64, 6400, 640000})); // decided; the hook refused (1)
    CHECK(m.pending());
    CHECK_FALSE(m.on_sample({2ms, 70, 7000, 700000})); // retried, refused again (2); ignored
    CHECK(m.pending());
    CHECK_FALSE(m.on_sample({3ms, 80, 8000, 800000})); // retried, applied; this sample opens
    CHECK_FALSE(m.pending());
    CHECK(m.hook().calls == 3);
    CHECK(m.hook().last == moderation{8, 256, 0});
    CHECK(m.tuner().start_sample().time == 3ms);
}

TEST_CASE("dim adapter: deferred handoff publishes, a worker applies, the next sample restarts") {
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, recording_hook, qlimits::dim_handoff::deferred>;
    mod_t m{recording_hook{}};
    CHECK_FALSE(m.run_pending()); // nothing yet
    (void)m.on_sample({0us, 0, 0, 0});
    CHECK(m.on_sample({1ms, 64, 6400, 640000}));
    CHECK(m.pending());
    CHECK(m.hook().applied.empty());
    CHECK_FALSE(m.on_sample({2ms, 200, 1, 1})); // ignored while pending
    CHECK(m.tuner().start_sample().time == 0us);
    CHECK(m.run_pending());
    CHECK_FALSE(m.run_pending());
    REQUIRE(m.hook().applied.size() == 1);
    CHECK(m.hook().applied[0] == moderation{8, 256, 0});
    CHECK_FALSE(m.on_sample({3ms, 300, 2, 2})); // restarts: opens the window here
    CHECK(m.tuner().start_sample().time == 3ms);
    CHECK(m.tuner().state() == qlimits::dim_state::measure_in_progress);
}

TEST_CASE("dim adapter: deferred handoff keeps a decision the hook refused, for the next run") {
    // Kills the mutant moderation-retry: a run_pending() whose hook refuses must leave the
    // decision published (pending) so the worker's next run_pending() applies it.
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, flaky_hook, qlimits::dim_handoff::deferred>;
    mod_t m{flaky_hook{1}};
    (void)m.on_sample({0us, 0, 0, 0});
    CHECK(m.on_sample({1ms, 64, 6400, 640000}));
    CHECK_FALSE(m.run_pending()); // the hook refused
    CHECK(m.pending());
    CHECK(m.run_pending()); // applied now
    CHECK_FALSE(m.pending());
    CHECK(m.hook().calls == 2);
    CHECK(m.hook().last == moderation{8, 256, 0});
}

TEST_CASE("dim adapter: deferred handoff across two threads") {
    struct counting_hook {
        std::atomic<int>* n;
        void apply(const moderation&) noexcept { n->fetch_add(1, std::memory_order_relaxed); }
    };
    std::atomic<int> applied{0};
    std::atomic<bool> done{false};
    qlimits::dim_moderator<qlimits::net_dim, counting_hook, qlimits::dim_handoff::deferred> m{
        counting_hook{&applied}};
    std::thread worker([&] {
        while (!done.load(std::memory_order_acquire)) (void)m.run_pending();
        (void)m.run_pending();
    });
    int decisions = 0;
    std::uint32_t bytes = 0;
    for (std::uint32_t i = 0; i < 20000; ++i) {
        bytes += (i / 640) % 2 == 0 ? 1000U : 50000U; // alternating load: decisions happen
        if (m.on_sample(qlimits::make_dim_sample(std::chrono::microseconds{i * 10}, i, i, bytes)))
            ++decisions;
    }
    done.store(true, std::memory_order_release);
    worker.join();
    CHECK(decisions > 0);
    CHECK(applied.load() == decisions);
}

// Review findings (2026-12-03): the deferred handoff with a worker scheduled once per true
// return, a tuner handed over mid-decision, a table swapped during the handoff, and hooks that
// call back into the moderator.
TEST_CASE("dim adapter: deferred, a worker run once per true return retries a refused hook") {
    // The worker runs only when on_sample() says so (Linux's schedule_work() pattern). Before
    // the fix, the first refusal left the decision published for good: one hook call in 100,000
    // samples, DIM stopped.
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, flaky_hook, qlimits::dim_handoff::deferred>;
    mod_t m{flaky_hook{1}, qlimits::net_dim{qlimits::net_dim_rx_eqe_profile}};
    int runs = 0, applied = 0;
    std::uint64_t ev = 0, pk = 0, by = 0;
    for (int i = 0; i < 100000; ++i) {
        ev += 4;
        pk += 40;
        by += (i / 500) % 2 != 0 ? 60000 : 6000; // the load changes every 500 samples
        if (m.on_sample(qlimits::make_dim_sample(std::chrono::microseconds{i * 10}, ev, pk, by))) {
            ++runs;
            if (m.run_pending()) ++applied;
        }
    }
    CHECK(m.hook().calls == runs);     // every true return found a decision to run
    CHECK(applied == runs - 1);        // all but the refused first call applied
    CHECK(applied > 10);               // DIM kept deciding after the refusal
}

TEST_CASE("dim adapter: deferred, a refused decision is signalled once and retried by a poller too") {
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, flaky_hook, qlimits::dim_handoff::deferred>;
    mod_t m{flaky_hook{2}};
    (void)m.on_sample({0us, 0, 0, 0});
    CHECK(m.on_sample({1ms, 64, 6400, 640000})); // decided, published
    CHECK_FALSE(m.run_pending());                // refused (1)
    CHECK(m.pending());
    CHECK(m.on_sample({2ms, 70, 7000, 700000})); // published again: run the worker
    CHECK_FALSE(m.on_sample({3ms, 71, 7100, 710000})); // still waiting: no second signal
    CHECK_FALSE(m.run_pending());                // refused (2)
    CHECK(m.run_pending());                      // a polling worker retries by itself
    CHECK_FALSE(m.pending());
    CHECK_FALSE(m.on_sample({4ms, 80, 8000, 800000})); // restarts measuring here
    CHECK(m.tuner().start_sample().time == 4ms);
    CHECK(m.hook().calls == 3);
    CHECK(m.hook().last == moderation{8, 256, 0});
}

TEST_CASE("dim adapter: deferred, a tuner handed over with its decision pending is retried") {
    qlimits::net_dim t{qlimits::net_dim_rx_eqe_profile};
    (void)t.on_sample({0us, 0, 0, 0});
    REQUIRE(t.on_sample({1ms, 64, 6400, 640000}));
    REQUIRE(t.pending());
    qlimits::dim_moderator<qlimits::net_dim, recording_hook, qlimits::dim_handoff::deferred> m{
        recording_hook{}, t};
    CHECK(m.pending());
    CHECK(m.on_sample({2ms, 70, 7000, 700000})); // the worker must run
    CHECK(m.run_pending());
    REQUIRE(m.hook().applied.size() == 1);
    CHECK(m.hook().applied[0] == t.current_moderation());
    CHECK_FALSE(m.on_sample({3ms, 80, 8000, 800000}));
    CHECK_FALSE(m.tuner().pending());
    CHECK(m.tuner().start_sample().time == 3ms);
}

TEST_CASE("dim adapter: deferred, the hook gets the table in force when it runs") {
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, recording_hook, qlimits::dim_handoff::deferred>;
    mod_t m{recording_hook{}, qlimits::net_dim{qlimits::net_dim_rx_eqe_profile}};
    (void)m.on_sample({0us, 0, 0, 0});
    REQUIRE(m.on_sample({1ms, 64, 1000, 1000000}));
    const std::uint8_t ix = m.tuner().profile_ix();
    CHECK(m.set_profile(qlimits::net_dim_rx_cqe_profile)); // ethtool swaps the table
    CHECK(m.run_pending());
    REQUIRE(m.hook().applied.size() == 1);
    CHECK(m.hook().applied[0] == qlimits::net_dim_rx_cqe_profile[ix]);
    CHECK(m.hook().applied[0] == m.tuner().current_moderation());
}

TEST_CASE("dim adapter: deferred, a table swapped while the hook runs is applied next") {
    struct swapping_hook {
        std::vector<moderation> applied;
        std::function<void()> during; // runs inside apply(), once
        void apply(const moderation& m) noexcept {
            applied.push_back(m);
            if (during) std::exchange(during, nullptr)();
        }
    };
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, swapping_hook, qlimits::dim_handoff::deferred>;
    mod_t m{swapping_hook{}, qlimits::net_dim{qlimits::net_dim_rx_eqe_profile}};
    (void)m.on_sample({0us, 0, 0, 0});
    REQUIRE(m.on_sample({1ms, 64, 1000, 1000000}));
    const std::uint8_t ix = m.tuner().profile_ix();
    m.hook().during = [&] { CHECK(m.set_profile(qlimits::net_dim_rx_cqe_profile)); };
    CHECK(m.run_pending()); // applied the old table's entry; the swap came too late for it
    CHECK(m.on_sample({2ms, 70, 7000, 700000})); // the new entry is handed off
    CHECK(m.run_pending());
    REQUIRE(m.hook().applied.size() == 2);
    CHECK(m.hook().applied[0] == qlimits::net_dim_rx_eqe_profile[ix]);
    CHECK(m.hook().applied[1] == qlimits::net_dim_rx_cqe_profile[ix]);
    CHECK_FALSE(m.on_sample({3ms, 80, 8000, 800000})); // and measuring restarts
    CHECK(m.tuner().start_sample().time == 3ms);
}

TEST_CASE("dim adapter: deferred, a decision taken back by set_profile() is signalled again") {
    // Review 2026-12-04: set_profile() takes a published decision back from the workers for a
    // moment (the flag idle) while it copies the new table's entry. A worker scheduled for that
    // decision and looking in that moment returns false; the decision is published again, but
    // nothing told the caller to schedule a worker, and every later sample waited for good
    // (two threads: stranded after 1,587 and 8,197 rounds). The next sample now signals it.
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, recording_hook, qlimits::dim_handoff::deferred>;
    mod_t m{recording_hook{}, qlimits::net_dim{qlimits::net_dim_rx_eqe_profile}};
    (void)m.on_sample({0us, 0, 0, 0});
    REQUIRE(m.on_sample({1ms, 64, 1000, 1000000})); // published; the worker is scheduled
    CHECK(m.set_profile(qlimits::net_dim_rx_cqe_profile)); // the worker looks meanwhile: missed
    CHECK(m.pending());
    CHECK(m.on_sample({2ms, 70, 7000, 700000})); // run the worker again
    CHECK_FALSE(m.on_sample({2500us, 71, 7100, 710000})); // once
    CHECK(m.run_pending());
    REQUIRE(m.hook().applied.size() == 1);
    CHECK(m.hook().applied[0] == m.tuner().current_moderation());
    CHECK_FALSE(m.on_sample({3ms, 80, 8000, 800000})); // measuring restarts
    CHECK(m.tuner().start_sample().time == 3ms);
    CHECK_FALSE(m.pending());
}

TEST_CASE("dim adapter: deferred rdma, apply_current()'s hook feeding completions wedges nothing") {
    // Review 2026-12-04: "Reentry" forbids it, and promises samples are ignored while the hook
    // runs; but the deferred rdma path fed the tuner while apply_current()'s hook ran, the tuner
    // (no decision pending) decided on it, and that decision was neither published nor
    // acknowledged: the tuner waited for it for good (no true return in 100,000 calls).
    struct feeding_hook {
        std::function<void()> inner;
        void apply(const moderation&) noexcept {
            if (inner) std::exchange(inner, nullptr)();
        }
    };
    using mod_t = qlimits::dim_moderator<qlimits::rdma_dim, feeding_hook, qlimits::dim_handoff::deferred>;
    mod_t m{feeding_hook{}};
    std::int64_t t = 0;
    for (int i = 0; i < 65; ++i) (void)m.on_completions(10, std::chrono::nanoseconds{t += 1000});
    for (int i = 0; i < 63; ++i) (void)m.on_completions(1000, std::chrono::nanoseconds{t += 1000});
    m.hook().inner = [&] { (void)m.on_completions(1000, std::chrono::nanoseconds{t += 1000}); };
    CHECK(m.apply_current());
    CHECK(m.tuner().pending() == m.pending()); // no decision behind the moderator's back
    int signalled = 0;
    for (int i = 0; i < 10000; ++i) {
        signalled += m.on_completions(static_cast<std::uint64_t>(i % 7) * 100,
                                      std::chrono::nanoseconds{t += 1000});
        (void)m.run_pending();
    }
    CHECK(signalled > 0);
}

TEST_CASE("dim adapter: synchronous, a hook that feeds the moderator is reported and ignored") {
    struct feeding_hook {
        std::function<void()> inner;
        int calls = 0;
        void apply(const moderation&) noexcept {
            ++calls;
            if (inner) inner();
        }
    };
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, feeding_hook>;
    test::contract_probe probe;
    mod_t m{feeding_hook{}, qlimits::net_dim{qlimits::net_dim_rx_eqe_profile}};
    m.hook().inner = [&] {
        CHECK_FALSE(m.on_sample({1500us, 70, 1100, 1100000}));
        CHECK_FALSE(m.apply_current());
    };
    (void)m.on_sample({0us, 0, 0, 0});
    CHECK(m.on_sample({1ms, 64, 1000, 1000000}));
    CHECK(probe.count() == 2);
    CHECK(std::string_view{probe.last().where} == "dim_moderator::apply_current");
    CHECK(m.hook().calls == 1);          // applied once, not again from inside
    CHECK_FALSE(m.tuner().pending());
    CHECK(m.tuner().state() == qlimits::dim_state::start_measure); // no window lost
    m.hook().inner = nullptr;
    CHECK_FALSE(m.on_sample({2ms, 80, 2000, 2000000}));
    CHECK(m.tuner().start_sample().time == 2ms);
}

TEST_CASE("dim adapter: deferred, a hook that runs the handoff again is a no-op") {
    struct reentering_hook {
        std::function<bool()> inner;
        int calls = 0;
        int inner_applied = 0;
        void apply(const moderation&) noexcept {
            ++calls;
            if (inner && inner()) ++inner_applied;
        }
    };
    using mod_t = qlimits::dim_moderator<qlimits::net_dim, reentering_hook, qlimits::dim_handoff::deferred>;
    mod_t m{reentering_hook{}, qlimits::net_dim{qlimits::net_dim_rx_eqe_profile}};
    m.hook().inner = [&] { return m.run_pending() || m.apply_current(); };
    (void)m.on_sample({0us, 0, 0, 0});
    REQUIRE(m.on_sample({1ms, 64, 1000, 1000000}));
    CHECK(m.run_pending());
    CHECK(m.hook().calls == 1); // one decision, one hook call
    CHECK(m.hook().inner_applied == 0);
    CHECK(m.apply_current());   // outside the handoff it applies
    CHECK(m.hook().calls == 2);
}

TEST_CASE("dim adapter: deferred, two workers apply each decision once") {
    struct counting_hook {
        std::atomic<int>* n;
        std::atomic<int>* inside;
        void apply(const moderation&) noexcept {
            CHECK(inside->fetch_add(1) == 0); // never two threads in the hook
            n->fetch_add(1, std::memory_order_relaxed);
            inside->fetch_sub(1);
        }
    };
    std::atomic<int> applied{0}, inside{0};
    std::atomic<bool> done{false};
    qlimits::dim_moderator<qlimits::net_dim, counting_hook, qlimits::dim_handoff::deferred> m{
        counting_hook{&applied, &inside}};
    auto work = [&] {
        while (!done.load(std::memory_order_acquire)) (void)m.run_pending();
        (void)m.run_pending();
    };
    std::thread w1(work), w2(work);
    int decisions = 0;
    std::uint32_t bytes = 0;
    for (std::uint32_t i = 0; i < 20000; ++i) {
        bytes += (i / 640) % 2 == 0 ? 1000U : 50000U;
        if (m.on_sample(qlimits::make_dim_sample(std::chrono::microseconds{i * 10}, i, i, bytes)))
            ++decisions;
    }
    done.store(true, std::memory_order_release);
    w1.join();
    w2.join();
    CHECK(decisions > 0);
    CHECK(applied.load() == decisions);
}

TEST_CASE("dim adapter: rdma through the moderator") {
    qlimits::dim_moderator<qlimits::rdma_dim, recording_hook> m{recording_hook{}};
    (void)m.on_completions(0, 0us);
    for (int i = 1; i <= 64; ++i) (void)m.on_completions(10, std::chrono::microseconds{10 * i});
    bool changed = false;
    for (int i = 65; i <= 128; ++i)
        changed = m.on_completions(20, std::chrono::microseconds{10 * i}) || changed;
    CHECK(changed);
    REQUIRE(m.hook().applied.size() == 1);
    CHECK(m.hook().applied[0] == moderation{1, 0, 4});
}

TEST_CASE("dim trace: parsing") {
    using qlimits::testing::dim_line;
    using qlimits::testing::parse_dim_line;
    CHECK(parse_dim_line("").what == dim_line::kind::none);
    CHECK(parse_dim_line("   # comment").what == dim_line::kind::none);
    auto l = parse_dim_line("s 12 65535 4294967295 7 # tail");
    REQUIRE(l.what == dim_line::kind::directive);
    CHECK(l.directive.time_us == 12);
    CHECK(l.directive.events == 65535);
    CHECK(l.directive.pkts == 4294967295U);
    CHECK(l.directive.bytes == 7);
    l = parse_dim_line("c 9223372036854775 1");
    REQUIRE(l.what == dim_line::kind::directive);
    CHECK(l.directive.comps == 1);
    CHECK(std::string_view(parse_dim_line("c 9223372036854776 1").error) ==
          "time out of range (at most 9223372036854775 us)");
    CHECK(std::string_view(parse_dim_line("s 1 2 3").error) == "missing argument");
    CHECK(std::string_view(parse_dim_line("s 1 2 3 4 5").error) == "too many fields");
    CHECK(std::string_view(parse_dim_line("s 1 65536 3 4").error) ==
          "bad event count (expected unsigned decimal below 2^16)");
    CHECK(std::string_view(parse_dim_line("s 1 2 -3 4").error) ==
          "bad number (expected unsigned decimal below 2^32)");
    CHECK(std::string_view(parse_dim_line("mode fast").error) ==
          "unknown mode (expected rx_eqe, rx_cqe, tx_eqe, tx_cqe or rdma)");
    CHECK(std::string_view(parse_dim_line("q 1").error) == "unknown directive");
    CHECK(std::string_view(parse_dim_line("ix x").error) ==
          "bad number (expected unsigned decimal below 2^32)");
}

TEST_CASE("dim trace: a whole replay, with the error line reported") {
    std::string out;
    const char* why = nullptr;
    const auto bad = qlimits::testing::replay_dim_trace(
        "mode rdma\nix 8\nc 0 0\nix 9\nc 1 1\n", [&out](std::string_view s) { out.append(s); }, &why);
    CHECK(bad == 4);
    CHECK(std::string_view(why) == "profile index out of range (0..8)");
    CHECK(out == "state GOING_RIGHT 8 0 0 0\n");
}
