// The lab's discrete-event engine: simulated nanoseconds and a queue of pending events.
//
// Events are plain data (a kind and an argument) that the scenario dispatches itself, so the hot
// loop has no allocation and no indirect call per event. Two events due at the same nanosecond
// run in the order they were scheduled: the sequence number breaks ties, which is what makes a
// run bit-for-bit repeatable.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace lab::sim {

/// Simulated time in nanoseconds since the start of a run.
using ns_t = std::uint64_t;

inline constexpr ns_t ns_per_us = 1'000;
inline constexpr ns_t ns_per_ms = 1'000'000;
inline constexpr ns_t ns_per_s = 1'000'000'000;

struct event {
    ns_t at = 0;
    std::uint64_t seq = 0;   ///< scheduling order, the tie-breaker
    std::uint32_t kind = 0;  ///< what happens (the scenario's own enumeration)
    std::uint32_t arg = 0;   ///< which component it concerns (a queue index, a generation...)
};

class engine {
public:
    [[nodiscard]] ns_t now() const noexcept { return now_; }
    [[nodiscard]] bool empty() const noexcept { return q_.empty(); }
    [[nodiscard]] std::size_t pending() const noexcept { return q_.size(); }
    [[nodiscard]] std::uint64_t processed() const noexcept { return processed_; }

    /// Schedule at absolute time t. A time in the past is moved to now: time never runs back.
    void at(ns_t t, std::uint32_t kind, std::uint32_t arg = 0) {
        q_.push(event{t < now_ ? now_ : t, next_seq_++, kind, arg});
    }
    /// Schedule d nanoseconds from now.
    void after(ns_t d, std::uint32_t kind, std::uint32_t arg = 0) { at(now_ + d, kind, arg); }

    /// Take the earliest event due no later than `until`; advance now to it. False when none is.
    bool next(event& e, ns_t until) {
        if (q_.empty() || q_.top().at > until) return false;
        e = q_.top();
        q_.pop();
        now_ = e.at;
        ++processed_;
        return true;
    }

private:
    struct later {
        bool operator()(const event& a, const event& b) const noexcept {
            return a.at != b.at ? a.at > b.at : a.seq > b.seq;
        }
    };
    std::priority_queue<event, std::vector<event>, later> q_;
    ns_t now_ = 0;
    std::uint64_t next_seq_ = 0;
    std::uint64_t processed_ = 0;
};

} // namespace lab::sim
