// SPDX-License-Identifier: MIT
// qlimits/testing/trace.hpp: the public trace format for limit policies (docs/design.md §6),
// its reader, a replayer that drives any limit policy with it, and a recording wrapper that
// writes any policy's calls in it.
//
// Format: one directive per line, '#' comments, unsigned decimal numbers. A trace starts from an
// all-zero state at time 0; one trace tick is 1 ms (the kernel's jiffy at HZ=1000) unless the
// trace says otherwise with `tick_ns`.
//   init H    as Linux dql_init: min 0, max default, hold H ticks, stall off, then reset
//   reset     as Linux dql_reset          origin V  before the first q/c: counters start at V
//   q N       N units queued   (prints)   c N       N units completed (prints)
//   t N       time advances N ticks       min N / max N / hold N / stall N   configuration
//             (modulo 2^64: a recording writes a step back of d ticks as 2^64 - d)
//   tick_ns N one trace tick is N ns (1..2^32-1); only before the first q, c, t, init, hold or
//             stall. Recordings of policies whose clock does not tick in milliseconds start
//             with it. (t takes up to 2^64-1 ticks; init and hold parse as far but dql
//             refuses a hold of 2^63 ticks or more, as "hold time out of range"; the rest
//             2^32-1.)
// State line for dql: `limit num_queued num_completed adj_limit prev_ovlimit lowest_slack avail`
// (with verbose: `stall_cnt stall_max` appended). Other policies: `limit inflight avail`.
// A malformed line, or a completion of more than is in flight, stops the replay with an error.
// A q the policy refuses (dql: more than dql_max_object units at once) is replayed as refused
// (nothing queued, the state printed) with a note.
//
// Any policy, any clock. The replayer keeps trace time in trace ticks and hands the policy
// `trace ticks x tick_ns` converted to the policy's own duration (truncated when the policy's
// tick is coarser, as a kernel reads jiffies; exact, and wrapping modulo 2^64 like jiffies, when
// the policy's tick divides the trace tick). Durations in directives (init, hold, stall) are
// converted the same way, but saturate instead of wrapping: one that does not fit the policy's
// duration is refused as out of range. A policy wrapped in testing::checked<> or testing::recording<> is
// configured through the wrapper (the directives reach the innermost policy, and the wrappers
// re-read its counters), and a dql inside a wrapper prints dql's full state line.
// Configuration directives the policy does not have (a dql recording replayed through
// fixed_limit, say) are skipped with a note, so every recording replays through every policy;
// a strict replayer (set_strict(true)) refuses them instead.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <ratio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/testing/text.hpp"

