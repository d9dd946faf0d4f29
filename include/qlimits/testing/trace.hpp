// SPDX-License-Identifier: MIT
// qlimits/testing/trace.hpp: the public trace format for limit policies (docs/design.md §6),
// its reader, a replayer that drives any limit policy with it, and a recording wrapper that
// writes any policy's calls in it.
//
// Format: one directive per line, '#' comments, unsigned decimal numbers. A trace starts from an
// all-zero state at time 0; one tick is one unit of the replayer clock's duration (1 ms by
// default, the kernel's jiffy at HZ=1000).
//   init H    as Linux dql_init: min 0, max default, hold H ticks, stall off, then reset
//   reset     as Linux dql_reset          origin V  before the first q/c: counters start at V
//   q N       N units queued   (prints)   c N       N units completed (prints)
//   t N       time advances N ticks       min N / max N / hold N / stall N   configuration
// State line for dql: `limit num_queued num_completed adj_limit prev_ovlimit lowest_slack avail`
// (with verbose: `stall_cnt stall_max` appended). Other policies: `limit inflight avail`.
// A malformed line, or a completion of more than is in flight, stops the replay with an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/text.hpp"

namespace qlimits {
inline namespace v0 {
namespace testing {

/// The directives of the limit-policy trace format.
enum class limit_op : std::uint8_t { init, reset, origin, queue, complete, tick, min, max, hold, stall };

/// One parsed directive.
struct limit_directive {
    limit_op op;
    std::uint64_t value; ///< the argument (0 for reset)
};

/// The result of reading one line: nothing (blank or comment), a directive, or an error.
struct limit_line {
    enum class kind : std::uint8_t { none, directive, error } what = kind::none;
    limit_directive directive{limit_op::reset, 0};
    const char* error = nullptr; ///< static text, set when what == error
};

/// Read one line of a limit-policy trace.
[[nodiscard]] constexpr limit_line parse_limit_line(std::string_view text) noexcept {
    limit_line out;
    const trace_fields f = split_trace_line(text);
    if (f.empty()) return out;
    const auto fail = [&out](const char* why) {
        out.what = limit_line::kind::error;
        out.error = why;
        return out;
    };
    if (f.too_many) return fail("too many fields");
    struct spec {
        std::string_view name;
        limit_op op;
        bool has_arg;
        bool wide; // argument may be 64-bit (time)
    };
    constexpr spec specs[] = {
        {"init", limit_op::init, true, false},   {"reset", limit_op::reset, false, false},
        {"origin", limit_op::origin, true, false}, {"q", limit_op::queue, true, false},
        {"c", limit_op::complete, true, false},  {"t", limit_op::tick, true, true},
        {"min", limit_op::min, true, false},     {"max", limit_op::max, true, false},
        {"hold", limit_op::hold, true, false},   {"stall", limit_op::stall, true, false},
    };
    for (const spec& s : specs) {
        if (f.field[0] != s.name) continue;
        const std::size_t want = s.has_arg ? 2 : 1;
        if (f.count < want) return fail("missing argument");
        if (f.count > want) return fail("too many fields");
        std::uint64_t v = 0;
        if (s.has_arg) {
            if (s.wide) {
                if (!parse_decimal(f.field[1], v))
                    return fail("bad number (expected unsigned decimal below 2^64)");
            } else {
                std::uint32_t v32 = 0;
                if (!parse_decimal(f.field[1], v32))
                    return fail("bad number (expected unsigned decimal below 2^32)");
                v = v32;
            }
        }
        if (s.op == limit_op::stall && v > 0xFFFF)
            return fail("stall threshold out of range (0..65535 ticks)");
        out.what = limit_line::kind::directive;
        out.directive = {s.op, v};
        return out;
    }
    return fail("unknown directive");
}

/// Why a replay step failed (nullptr: it did not).
struct replay_step {
    bool printed = false;      ///< the step produced a state line (q and c)
    const char* error = nullptr; ///< static text; the replay must stop
};

/// Drives a limit policy with directives and formats its state lines. Works for dql (printing
/// its full kernel state) and for any other limit_policy (printing limit inflight avail, plus
/// the policy's own fields if it has `format_trace_fields(char*, char*)`). Configuration
/// directives a policy does not support are errors.
template <limit_policy Policy>
class limit_replayer {
public:
    using time_point = typename Policy::time_point;
    using duration = typename time_point::duration;

    /// dql starts from the all-zero kernel state; other policies from their default config.
    limit_replayer() noexcept : policy_(make_initial()) {}

    /// Apply one directive. On a q or c the state line is available from state_line().
    replay_step apply(const limit_directive& d) noexcept {
        replay_step r;
        switch (d.op) {
        case limit_op::tick:
            now_ = manual_clock<duration>::advanced(now_, duration{static_cast<typename duration::rep>(d.value)});
            return r;
        case limit_op::reset:
            policy_.reset(now_);
            return r;
        case limit_op::queue:
            started_ = true;
            policy_.on_queued(static_cast<std::uint32_t>(d.value), now_);
            r.printed = true;
            return r;
        case limit_op::complete:
            started_ = true;
            if (d.value > policy_.inflight()) {
                r.error = "over-completion";
                return r;
            }
            policy_.on_completed(static_cast<std::uint32_t>(d.value), now_);
            r.printed = true;
            return r;
        case limit_op::origin:
            if (started_) {
                r.error = "origin after the first q/c";
                return r;
            }
            if constexpr (requires(Policy& p) { p.rebase(std::uint32_t{}); })
                policy_.rebase(static_cast<std::uint32_t>(d.value));
            else
                r.error = "origin: not supported by this policy";
            return r;
        default:
            r.error = configure(d);
            return r;
        }
    }

    /// Write the current state line (no newline) into buf; returns its length.
    std::size_t state_line(char* buf, std::size_t size, bool verbose) const noexcept {
        char* p = buf;
        char* const end = buf + size;
        const auto put = [&](auto v) {
            if (p != buf && p < end) *p++ = ' ';
            p = format_decimal(p, end, v);
        };
        if constexpr (requires(const Policy& q) { q.state(); }) {
            const dql_state s = policy_.state();
            put(std::uint64_t{s.limit});
            put(std::uint64_t{s.num_queued});
            put(std::uint64_t{s.num_completed});
            put(std::uint64_t{s.adj_limit});
            put(std::uint64_t{s.prev_ovlimit});
            put(std::uint64_t{s.lowest_slack});
            put(std::int64_t{s.avail()});
            if (verbose) {
                put(std::uint64_t{s.stall_count});
                put(std::uint64_t{s.stall_max});
            }
        } else {
            put(std::uint64_t{policy_.limit()});
            put(std::uint64_t{policy_.inflight()});
            put(policy_.available());
            if constexpr (requires(const Policy& q, char* a, char* b) {
                              { q.format_trace_fields(a, b) } -> std::same_as<char*>;
                          }) {
                if (p < end) *p++ = ' ';
                p = policy_.format_trace_fields(p, end);
            }
        }
        return static_cast<std::size_t>(p - buf);
    }

    [[nodiscard]] const Policy& policy() const noexcept { return policy_; }
    [[nodiscard]] Policy& policy() noexcept { return policy_; }
    [[nodiscard]] time_point now() const noexcept { return now_; }

private:
    static constexpr bool is_dql = requires(const Policy& q) { q.state(); };

    static Policy make_initial() noexcept {
        if constexpr (std::is_constructible_v<Policy, zeroed_state_t>)
            return Policy(zeroed_state);
        else
            return Policy(typename Policy::config_type{}, time_point{});
    }

    const char* configure(const limit_directive& d) noexcept {
        const auto v32 = static_cast<std::uint32_t>(d.value);
        switch (d.op) {
        case limit_op::init:
            if constexpr (requires(Policy& p) { p.init(duration{}, time_point{}); }) {
                policy_.init(duration{static_cast<typename duration::rep>(d.value)}, now_);
                return nullptr;
            }
            break;
        case limit_op::min:
            if constexpr (requires(Policy& p) { p.set_min_limit(v32); })
                return policy_.set_min_limit(v32) ? nullptr
                                                  : "min limit out of range (above 1879048192)";
            break;
        case limit_op::max:
            if constexpr (requires(Policy& p) { p.set_max_limit(v32); })
                return policy_.set_max_limit(v32) ? nullptr
                                                  : "max limit out of range (above 1879048192)";
            break;
        case limit_op::hold:
            if constexpr (requires(Policy& p) { p.set_hold_time(duration{}); })
                return policy_.set_hold_time(duration{static_cast<typename duration::rep>(d.value)})
                           ? nullptr
                           : "hold time out of range";
            break;
        case limit_op::stall:
            if constexpr (requires(Policy& p) { p.set_stall_threshold(duration{}, time_point{}); })
                return policy_.set_stall_threshold(
                           duration{static_cast<typename duration::rep>(d.value)}, now_)
                           ? nullptr
                           : "stall threshold out of range (0..65535 ticks)";
            break;
        default:
            break;
        }
        return "directive not supported by this policy";
    }

    Policy policy_;
    time_point now_{};
    bool started_ = false;
};

/// Replays a whole trace held in memory, writing state lines to `out` (a callable taking
/// std::string_view). Returns 0 on success; on error writes nothing more and returns the
/// 1-based number of the offending line, with *error set to its reason.
template <limit_policy Policy, class Sink>
std::size_t replay_limit_trace(std::string_view trace, Sink&& out, bool verbose,
                               const char** error) noexcept {
    limit_replayer<Policy> r;
    std::size_t line_no = 0;
    char buf[256];
    while (!trace.empty()) {
        const auto nl = trace.find('\n');
        const std::string_view line = trace.substr(0, nl);
        trace = nl == std::string_view::npos ? std::string_view{} : trace.substr(nl + 1);
        ++line_no;
        const limit_line parsed = parse_limit_line(line);
        if (parsed.what == limit_line::kind::none) continue;
        const char* why = parsed.error;
        if (parsed.what == limit_line::kind::directive) {
            const replay_step step = r.apply(parsed.directive);
            why = step.error;
            if (why == nullptr && step.printed) {
                std::size_t n = r.state_line(buf, sizeof buf - 1, verbose);
                buf[n++] = '\n';
                out(std::string_view(buf, n));
            }
        }
        if (why != nullptr) {
            if (error != nullptr) *error = why;
            return line_no;
        }
    }
    return 0;
}

// ---- recording ---------------------------------------------------------------------------

/// A sink that keeps the recorded trace in a string.
struct string_sink {
    std::string text;
    void operator()(std::string_view s) { text.append(s); }
};

/// A sink that writes to a C stream (stdout, or a file the caller opened and will close).
struct file_sink {
    std::FILE* file = stdout;
    void operator()(std::string_view s) const noexcept {
        std::fwrite(s.data(), 1, s.size(), file);
    }
};

/// A limit policy that forwards every call to Policy and writes it to Sink as a trace:
/// `t N` whenever time moved since the last timed call, then `q N`, `c N` or `reset`.
/// The construction time is trace time 0. For a dql-style config the trace opens with the
/// directives that rebuild the same starting state (init, min, max, reset, stall), so replaying
/// the recording through limit_replayer reproduces the policy's decisions line for line.
template <limit_policy Policy, class Sink = string_sink>
class recording {
public:
    using config_type = typename Policy::config_type;
    using time_point = typename Policy::time_point;
    using stats_type = typename Policy::stats_type;
    static constexpr std::uint32_t max_object = Policy::max_object;

    recording(const config_type& cfg, time_point now) noexcept : policy_(cfg, now), last_(now) {
        write_preamble(cfg);
    }
    recording(Sink sink, const config_type& cfg, time_point now) noexcept
        : policy_(cfg, now), sink_(std::move(sink)), last_(now) {
        write_preamble(cfg);
    }

    bool on_queued(std::uint32_t n) noexcept {
        emit('q', n);
        return policy_.on_queued(n);
    }
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        advance_to(now);
        emit('q', n);
        return policy_.on_queued(n, now);
    }
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        advance_to(now);
        emit('c', n);
        return policy_.on_completed(n, now);
    }
    void reset(time_point now) noexcept {
        advance_to(now);
        write("reset\n");
        policy_.reset(now);
    }
    [[nodiscard]] std::int64_t available() const noexcept { return policy_.available(); }
    [[nodiscard]] std::uint32_t limit() const noexcept { return policy_.limit(); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return policy_.inflight(); }
    [[nodiscard]] stats_type stats() const noexcept { return policy_.stats(); }

    [[nodiscard]] const Policy& inner() const noexcept { return policy_; }
    [[nodiscard]] const Sink& sink() const noexcept { return sink_; }
    [[nodiscard]] Sink& sink() noexcept { return sink_; }

private:
    // For a dql-style config, the directives that rebuild the same starting state from the
    // trace's all-zero start: init, the bounds, a reset (so the limit starts at min), the
    // stall threshold.
    void write_preamble(const config_type& cfg) noexcept {
        if constexpr (requires {
                          cfg.min_limit;
                          cfg.max_limit;
                          cfg.hold_time.count();
                          cfg.stall_threshold.count();
                      }) {
            emit_named("init", static_cast<std::uint64_t>(cfg.hold_time.count()));
            emit_named("min", cfg.min_limit);
            emit_named("max", cfg.max_limit);
            write("reset\n");
            emit_named("stall", static_cast<std::uint64_t>(cfg.stall_threshold.count()));
        }
    }
    void emit_named(std::string_view name, std::uint64_t v) noexcept {
        char buf[48];
        char* p = buf;
        for (const char ch : name) *p++ = ch;
        *p++ = ' ';
        p = format_decimal(p, buf + sizeof buf - 1, v);
        *p++ = '\n';
        write(std::string_view(buf, static_cast<std::size_t>(p - buf)));
    }
    void advance_to(time_point now) noexcept {
        const std::uint64_t d = ticks_of(now) - ticks_of(last_);
        if (d != 0) emit('t', d);
        last_ = now;
    }
    void emit(char op, std::uint64_t v) noexcept { emit_named(std::string_view(&op, 1), v); }
    void write(std::string_view s) noexcept {
        // A sink that allocates may throw; a recording that cannot be written is a broken test
        // aid, not a reason to corrupt the policy, so the policy call still happens.
#if defined(__cpp_exceptions)
        try {
            sink_(s);
        } catch (...) {
            dropped_ = true;
        }
#else
        sink_(s);
#endif
    }

    Policy policy_;
    Sink sink_{};
    time_point last_;
    bool dropped_ = false;

public:
    /// True if the sink threw at least once (the recording is then incomplete).
    [[nodiscard]] bool incomplete() const noexcept { return dropped_; }
};

static_assert(limit_policy<recording<dql<>>>);

} // namespace testing
} // namespace v0
} // namespace qlimits
