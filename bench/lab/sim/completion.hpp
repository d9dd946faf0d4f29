// When a software ring's consumer tells the limit policy that items are done. A software ring
// has no completion round, so the driver has to pick one (docs/design.md §4):
//  - per item: report 1 as each item is taken (veth BQL v5; pins DQL's limit at 2);
//  - per poll: report the poll's count when the poll ends (settles near 2x the poll budget);
//  - timed: accumulate across polls and report when `window` has passed since the first
//    unreported item, or as soon as more than `limit` are waiting, because a producer that
//    overshot the limit by one would otherwise wait forever (veth BQL v7, tx-usecs).
#pragma once

#include <cstdint>
#include <optional>

#include "engine.hpp"

namespace lab::sim {

enum class completion_mode : std::uint8_t { per_item, per_poll, timed };

class completion_coalescer {
public:
    explicit completion_coalescer(completion_mode mode, ns_t window = 0)
        : mode_(mode), window_(window) {}

    /// An item was taken at `now`. Returns how many units to report now (0: none yet).
    std::uint32_t on_item(ns_t now, std::optional<std::uint32_t> limit) {
        if (mode_ == completion_mode::per_item) return 1;
        if (pending_ == 0) first_ = now;
        ++pending_;
        if (mode_ == completion_mode::timed &&
            (now - first_ >= window_ || (limit && pending_ > *limit)))
            return take();
        return 0;
    }
    /// The consumer's poll ended at `now`.
    std::uint32_t on_poll_end(ns_t now) {
        if (mode_ == completion_mode::per_poll) return take();
        if (mode_ == completion_mode::timed && pending_ > 0 && now - first_ >= window_)
            return take();
        return 0;
    }
    [[nodiscard]] std::uint32_t pending() const noexcept { return pending_; }
    [[nodiscard]] completion_mode mode() const noexcept { return mode_; }

private:
    std::uint32_t take() {
        const std::uint32_t n = pending_;
        pending_ = 0;
        return n;
    }
    completion_mode mode_;
    ns_t window_;
    std::uint32_t pending_ = 0;
    ns_t first_ = 0;
};

} // namespace lab::sim