namespace qlimits {
inline namespace v0 {
namespace testing {

/// The directives of the limit-policy trace format.
enum class limit_op : std::uint8_t {
    init, reset, origin, queue, complete, tick, min, max, hold, stall, tick_ns
};

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

namespace detail {
/// Each directive's name and argument: none (reset), 32-bit, or 64-bit (time steps, and the
/// hold times of init and hold: a recording of a nanosecond-clock dql writes 5 s as 5e9).
struct limit_op_spec {
    std::string_view name;
    limit_op op;
    bool has_arg;
    bool wide;
};
inline constexpr limit_op_spec limit_op_specs[] = {
    {"init", limit_op::init, true, true},      {"reset", limit_op::reset, false, false},
    {"origin", limit_op::origin, true, false}, {"q", limit_op::queue, true, false},
    {"c", limit_op::complete, true, false},    {"t", limit_op::tick, true, true},
    {"min", limit_op::min, true, false},       {"max", limit_op::max, true, false},
    {"hold", limit_op::hold, true, true},      {"stall", limit_op::stall, true, false},
    {"tick_ns", limit_op::tick_ns, true, false},
};
} // namespace detail

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
    for (const detail::limit_op_spec& s : detail::limit_op_specs) {
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
        if (s.op == limit_op::tick_ns && v == 0) return fail("tick_ns must be at least 1");
        out.what = limit_line::kind::directive;
        out.directive = {s.op, v};
        return out;
    }
    return fail("unknown directive");
}

/// One directive as a line of the trace format, newline included (the inverse of
/// parse_limit_line for every directive it accepts).
[[nodiscard]] inline std::string to_trace_line(const limit_directive& d) {
    for (const detail::limit_op_spec& s : detail::limit_op_specs) {
        if (s.op != d.op) continue;
        std::string line(s.name);
        if (s.has_arg) {
            char buf[24];
            line += ' ';
            line.append(buf, format_decimal(buf, buf + sizeof buf, d.value));
        }
        line += '\n';
        return line;
    }
    return "# unknown directive\n";
}

/// The outcome of one replay step.
struct replay_step {
    bool printed = false;        ///< the step produced a state line (q and c)
    const char* error = nullptr; ///< static text; the replay must stop
    const char* note = nullptr;  ///< static text; the step was skipped, the replay goes on
};

namespace detail {
/// The policy a wrapper (checked<>, recording<>) wraps, all the way down: wrappers expose it as
/// inner(). Configuration and dql's state are read there.
template <class P>
constexpr auto& innermost(P& p) noexcept {
    if constexpr (requires { p.inner(); })
        return innermost(p.inner());
    else
        return p;
}
/// After the innermost policy was changed behind the wrappers' backs (init, reset, origin),
/// let each wrapper re-read its counters, innermost first.
template <class P>
constexpr void resync_wrappers(P& p) noexcept {
    if constexpr (requires { p.inner(); }) {
        resync_wrappers(p.inner());
        if constexpr (requires { p.resync(); }) p.resync();
    }
}
template <class P>
concept has_dql_state = requires(const P& q) {
    { q.state() } -> std::same_as<dql_state>;
};

/// Nanoseconds in one tick of Duration; the replayer maps trace time through it.
template <class Duration>
inline constexpr std::uint64_t tick_length_ns = [] {
    using ns_ratio = std::ratio_divide<typename Duration::period, std::nano>;
    static_assert(ns_ratio::den == 1,
                  "a replayed policy's clock must tick in whole nanoseconds (1 ns or coarser)");
    static_assert(ns_ratio::num <= 1'000'000'000,
                  "a replayed policy's clock must tick at least once a second");
    return static_cast<std::uint64_t>(ns_ratio::num);
}();

/// trace_ticks x trace_tick_ns in units of policy_tick_ns, modulo 2^64, and whether the exact
/// value is 2^64 or more: exact when policy_tick_ns divides trace_tick_ns, truncated otherwise
/// (whole policy ticks, then the rest: trace_tick_ns < 2^32 and policy_tick_ns <= 10^9 keep the
/// rest's product below 2^62).
struct converted_ticks {
    std::uint64_t value;
    bool wrapped;
};
[[nodiscard]] constexpr converted_ticks convert_exact(std::uint64_t trace_ticks,
                                                      std::uint64_t trace_tick_ns,
                                                      std::uint64_t policy_tick_ns) noexcept {
    constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    if (trace_tick_ns % policy_tick_ns == 0) {
        const std::uint64_t k = trace_tick_ns / policy_tick_ns;
        return {trace_ticks * k, trace_ticks > most / k};
    }
    const std::uint64_t whole = trace_ticks / policy_tick_ns;
    const std::uint64_t head = whole * trace_tick_ns;
    const std::uint64_t rest = (trace_ticks % policy_tick_ns) * trace_tick_ns / policy_tick_ns;
    return {head + rest, whole > most / trace_tick_ns || rest > most - head};
}

/// A time: wraps modulo 2^64, like jiffies.
[[nodiscard]] constexpr std::uint64_t convert_ticks(std::uint64_t trace_ticks,
                                                    std::uint64_t trace_tick_ns,
                                                    std::uint64_t policy_tick_ns) noexcept {
    return convert_exact(trace_ticks, trace_tick_ns, policy_tick_ns).value;
}
static_assert(convert_ticks(3, 1'000'000, 1) == 3'000'000);
static_assert(convert_ticks(2'500'000, 1, 1'000'000) == 2);
static_assert(convert_ticks(~std::uint64_t{0}, 1'000'000, 1'000'000) == ~std::uint64_t{0});

/// A duration: saturates at 2^64 - 1 instead of wrapping. A hold or a stall threshold may not
/// wrap (a review, 2026-12-04, found `init 18446744073710` replayed through a nanosecond dql as
/// a hold of 448 us).
[[nodiscard]] constexpr std::uint64_t convert_span(std::uint64_t trace_ticks,
                                                   std::uint64_t trace_tick_ns,
                                                   std::uint64_t policy_tick_ns) noexcept {
    const converted_ticks c = convert_exact(trace_ticks, trace_tick_ns, policy_tick_ns);
    return c.wrapped ? std::numeric_limits<std::uint64_t>::max() : c.value;
}
static_assert(convert_span(3, 1'000'000, 1) == 3'000'000);
static_assert(convert_span(2'500'000, 1, 1'000'000) == 2);
static_assert(convert_span(18'446'744'073'710, 1'000'000, 1) == ~std::uint64_t{0});
static_assert(convert_span(18'446'744'073'709, 1'000'000, 1) == 18'446'744'073'709'000'000U);
} // namespace detail

/// Drives a limit policy with directives and formats its state lines. Works for dql (printing
/// its full kernel state, also through checked<> and recording<>) and for any other
/// limit_policy with any clock (printing limit inflight avail, plus the policy's own fields if
/// it has `format_trace_fields(char*, char*)`). See the file comment for time and for
/// configuration directives the policy does not support.
template <limit_policy Policy>
class limit_replayer {
public:
    using time_point = typename Policy::time_point;
    using duration = typename time_point::duration;
    /// The trace's default tick: 1 ms, the kernel's jiffy at HZ=1000.
    static constexpr std::uint64_t default_tick_ns = 1'000'000;

    /// dql (bare or wrapped) starts from the all-zero kernel state; other policies from their
    /// default config.
    limit_replayer() noexcept : policy_(make_initial()) {}

    /// Strict: a configuration directive the policy does not support is an error, not a note.
    void set_strict(bool strict) noexcept { strict_ = strict; }

    /// Apply one directive. On a q or c the state line is available from state_line().
    replay_step apply(const limit_directive& d) noexcept {
        replay_step r;
        switch (d.op) {
        case limit_op::tick:
            trace_now_ += d.value; // wraps modulo 2^64, like jiffies
            timed_ = true;
            return r;
        case limit_op::tick_ns:
            if (timed_ || started_ || spanned_)
                r.error = "tick_ns after the first q, c, t, init, hold or stall";
            else tick_ns_ = d.value;
            return r;
        case limit_op::reset:
            policy_.reset(now());
            return r;
        case limit_op::queue:
            started_ = true;
            // A q the policy refuses (dql: more than dql_max_object units at once) is replayed
            // as the call it was: refused, counted, the state printed (a recording of a program
            // whose call was refused replays to the same states). It was silent; a note says
            // so now, since a c that then completes those units reads as an over-completion.
            if (!policy_.on_queued(static_cast<std::uint32_t>(d.value), now()))
                r.note = "q refused by the policy (more units than one call may queue): nothing "
                         "queued";
            r.printed = true;
            return r;
        case limit_op::complete:
            started_ = true;
            if (d.value > policy_.inflight()) {
                r.error = "over-completion";
                return r;
            }
            policy_.on_completed(static_cast<std::uint32_t>(d.value), now());
            r.printed = true;
            return r;
        case limit_op::origin:
            if (started_) {
                r.error = "origin after the first q/c";
                return r;
            }
            if constexpr (requires { inner().rebase(std::uint32_t{}); }) {
                inner().rebase(static_cast<std::uint32_t>(d.value));
                detail::resync_wrappers(policy_);
            } else {
                unsupported(r, "origin: not supported by this policy, skipped");
            }
            return r;
        default:
            // init, hold and stall fix their spans in trace ticks: a later tick_ns is refused
            // whether this policy takes the directive or skips it (the trace means the same to
            // every policy).
            if (d.op == limit_op::init || d.op == limit_op::hold || d.op == limit_op::stall)
                spanned_ = true;
            configure(d, r);
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
        if constexpr (is_dql) {
            const dql_state s = inner().state();
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
            if constexpr (requires(char* a, char* b) {
                              { inner().format_trace_fields(a, b) } -> std::same_as<char*>;
                          }) {
                if (p < end) *p++ = ' ';
                p = inner().format_trace_fields(p, end);
            }
        }
        return static_cast<std::size_t>(p - buf);
    }

    [[nodiscard]] const Policy& policy() const noexcept { return policy_; }
    [[nodiscard]] Policy& policy() noexcept { return policy_; }
    /// The policy's time now: trace time converted to the policy's duration.
    [[nodiscard]] time_point now() const noexcept {
        return time_point{duration{static_cast<typename duration::rep>(
            detail::convert_ticks(trace_now_, tick_ns_, detail::tick_length_ns<duration>))}};
    }
    /// Trace time in trace ticks, and the length of one trace tick.
    [[nodiscard]] std::uint64_t trace_ticks() const noexcept { return trace_now_; }
    [[nodiscard]] std::uint64_t tick_ns() const noexcept { return tick_ns_; }

private:
    static constexpr bool is_dql = detail::has_dql_state<
        std::remove_cvref_t<decltype(detail::innermost(std::declval<Policy&>()))>>;

    auto& inner() noexcept { return detail::innermost(policy_); }
    const auto& inner() const noexcept { return detail::innermost(policy_); }

    static Policy make_initial() noexcept {
        if constexpr (std::is_constructible_v<Policy, zeroed_state_t>)
            return Policy(zeroed_state);
        else
            return Policy(typename Policy::config_type{}, time_point{});
    }

    /// A duration directive's argument (trace ticks) in the policy's duration; false when it
    /// does not fit the duration's count (the directive is then refused as out of range).
    [[nodiscard]] bool span(std::uint64_t ticks, duration& out) noexcept {
        spanned_ = true; // converted with this tick: a later tick_ns would not convert it again
        using rep = typename duration::rep;
        const std::uint64_t v =
            detail::convert_span(ticks, tick_ns_, detail::tick_length_ns<duration>);
        if (v > static_cast<std::uint64_t>(std::numeric_limits<rep>::max())) return false;
        out = duration{static_cast<rep>(v)};
        return true;
    }

    void unsupported(replay_step& r, const char* note) const noexcept {
        if (strict_) r.error = "directive not supported by this policy";
        else r.note = note;
    }

    void configure(const limit_directive& d, replay_step& r) noexcept {
        const auto v32 = static_cast<std::uint32_t>(d.value);
        auto& p = inner();
        switch (d.op) {
        case limit_op::init:
            if constexpr (requires { p.init(duration{}, time_point{}); }) {
                duration hold{};
                if (!span(d.value, hold) || !p.init(hold, now())) {
                    r.error = "hold time out of range";
                    return;
                }
                detail::resync_wrappers(policy_);
                return;
            }
            return unsupported(r, "init: not supported by this policy, skipped");
        case limit_op::min:
            if constexpr (requires { p.set_min_limit(v32); }) {
                if (!p.set_min_limit(v32)) r.error = "min limit out of range (above 1879048192)";
                return;
            }
            return unsupported(r, "min: not supported by this policy, skipped");
        case limit_op::max:
            if constexpr (requires { p.set_max_limit(v32); }) {
                if (!p.set_max_limit(v32)) r.error = "max limit out of range (above 1879048192)";
                return;
            }
            return unsupported(r, "max: not supported by this policy, skipped");
        case limit_op::hold:
            if constexpr (requires { p.set_hold_time(duration{}); }) {
                duration hold{};
                if (!span(d.value, hold) || !p.set_hold_time(hold))
                    r.error = "hold time out of range";
                return;
            }
            return unsupported(r, "hold: not supported by this policy, skipped");
        case limit_op::stall:
            if constexpr (requires { p.set_stall_threshold(duration{}, time_point{}); }) {
                duration threshold{};
                // The policy's own ticks, not the trace's: with tick_ns 1 s, `stall 65535` is
                // 65535 s, far past dql's 65535 jiffies (review 2026-12-05).
                if (!span(d.value, threshold) || !p.set_stall_threshold(threshold, now()))
                    r.error = "stall threshold out of range (0..65535 of the policy's ticks)";
                return;
            }
            return unsupported(r, "stall: not supported by this policy, skipped");
        default:
            return unsupported(r, "directive not supported by this policy, skipped");
        }
    }

    Policy policy_;
    std::uint64_t trace_now_ = 0;
    std::uint64_t tick_ns_ = default_tick_ns;
    bool started_ = false;
    bool timed_ = false;
    bool spanned_ = false;
    bool strict_ = false;
};

/// Replays a whole trace held in memory through `r`, writing state lines to `out` (a callable
/// taking std::string_view) and notes (skipped directives) to `notes` (a callable taking the
/// 1-based line number and the static text). Returns 0 on success; on error writes nothing
/// more and returns the number of the offending line, with *error set to its reason. The
/// replayer (and through it the policy, e.g. a checked<>'s failure()) stays readable after.
template <limit_policy Policy, class Sink, class Notes>
std::size_t replay_limit_trace(limit_replayer<Policy>& r, std::string_view trace, Sink&& out,
                               bool verbose, const char** error, Notes&& notes) noexcept {
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
            if (step.note != nullptr) notes(line_no, step.note);
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

/// The same with a fresh replayer and notes ignored.
template <limit_policy Policy, class Sink>
std::size_t replay_limit_trace(std::string_view trace, Sink&& out, bool verbose,
                               const char** error) noexcept {
    limit_replayer<Policy> r;
    return replay_limit_trace(r, trace, out, verbose, error, [](std::size_t, const char*) {});
}

// ---- recording ---------------------------------------------------------------------------

/// A sink that keeps the recorded trace in a string. Not safe to call from two threads: use
/// locked_string_sink when the producer and the completion path run concurrently.
struct string_sink {
    std::string text;
    void operator()(std::string_view s) { text.append(s); }
};

/// A string sink with a lock. recording<> holds the lock across writing a call and making it,
/// so the trace is one order in which the policy really saw the calls (see recording).
class locked_string_sink {
public:
    locked_string_sink() = default;
    /// Movable before use, so it can be handed to recording's sink constructor (channel's and
    /// tx_gate's std::in_place forms): the text moves, the new sink has a lock of its own.
    /// Not while another thread may use either sink.
    locked_string_sink(locked_string_sink&& o) noexcept : text_(std::move(o.text_)) {}
    locked_string_sink& operator=(locked_string_sink&&) = delete;
    void operator()(std::string_view s) { text_.append(s); }
    void lock() { m_.lock(); }
    void unlock() { m_.unlock(); }
    /// The trace so far (copied under the lock).
    [[nodiscard]] std::string text() const {
        std::lock_guard<std::mutex> g(m_);
        return text_;
    }

private:
    mutable std::mutex m_;
    std::string text_;
};

/// A sink that writes to a C stream (stdout, or a file the caller opened and will close).
struct file_sink {
    std::FILE* file = stdout;
    void operator()(std::string_view s) const noexcept {
        std::fwrite(s.data(), 1, s.size(), file);
    }
};

namespace detail {
template <class S>
concept lockable_sink = requires(S& s) {
    s.lock();
    s.unlock();
};
} // namespace detail

/// A limit policy that forwards every call to Policy and writes it to Sink as a trace:
/// `t N` whenever time moved since the last timed call, then `q N`, `c N` or `reset`.
/// The construction time is trace time 0. The trace opens with `tick_ns N` when the policy's
/// clock does not tick in milliseconds, and, for a dql-style config, with the directives that
/// rebuild the same starting state (init, min, max, reset, stall), so replaying the recording
/// through limit_replayer reproduces the policy's decisions line for line; replayed through
/// another policy, the directives it lacks are skipped with a note. For a dql-style config the
/// construction time itself comes first, as `t T0` (trace time is then the policy's own):
/// dql's stall detector keeps its history in words of 64 absolute ticks, so a recording that
/// started at a tick that is not a multiple of 64 replayed from 0 would see other stalls.
/// Other policies' configurations (fixed_limit's limit, software_limit's) are not in the
/// trace: the replayer builds them with their default config. The format has one kind of `q`,
/// replayed with the trace's time: an untimed on_queued(n) on a dql with a stall threshold set
/// (where dql needs each post's time, wants_post_time(), and the untimed call records none)
/// replays as a timed post, and the stall counts may then differ (a review, 2026-12-05; the
/// limits and counts do not). Pass the time there, as channel does.
///
/// Two threads. The producer's and the completion path's calls may run concurrently (as in
/// tx_gate and channel) only with a sink that has lock()/unlock() (locked_string_sink, or your
/// own): the recording then holds the sink's lock while it writes a call and makes it, so the
/// trace is the order in which the calls reached the policy and a replay reproduces them. A
/// call whose time is earlier than the last one written (its thread read the clock before the
/// other thread's call took the lock, or a clock that stepped back) writes the step back as
/// `t` 2^64 minus the difference: trace time wraps modulo 2^64, so the replay goes back too.
/// (Until 2026-12-04 it wrote no `t` line, and the replay passed the later time: a dql with a
/// stall threshold then replayed to other stall counts.) With a sink without a lock the
/// recording is for one thread at a time.
template <limit_policy Policy, class Sink = string_sink>
class recording : public qlimits::detail::forward_clock_type<Policy> {
public:
    using config_type = typename Policy::config_type;
    using time_point = typename Policy::time_point;
    using stats_type = typename Policy::stats_type;
    static constexpr std::uint32_t max_object = Policy::max_object;

    recording(const config_type& cfg, time_point now) noexcept : policy_(cfg, now), last_(now) {
        write_preamble(cfg, now);
    }
    recording(Sink sink, const config_type& cfg, time_point now) noexcept
        : policy_(cfg, now), sink_(std::move(sink)), last_(now) {
        write_preamble(cfg, now);
    }
    /// The all-zero state, for a Policy that has one (dql): what the replayer starts from.
    explicit recording(zeroed_state_t z) noexcept
        requires std::is_nothrow_constructible_v<Policy, zeroed_state_t>
        : policy_(z), last_{} {}

    bool on_queued(std::uint32_t n) noexcept {
        return locked([&] {
            emit('q', n);
            return policy_.on_queued(n);
        });
    }
    bool on_queued(std::uint32_t n, time_point now) noexcept {
        return locked([&] {
            advance_to(now);
            emit('q', n);
            return policy_.on_queued(n, now);
        });
    }
    /// Forwarded where Policy has it (dql), so an adapter passes the time as it would.
    [[nodiscard]] bool wants_post_time() const noexcept
        requires asks_post_time<Policy>
    {
        return policy_.wants_post_time();
    }
    /// A completion the policy refuses (more than is in flight) is written as a comment,
    /// `# refused: c N`: it changed nothing, and a replay would stop on it.
    bool on_completed(std::uint32_t n, time_point now) noexcept {
        return locked([&] {
            advance_to(now);
            const bool ok = policy_.on_completed(n, now);
            if (ok) emit('c', n);
            else emit_named("# refused: c", n);
            return ok;
        });
    }
    void reset(time_point now) noexcept {
        locked([&] {
            advance_to(now);
            write("reset\n");
            policy_.reset(now);
            return true;
        });
    }
    [[nodiscard]] std::int64_t available() const noexcept { return policy_.available(); }
    [[nodiscard]] std::uint32_t limit() const noexcept { return policy_.limit(); }
    [[nodiscard]] std::uint32_t inflight() const noexcept { return policy_.inflight(); }
    [[nodiscard]] stats_type stats() const noexcept { return policy_.stats(); }

    [[nodiscard]] const Policy& inner() const noexcept { return policy_; }
    [[nodiscard]] Policy& inner() noexcept { return policy_; }
    [[nodiscard]] const Sink& sink() const noexcept { return sink_; }
    [[nodiscard]] Sink& sink() noexcept { return sink_; }

private:
    using duration = typename time_point::duration;

    // With a lockable sink, write and make the call under its lock (std::mutex::lock throws
    // only on a broken mutex; in this noexcept path that ends the program).
    template <class F>
    bool locked(F&& f) noexcept {
        if constexpr (detail::lockable_sink<Sink>) {
            std::lock_guard<Sink> g(sink_);
            return f();
        } else {
            return f();
        }
    }

    // The directives that rebuild the same starting state from the trace's all-zero start:
    // the tick length when it is not the trace's default, then, for a dql-style config, the
    // construction time, init, the bounds, a reset (so the limit starts at min) and the stall
    // threshold.
    void write_preamble(const config_type& given, time_point now) noexcept {
        constexpr std::uint64_t tick_ns = detail::tick_length_ns<duration>;
        if constexpr (tick_ns != limit_replayer<Policy>::default_tick_ns)
            emit_named("tick_ns", tick_ns);
        if constexpr (requires {
                          given.min_limit;
                          given.max_limit;
                          given.hold_time.count();
                          given.stall_threshold.count();
                          { given.valid() } -> std::same_as<bool>;
                      }) {
            // The configuration in effect: a policy given an invalid one runs with the defaults
            // once the contract handler returns (dql), and the replay must too.
            const config_type cfg = given.valid() ? given : config_type{};
            if (const std::uint64_t t0 = qlimits::ticks_of(now); t0 != 0) emit('t', t0);
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
        // Modulo 2^64: a time before the last one written is a step of 2^63 or more, which the
        // replayer's wrapping trace time turns into the same step back.
        const std::uint64_t d = qlimits::ticks_of(now) - qlimits::ticks_of(last_);
        if (d == 0) return;
        emit('t', d);
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
static_assert(limit_policy<recording<dql<>, locked_string_sink>>);

} // namespace testing
} // namespace v0
} // namespace qlimits
