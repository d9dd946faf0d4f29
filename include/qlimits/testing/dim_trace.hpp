// SPDX-License-Identifier: MIT
// qlimits/testing/dim_trace.hpp: the public DIM trace format (docs/design.md §6), its reader,
// and a replayer that drives net_dim / rdma_dim with it and prints what they decide.
//
// Format: one directive per line, '#' comments, unsigned decimal numbers.
//   mode rx_eqe|rx_cqe|tx_eqe|tx_cqe|rdma   a fresh tuner on that table
//   ix N                                    set the profile index (a driver's initial choice)
//   s T_US EVENTS PKTS BYTES                net: one sample (time in us, cumulative counters)
//   c T_US COMPLETIONS                      rdma: one poll that reaped COMPLETIONS
// After each s / c: `apply IX USEC PKTS` (rdma: `apply IX USEC COMPS`) when the call chose a new
// profile, then `state TUNE IX STEPS_LEFT STEPS_RIGHT TIRED`. After an apply line the replayer
// acts as the driver: the moderation counts as applied and measuring restarts (on_applied()).
//
// Decisions on the edge cases (all errors stop the replay; nothing is printed for that line):
//  - a trace must choose a tuner first: `s`, `c` or `ix` before any `mode` is "no mode";
//  - `mode` may appear again later: it always starts a fresh tuner;
//  - a fresh net tuner is the kernel's zero-allocated instance: PARKING_ON_TOP at index 0,
//    start_measure, zero stats (the first sample only opens a window); a fresh rdma tuner is the
//    RDMA core's: GOING_RIGHT at index 0;
//  - `c` in a net mode and `s` in rdma mode are errors; `ix` above 4 (net) or 8 (rdma) is an
//    error; `ix` may be used at any time and changes only the index;
//  - T_US is microseconds from the trace's origin, converted to the kernel's ktime as ns
//    (x 1000); it must be at most 9223372036854775 so the ns value fits a signed 64-bit count.
//    Time may go backwards (the tuner then sees a huge window, as the kernel would);
//  - EVENTS must fit 16 bits, PKTS and BYTES 32 bits (no silent truncation: the counters are
//    the already-truncated kernel values, so a wider number is a malformed trace). COMPLETIONS
//    is a u64, as the kernel's rdma_dim() takes it; it wraps into the 32-bit running sum there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/rdma_dim.hpp"
#include "qlimits/dim/sample.hpp"
#include "qlimits/testing/text.hpp"

