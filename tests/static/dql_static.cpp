// Compile-time tests: if this file compiles, they pass. Concepts (positive and negative),
// noexcept contracts, layout, and the wrap helpers.
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/detail/wrap.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/invariants.hpp"
#include "qlimits/testing/trace.hpp"

namespace {
using qlimits::dql;
using qlimits::limit_policy;
using clock_ms = qlimits::manual_clock<std::chrono::milliseconds>;
using dql_ms = dql<clock_ms>;

// Models.
static_assert(limit_policy<dql<>>);
static_assert(limit_policy<dql_ms>);
static_assert(limit_policy<qlimits::testing::recording<dql_ms>>);
static_assert(limit_policy<qlimits::testing::checked<dql_ms>>);

// Non-models: a policy must be a type with the whole vocabulary.
struct no_available {
    using config_type = int;
    using time_point = clock_ms::time_point;
    using stats_type = int;
    static constexpr std::uint32_t max_object = 1;
    no_available(const int&, time_point) noexcept {}
    bool on_queued(std::uint32_t) noexcept { return true; }
    bool on_queued(std::uint32_t, time_point) noexcept { return true; }
    bool on_completed(std::uint32_t, time_point) noexcept { return true; }
    void reset(time_point) noexcept {}
    [[nodiscard]] std::uint32_t limit() const noexcept { return 0; }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return 0; }
    [[nodiscard]] int stats() const noexcept { return 0; }
};
struct throwing_enqueue : no_available {
    using no_available::no_available;
    [[nodiscard]] std::int64_t available() const noexcept { return 0; }
    bool on_queued(std::uint32_t) { return true; } // not noexcept: rejected
    using no_available::on_queued;
};
struct wrong_avail_type : no_available {
    using no_available::no_available;
    [[nodiscard]] int available() const noexcept { return 0; } // must be exactly int64_t
};
static_assert(!limit_policy<int>);
static_assert(!limit_policy<no_available>);
static_assert(!limit_policy<throwing_enqueue>);
static_assert(!limit_policy<wrong_avail_type>);

// Clocks.
static_assert(qlimits::clock_source<qlimits::jiffy_clock>);
static_assert(!qlimits::clock_source<std::chrono::duration<double>>);
// Tick counts narrower than 64 bits wrap where the policies' modulo-2^64 comparisons do not
// expect it (review 2026-12-03: a 32-bit count made dql's hold window never end): refused.
static_assert(!qlimits::clock_source<qlimits::manual_clock<std::chrono::duration<std::int32_t, std::milli>>>);
static_assert(!qlimits::clock_source<qlimits::manual_clock<std::chrono::duration<std::uint32_t, std::milli>>>);
static_assert(qlimits::clock_source<qlimits::manual_clock<std::chrono::duration<std::uint64_t, std::milli>>>);

// noexcept on every hot-path call.
static_assert(noexcept(std::declval<dql_ms&>().on_queued(1U)));
static_assert(noexcept(std::declval<dql_ms&>().on_completed(1U, std::declval<clock_ms::time_point>())));
static_assert(noexcept(std::declval<const dql_ms&>().available()));
static_assert(noexcept(std::declval<dql_ms&>().reset(std::declval<clock_ms::time_point>())));

// Policies hold atomics: built in place, never copied or moved.
static_assert(!std::is_copy_constructible_v<dql_ms>);
static_assert(!std::is_move_constructible_v<dql_ms>);
static_assert(alignof(dql_ms) == qlimits::cache_line_size);

// Constants and their provenance (kernel DQL_MAX_OBJECT, DQL_MAX_LIMIT).
static_assert(qlimits::dql_max_object == 268'435'455U);
static_assert(qlimits::dql_max_limit == 1'879'048'192U);
static_assert(qlimits::dql_max_limit + qlimits::dql_max_object < 0x8000'0000U);

// Configs are aggregates with designated initializers and a constexpr valid().
static_assert(qlimits::dql_config<std::chrono::milliseconds>{}.valid());
static_assert(!qlimits::dql_config<std::chrono::milliseconds>{.min_limit = 0x7000'0001U}.valid());
static_assert(qlimits::dql_config<std::chrono::nanoseconds>{}.hold_time == std::chrono::seconds{1});
} // namespace
