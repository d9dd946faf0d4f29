// SPDX-License-Identifier: MIT
// qlimits/testing/fuzz.hpp: a ready-made fuzz entry point for any limit policy.
//
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
//       return qlimits::testing::fuzz_limit_policy<my_policy>(data, size);
//   }
//
// The bytes drive a checked<Policy> (testing/invariants.hpp) through the calls an adapter
// makes: enqueues (with and without time, some above max_object), completions (most within
// what is in flight, some beyond it, which must be refused), time steps (small and huge) and
// resets. Completions are reported, for the whole input, through on_completed() or, where the
// policy has them (software_limit), through on_taken() with the time read on demand, whole
// takes or takes in parts (same_take), as channel reports them: the top two bits of the first
// byte choose. A policy that takes timed wake calls (accepts_wake_call: software_limit) is
// also told some, of any length, negative ones included, where a time step's op byte has bit 6
// set (the time then stands still), and one that takes the consumer's idle
// (accepts_consumer_idle: software_limit) some idle waits the same way where bit 6 is clear and
// bit 5 set. A policy that has may_post() (fixed_limit, dql) is asked it instead of
// available() by an admitting enqueue whose op byte has the high bit set. A policy with the
// adapters' two other cheaper forms (fixed_limit, unlimited) gets its completions within what
// is in flight through on_completed(n, now, known_counted) when the top two bits of the first
// byte are 2 or 3 (unless it takes on_taken(), as channel prefers too), and take-backs
// (on_unqueued()) where an over-completion's op byte has the high bit set: part of what is in
// flight, or with bit 6 too more than it, which must change nothing. Any broken invariant
// prints the rule and the call number to stderr and traps, which libFuzzer reports as a crash
// with the input that caused it.
// check_limit_policy_bytes() is the same without the trap, for unit tests and for replaying a
// finding.
//
// Books: policies count in 32 bits (as the kernel's dql), so no policy can tell an
// over-completion once 2^32 units or more are in flight; adapters must keep it from happening
// (their job, not the policy's). The fuzzer therefore never puts 2^31 units or more in flight:
// an enqueue that would is skipped.
//
// Input layout: a sequence of steps, each one op byte followed by up to four value bytes
// (little-endian; a short tail is zero-padded), so every byte string is a valid input and
// small mutations make small changes.
//
// The contract handler: over-completions go to the process-wide contract handler. For the
// duration of the call a returning handler is installed (and the previous one restored), so
// the refusal path is exercised instead of aborting. Fuzzers run one input at a time on one
// thread; do not call this while other threads rely on the handler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/testing/invariants.hpp"

