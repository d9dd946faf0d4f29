// SPDX-License-Identifier: MIT
// qlimits/testing/rapidcheck.hpp: RapidCheck generators for limit-policy traces and
// configurations, for your own property tests. Optional: include it only where RapidCheck
// (Debian librapidcheck-dev; CMake `find_package(rapidcheck)`, target `rapidcheck`) is found;
// nothing else in qlimits includes it.
//
//   rc::check("my policy keeps its invariants", [] {
//       const auto trace = *qlimits::testing::gen::limit_trace();
//       qlimits::testing::limit_replayer<qlimits::testing::checked<my_policy>> r;
//       for (const auto& d : trace)
//           if (const char* why = r.apply(d).error) RC_FAIL(why);
//       RC_ASSERT(r.policy().ok());
//   });
//
// Every generated trace is valid for every policy whose max_object is at least the shape's
// max_units (65536 by default; dql's, fixed_limit's and software_limit's are far larger): no
// completion exceeds what the trace has put in flight (counted conservatively from the last
// reset or init: `init` resets dql alone), no policy ever holds 2^31 units or more in flight
// (counted from the last reset: the other policies keep what was in flight at an `init`), as
// their 32-bit counters need,
// enqueues stay within max_units, and configuration directives a policy lacks are skipped by
// the replayer with a note. Stall thresholds stay within 65535 of the policy's ticks, dql's
// bound: set trace_shape::policy_tick_ns for a clock finer than dql's 1 ms jiffy (a
// nanosecond clock can have none but `stall 0`, off, in a trace of 1 ms ticks; a review of
// 2026-12-04 found `stall 299` refused through dql<steady_clock_source>). Half the traces start near the 32-bit wrap
// (trace_shape::origins). For a policy with a smaller max_object set max_units to it: an
// enqueue the policy refuses is still counted in flight here, so a later completion of it
// would be an over-completion. Generators map raw random numbers through a deterministic
// function, so RapidCheck's shrinking yields short, still valid counterexamples.
#pragma once

#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/testing/trace.hpp"