namespace qlimits {
inline namespace v0 {
namespace testing {

/// The tuners a DIM trace can select.
enum class dim_trace_mode : std::uint8_t { rx_eqe, rx_cqe, tx_eqe, tx_cqe, rdma };

/// The directives of the DIM trace format.
enum class dim_op : std::uint8_t { mode, ix, sample, completions };

/// Largest T_US accepted: its value in ns must fit a signed 64-bit count.
inline constexpr std::uint64_t dim_trace_max_time_us = 9'223'372'036'854'775ULL;

/// One parsed directive.
struct dim_directive {
    dim_op op = dim_op::mode;
    dim_trace_mode mode = dim_trace_mode::rx_eqe; ///< for mode
    std::uint32_t ix = 0;                         ///< for ix (range checked by the replayer)
    std::uint64_t time_us = 0;                    ///< for s and c
    std::uint16_t events = 0;                     ///< for s
    std::uint32_t pkts = 0;                       ///< for s
    std::uint32_t bytes = 0;                      ///< for s
    std::uint64_t comps = 0;                      ///< for c (u64, as rdma_dim() takes it)
};

/// The result of reading one line: nothing (blank or comment), a directive, or an error.
struct dim_line {
    enum class kind : std::uint8_t { none, directive, error } what = kind::none;
    dim_directive directive{};
    const char* error = nullptr; ///< static text, set when what == error
};

/// Read one line of a DIM trace.
[[nodiscard]] constexpr dim_line parse_dim_line(std::string_view text) noexcept {
    dim_line out;
    const trace_fields f = split_trace_line(text);
    if (f.empty()) return out;
    const auto fail = [&out](const char* why) {
        out.what = dim_line::kind::error;
        out.error = why;
        return out;
    };
    if (f.too_many) return fail("too many fields");
    const auto arity = [&f](std::size_t want) -> const char* {
        if (f.count < want) return "missing argument";
        if (f.count > want) return "too many fields";
        return nullptr;
    };
    const auto time = [&](std::string_view s, std::uint64_t& us) -> const char* {
        if (!parse_decimal(s, us)) return "bad time (expected unsigned decimal microseconds)";
        if (us > dim_trace_max_time_us)
            return "time out of range (at most 9223372036854775 us)";
        return nullptr;
    };
    const auto u32 = [](std::string_view s, std::uint32_t& v) -> const char* {
        return parse_decimal(s, v) ? nullptr
                                   : "bad number (expected unsigned decimal below 2^32)";
    };
    dim_directive& d = out.directive;
    const std::string_view op = f.field[0];
    if (op == "mode") {
        if (const char* e = arity(2)) return fail(e);
        constexpr struct {
            std::string_view name;
            dim_trace_mode mode;
        } modes[] = {{"rx_eqe", dim_trace_mode::rx_eqe},
                     {"rx_cqe", dim_trace_mode::rx_cqe},
                     {"tx_eqe", dim_trace_mode::tx_eqe},
                     {"tx_cqe", dim_trace_mode::tx_cqe},
                     {"rdma", dim_trace_mode::rdma}};
        for (const auto& m : modes) {
            if (f.field[1] != m.name) continue;
            d.op = dim_op::mode;
            d.mode = m.mode;
            out.what = dim_line::kind::directive;
            return out;
        }
        return fail("unknown mode (expected rx_eqe, rx_cqe, tx_eqe, tx_cqe or rdma)");
    }
    if (op == "ix") {
        if (const char* e = arity(2)) return fail(e);
        if (const char* e = u32(f.field[1], d.ix)) return fail(e);
        d.op = dim_op::ix;
        out.what = dim_line::kind::directive;
        return out;
    }
    if (op == "s") {
        if (const char* e = arity(5)) return fail(e);
        if (const char* e = time(f.field[1], d.time_us)) return fail(e);
        if (!parse_decimal(f.field[2], d.events))
            return fail("bad event count (expected unsigned decimal below 2^16)");
        if (const char* e = u32(f.field[3], d.pkts)) return fail(e);
        if (const char* e = u32(f.field[4], d.bytes)) return fail(e);
        d.op = dim_op::sample;
        out.what = dim_line::kind::directive;
        return out;
    }
    if (op == "c") {
        if (const char* e = arity(3)) return fail(e);
        if (const char* e = time(f.field[1], d.time_us)) return fail(e);
        if (!parse_decimal(f.field[2], d.comps))
            return fail("bad completion count (expected unsigned decimal below 2^64)");
        d.op = dim_op::completions;
        out.what = dim_line::kind::directive;
        return out;
    }
    return fail("unknown directive");
}

/// Drives a net_dim or rdma_dim with directives and formats the lines they print.
class dim_replayer {
public:
    /// Longest output of one directive (an apply line and a state line).
    static constexpr std::size_t max_output = 128;

    /// Apply one directive. Returns nullptr, or a static error text (the replay must stop; the
    /// output of this directive is then empty). After an s or c, output() holds its lines.
    const char* apply(const dim_directive& d) noexcept {
        len_ = 0;
        switch (d.op) {
        case dim_op::mode:
            has_mode_ = true;
            mode_ = d.mode;
            if (d.mode == dim_trace_mode::rdma) {
                rdma_ = rdma_dim{};
            } else {
                net_ = net_dim{};
                (void)net_.set_profile(table(d.mode));
            }
            return nullptr;
        case dim_op::ix:
            if (!has_mode_) return no_mode;
            if (is_rdma()) {
                if (d.ix >= rdma_dim::profile_count) return "profile index out of range (0..8)";
                (void)rdma_.set_profile_ix(static_cast<std::uint8_t>(d.ix));
            } else {
                if (d.ix >= net_dim::profile_count) return "profile index out of range (0..4)";
                (void)net_.set_profile_ix(static_cast<std::uint8_t>(d.ix));
            }
            return nullptr;
        case dim_op::sample: {
            if (!has_mode_) return no_mode;
            if (is_rdma()) return "s in rdma mode (rdma takes c T_US COMPLETIONS)";
            const dim_sample s{time_of(d.time_us), d.events, d.pkts, d.bytes, 0};
            if (net_.on_sample(s)) {
                put_apply(net_.profile_ix(), net_.current_moderation().usec,
                          net_.current_moderation().pkts);
                net_.on_applied();
            }
            put_state(net_.tuning());
            return nullptr;
        }
        case dim_op::completions:
            if (!has_mode_) return no_mode;
            if (!is_rdma()) return "c in a net mode (net takes s T_US EVENTS PKTS BYTES)";
            if (rdma_.on_completions(d.comps, time_of(d.time_us))) {
                put_apply(rdma_.profile_ix(), rdma_.current_moderation().usec,
                          rdma_.current_moderation().comps);
                rdma_.on_applied();
            }
            put_state(rdma_.tuning());
            return nullptr;
        }
        return "unknown directive";
    }

    /// The lines the last directive printed (each ends with '\n'; empty for mode and ix).
    [[nodiscard]] std::string_view output() const noexcept { return {buf_, len_}; }

    [[nodiscard]] bool has_mode() const noexcept { return has_mode_; }
    [[nodiscard]] bool is_rdma() const noexcept { return mode_ == dim_trace_mode::rdma; }
    [[nodiscard]] const net_dim& net() const noexcept { return net_; }
    [[nodiscard]] const rdma_dim& rdma() const noexcept { return rdma_; }

    /// The net table a mode selects (rdma: not a net mode; gives RX EQE).
    [[nodiscard]] static constexpr const net_dim_profile& table(dim_trace_mode m) noexcept {
        switch (m) {
        case dim_trace_mode::rx_cqe:
            return net_dim_rx_cqe_profile;
        case dim_trace_mode::tx_eqe:
            return net_dim_tx_eqe_profile;
        case dim_trace_mode::tx_cqe:
            return net_dim_tx_cqe_profile;
        default:
            return net_dim_rx_eqe_profile;
        }
    }

private:
    static constexpr const char* no_mode = "no mode (choose a tuner with mode first)";

    static constexpr std::chrono::nanoseconds time_of(std::uint64_t us) noexcept {
        return std::chrono::nanoseconds{static_cast<std::int64_t>(us * 1000U)};
    }
    void put(std::string_view s) noexcept {
        for (const char c : s)
            if (len_ < max_output) buf_[len_++] = c;
    }
    void put_num(std::uint64_t v) noexcept {
        char tmp[24];
        const char* end = format_decimal(tmp, tmp + sizeof tmp, v);
        put(std::string_view(tmp, static_cast<std::size_t>(end - tmp)));
    }
    void put_apply(std::uint8_t ix, std::uint16_t usec, std::uint16_t count) noexcept {
        put("apply ");
        put_num(ix);
        put(" ");
        put_num(usec);
        put(" ");
        put_num(count);
        put("\n");
    }
    void put_state(const dim_tuning& t) noexcept {
        put("state ");
        put(to_string(t.tune));
        put(" ");
        put_num(t.profile_ix);
        put(" ");
        put_num(t.steps_left);
        put(" ");
        put_num(t.steps_right);
        put(" ");
        put_num(t.tired);
        put("\n");
    }

    net_dim net_{};
    rdma_dim rdma_{};
    dim_trace_mode mode_ = dim_trace_mode::rx_eqe;
    bool has_mode_ = false;
    char buf_[max_output] = {};
    std::size_t len_ = 0;
};

/// Replays a whole DIM trace held in memory, writing each directive's lines to `out` (a callable
/// taking std::string_view). Returns 0 on success; on error writes nothing more and returns the
/// 1-based number of the offending line, with *error set to its reason.
template <class Sink>
std::size_t replay_dim_trace(std::string_view trace, Sink&& out, const char** error) noexcept {
    dim_replayer r;
    std::size_t line_no = 0;
    while (!trace.empty()) {
        const auto nl = trace.find('\n');
        const std::string_view line = trace.substr(0, nl);
        trace = nl == std::string_view::npos ? std::string_view{} : trace.substr(nl + 1);
        ++line_no;
        const dim_line parsed = parse_dim_line(line);
        if (parsed.what == dim_line::kind::none) continue;
        const char* why = parsed.error;
        if (parsed.what == dim_line::kind::directive) why = r.apply(parsed.directive);
        if (why != nullptr) {
            if (error != nullptr) *error = why;
            return line_no;
        }
        if (!r.output().empty()) out(r.output());
    }
    return 0;
}

} // namespace testing
} // namespace v0
} // namespace qlimits