namespace qlimits {
inline namespace v0 {
namespace testing {

/// What a byte string did to a checked policy.
struct fuzz_outcome {
    const char* failure = nullptr; ///< the first broken rule (nullptr: none)
    std::uint64_t call = 0;        ///< the 1-based call that broke it
    std::uint64_t steps = 0;       ///< steps decoded from the input
};

namespace detail {
struct fuzz_handler_scope {
    static void ignore(const contract_violation&) noexcept {}
    contract_handler previous = set_contract_handler(&ignore);
    fuzz_handler_scope() = default;
    fuzz_handler_scope(const fuzz_handler_scope&) = delete;
    fuzz_handler_scope& operator=(const fuzz_handler_scope&) = delete;
    ~fuzz_handler_scope() { set_contract_handler(previous); }
};
} // namespace detail

/// Drive checked<Policy>{cfg, t0} with the steps encoded in data[0, size) (see the file
/// comment) and report the first broken invariant. Never traps, never aborts.
template <limit_policy Policy>
fuzz_outcome check_limit_policy_bytes(const std::uint8_t* data, std::size_t size,
                                      const typename Policy::config_type& cfg = {}) noexcept {
    using time_point = typename Policy::time_point;
    using rep = typename time_point::duration::rep;
    detail::fuzz_handler_scope handler;
    std::uint64_t ticks = 0;
    const auto now = [&ticks] {
        return time_point{typename time_point::duration{static_cast<rep>(ticks)}};
    };
    checked<Policy> p{cfg, now()};
    fuzz_outcome out;
    std::size_t i = 0;
    std::uint64_t outstanding = 0; // units the policy accepted and has not completed
    const auto queue = [&](std::uint32_t n, bool timed) {
        if (outstanding + n >= (std::uint64_t{1} << 31)) return; // see "Books" above
        if (timed ? p.on_queued(n, now()) : p.on_queued(n)) outstanding += n;
    };
    // How completions are reported, for the whole input (see the file comment).
    const unsigned style = size == 0 ? 0U : data[0] >> 6;
    bool same_take = false; // the next report joins the previous take (style 3)
    // within: n is at most what is in flight (a known-counted report may be used). The same
    // preference as channel's: takes where the policy has them, else known-counted.
    const auto report = [&](std::uint32_t n, bool within) -> bool {
        if constexpr (accepts_lazy_time<checked<Policy>>) {
            const auto read = [&now]() noexcept { return now(); };
            if constexpr (accepts_take_parts<checked<Policy>>) {
                if (style == 3) {
                    const bool part = same_take;
                    same_take = !same_take;
                    return p.on_taken(n, read, part);
                }
            }
            if (style >= 2) return p.on_taken(n, read);
        } else if constexpr (accepts_known_counted<checked<Policy>>) {
            if (style >= 2 && within) return p.on_completed(n, now(), known_counted);
        }
        return p.on_completed(n, now());
    };
    const auto complete = [&](std::uint32_t n, bool within) {
        if (report(n, within)) outstanding -= n;
    };
    while (i < size) {
        const std::uint8_t op = data[i++];
        std::uint32_t v = 0;
        for (int b = 0; b < 4 && i < size; ++b) v |= std::uint32_t{data[i++]} << (8 * b);
        ++out.steps;
        switch (op % 8) {
        case 0: // enqueue a packet-sized amount, with time
            queue(v % 65536, true);
            break;
        case 1: // enqueue without time; the high bit asks for any size (maybe > max_object)
            queue(v & 0x80000000U ? v & 0x7fffffffU : v % 65536, false);
            break;
        case 2:
        case 3: { // complete part or all of what is in flight
            const auto part = static_cast<std::uint32_t>(v % (outstanding + 1));
            complete(op % 8 == 3 ? static_cast<std::uint32_t>(outstanding) : part, true);
            break;
        }
        case 4: // complete more than is in flight: must be refused; or a take-back (see above)
            if constexpr (accepts_unqueue<checked<Policy>>) {
                if ((op & 0x80) != 0) {
                    const auto n = static_cast<std::uint32_t>(
                        (op & 0x40) != 0 ? outstanding + 1 + v % 16 : v % (outstanding + 1));
                    p.on_unqueued(n);
                    if (n <= outstanding) outstanding -= n;
                    break;
                }
            }
            complete(static_cast<std::uint32_t>(outstanding + 1 + v % 16), false);
            break;
        case 5: // time passes: mostly a little, sometimes a lot; or a wake call or an idle wait
                // told (see above)
            if constexpr (accepts_wake_call<checked<Policy>>) {
                if ((op & 0x40) != 0) {
                    using dur = typename time_point::duration;
                    const auto len = static_cast<rep>(static_cast<std::int32_t>(v));
                    p.on_wake_call(dur{(op & 0x80) ? len : static_cast<rep>(v % 65536)});
                    break;
                }
            }
            if constexpr (accepts_consumer_idle<checked<Policy>>) {
                if ((op & 0x60) == 0x20) {
                    using dur = typename time_point::duration;
                    const auto len = static_cast<rep>(static_cast<std::int32_t>(v));
                    p.on_consumer_idle(dur{(op & 0x80) ? len : static_cast<rep>(v % 65536)});
                    break;
                }
            }
            ticks += (op & 0x80) ? std::uint64_t{v} << 16 : v % 4096;
            break;
        case 6:
            p.reset(now());
            outstanding = 0;
            break;
        default: // obey the policy: enqueue only while it admits; the high bit asks with the
                 // producer's cheaper look where the policy has one (as channel does)
            if constexpr (has_may_post<checked<Policy>>) {
                if ((op & 0x80) != 0) {
                    if (p.may_post()) queue(1 + v % 1500, true);
                    break;
                }
            }
            if (p.available() >= 0) queue(1 + v % 1500, true);
            break;
        }
        if (!p.ok()) break;
    }
    out.failure = p.failure();
    out.call = p.failed_at_call();
    return out;
}

/// The libFuzzer entry point's body: check_limit_policy_bytes(), trapping on a broken rule
/// after printing it. Returns 0 (libFuzzer's "input processed").
template <limit_policy Policy>
int fuzz_limit_policy(const std::uint8_t* data, std::size_t size,
                      const typename Policy::config_type& cfg = {}) noexcept {
    const fuzz_outcome r = check_limit_policy_bytes<Policy>(data, size, cfg);
    if (r.failure != nullptr) {
        std::fprintf(stderr, "qlimits fuzz: invariant broken at call %llu: %s\n",
                     static_cast<unsigned long long>(r.call), r.failure);
#if defined(__GNUC__)
        __builtin_trap();
#else
        std::abort();
#endif
    }
    return 0;
}

} // namespace testing
} // namespace v0
} // namespace qlimits