namespace qlimits {
inline namespace v0 {
namespace testing {
namespace gen {

/// What a generated trace may contain.
struct trace_shape {
    std::uint32_t max_units = 65536;  ///< largest enqueue (clamped to dql_max_object); at most
                                      ///< your policy's max_object
    std::uint64_t max_step_ticks = 1001; ///< largest `t` step (trace ticks)
    bool configure = true;            ///< min/max/hold/stall/init directives
    bool resets = true;               ///< reset directives
    /// Half the traces start with `origin V`, V at most 300,000 units below 2^32, so the
    /// policy's 32-bit counters wrap inside the trace (RapidCheck's own numbers are small at
    /// small sizes and almost never get there). Replayers of policies without rebase() skip
    /// it with a note.
    bool origins = true;
    /// Length of one tick of the replayed policy's clock, in ns (default: dql's jiffy_clock,
    /// 1 ms). Stall thresholds are drawn from 0 to min(299, 65535 x policy_tick_ns / 1 ms)
    /// trace ticks (rounded down), so that dql (at most 65535 of its ticks) takes every one.
    std::uint64_t policy_tick_ns = 1'000'000;
};

namespace detail {
using raw_step = std::tuple<std::uint8_t, std::uint32_t, std::uint32_t>;

/// The deterministic map from raw numbers to a valid trace (see the file comment).
inline std::vector<limit_directive> realize(const std::vector<raw_step>& steps,
                                            const trace_shape& shape) {
    std::vector<limit_directive> out;
    out.reserve(steps.size());
    // Two counts, since `init` resets dql alone (the replayer skips it for the other
    // policies): `inflight` is what every policy surely has in flight (since the last reset or
    // init), the bound of every completion; `held` what some policy may have in flight (since
    // the last reset), kept below 2^31 (review 2026-12-05: one count, zeroed by `init`, let
    // fixed_limit and software_limit pass 2^31 and then fail on a valid-looking `c`).
    std::uint64_t inflight = 0;
    std::uint64_t held = 0;
    const std::uint32_t max_units =
        shape.max_units < dql_max_object ? shape.max_units : dql_max_object;
    if (shape.origins && !steps.empty() && std::get<1>(steps.front()) % 2 == 0)
        out.push_back({limit_op::origin, std::uint32_t{0} - std::get<2>(steps.front()) % 300'000U});
    for (const auto& [kind, a, b] : steps) {
        switch (kind % 12) {
        case 0: case 1: case 2: case 3: { // enqueue: packet sizes, sometimes anything allowed
            static constexpr std::uint32_t sizes[] = {1, 64, 1500, 1500, 9000, 65536};
            std::uint32_t n = b % 4 == 0
                                  ? static_cast<std::uint32_t>(a % (max_units + std::uint64_t{1}))
                                  : sizes[a % 6];
            if (n > max_units) n = max_units;
            // Below 2^31 units in flight: a policy's counters are 32-bit (completions of more
            // than 2^32 could not even be written as a `c` line). What an `init` left in
            // flight in the policies that skip it only a reset takes away.
            if (held + n >= (std::uint64_t{1} << 31)) {
                if (inflight != 0) {
                    out.push_back({limit_op::complete, inflight});
                    held -= inflight;
                    inflight = 0;
                } else if (shape.resets) {
                    out.push_back({limit_op::reset, 0});
                    held = 0;
                }
                break;
            }
            out.push_back({limit_op::queue, n});
            inflight += n;
            held += n;
            break;
        }
        case 4: case 5: case 6: { // complete part or all of what is in flight
            const std::uint64_t n = b % 3 == 0 ? inflight : a % (inflight + 1);
            out.push_back({limit_op::complete, n});
            inflight -= n;
            held -= n;
            break;
        }
        case 7: case 8: { // time passes
            // Steps past 2^32 - 1 take both numbers; a bound of 2^64 - 1 takes any (its + 1
            // wrapped to 0: a division by zero, review 2026-12-05). Below 2^32 the map is as it
            // was, so existing seeds draw the same traces.
            const std::uint64_t m = shape.max_step_ticks;
            const std::uint64_t wide = (std::uint64_t{b} << 32) | a;
            out.push_back({limit_op::tick, m < (std::uint64_t{1} << 32) ? a % (m + 1)
                                           : m == ~std::uint64_t{0} ? wide
                                                                     : wide % (m + 1)});
            break;
        }
        case 9:
            if (!shape.configure) break;
            out.push_back({b % 2 == 0 ? limit_op::min : limit_op::max, a % (1U << 20)});
            break;
        case 10:
            if (!shape.configure) break;
            if (b % 3 == 0) {
                // Without resets, what an init strands in the other policies never leaves: an
                // init only while less than 2^30 is held, so 2^30 of room always remains and
                // enqueues are never shut out for the rest of the trace (review 2026-12-05).
                if (!shape.resets && held >= (std::uint64_t{1} << 30)) break;
                out.push_back({limit_op::init, a % 2000});
                inflight = 0;
            } else {
                // Up to 65535 policy ticks in trace ticks (1 ms each), at most 299.
                const std::uint64_t stall_span = 65535 * shape.policy_tick_ns / 1'000'000 + 1;
                const std::uint32_t stall_cap =
                    stall_span < 300 ? static_cast<std::uint32_t>(stall_span) : 300U;
                if (b % 3 == 1) out.push_back({limit_op::hold, a % 300});
                else out.push_back({limit_op::stall, a % stall_cap});
            }
            break;
        default:
            if (!shape.resets) break;
            out.push_back({limit_op::reset, 0});
            inflight = 0;
            held = 0;
            break;
        }
    }
    return out;
}
} // namespace detail

/// A valid limit-policy trace (see trace_shape and the file comment).
inline rc::Gen<std::vector<limit_directive>> limit_trace(trace_shape shape = {}) {
    return rc::gen::map(rc::gen::arbitrary<std::vector<detail::raw_step>>(),
                        [shape](const std::vector<detail::raw_step>& steps) {
                            return detail::realize(steps, shape);
                        });
}

/// A valid dql configuration (valid() holds): bounds within dql_max_limit, sometimes min > max
/// (allowed, as in sysfs), hold time up to 2 s and stall threshold up to 300 ticks of Duration.
template <class Duration>
rc::Gen<dql_config<Duration>> dql_config() {
    return rc::gen::map(
        rc::gen::tuple(rc::gen::inRange<std::uint32_t>(0, 1U << 20),
                       rc::gen::inRange<std::uint32_t>(0, dql_max_limit + 1),
                       rc::gen::inRange<std::int64_t>(0, 2001),
                       rc::gen::inRange<std::int64_t>(0, 301)),
        [](const std::tuple<std::uint32_t, std::uint32_t, std::int64_t, std::int64_t>& t) {
            qlimits::dql_config<Duration> c{};
            c.min_limit = std::get<0>(t);
            c.max_limit = std::get<1>(t);
            c.hold_time =
                std::chrono::duration_cast<Duration>(std::chrono::milliseconds{std::get<2>(t)});
            c.stall_threshold = Duration{static_cast<typename Duration::rep>(std::get<3>(t))};
            return c;
        });
}

/// A valid fixed_limit configuration: any limit up to fixed_max_limit, small ones often.
inline rc::Gen<fixed_limit_config> fixed_config() {
    return rc::gen::map(rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(0, 1U << 17),
                                       rc::gen::inRange<std::uint32_t>(0, fixed_max_limit + 1)),
                        [](std::uint32_t limit) {
                            fixed_limit_config c{};
                            c.limit = limit;
                            return c;
                        });
}

/// The trace as text in the public format (one directive per line).
inline std::string to_text(const std::vector<limit_directive>& trace) {
    std::string text;
    for (const limit_directive& d : trace) text += to_trace_line(d);
    return text;
}

} // namespace gen
} // namespace testing
} // namespace v0
} // namespace qlimits
