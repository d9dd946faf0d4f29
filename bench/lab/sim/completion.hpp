// When a software ring's consumer tells the limit policy that items are done. A software ring
// has no completion round, so the driver has to pick one (docs/design.md §4):
//  - per item: report 1 as each item is taken (veth BQL v5; pins DQL's limit at 2);
//  - per poll: report the poll's count when the poll ends (settles near 2x the poll budget);
//  - timed: accumulate across polls and report when `window` has passed since the first
//    unreported item, or as soon as more than `limit` are waiting, because a producer that
//    overshot the limit by one would otherwise wait forever (veth BQL v7, tx-usecs); and, in
//    any case, before the consumer sleeps on an empty ring while the producer is stopped and
//    the policy would refuse it (stopped by the policy, or by a full ring while over the
//    limit too). There is no timer: with the producer running, units held past the window are
//    reported at the next item or poll end. "More than limit" is a stopped producer's sign
//    only for a policy whose room is exactly limit - inflight (dql): software_limit gives room
//    in steps, so it can hold a producer with fewer pending, and a consumer that went to sleep
//    on them left both waiting for good (found 2026-12-05: `run veth-bql --policy=sw-time
//    --sojourn-us=1000`, and 5000, stopped the adversarial case's producer for half the run;
//    the same behind a ring-full stop, a review later that day). For dql the idle rule adds a
//    report only while a wake-up is on its way: held, an empty ring means more than `limit`
//    pending, reported already. In `qlimits-lab run all` it changed one row (veth-bql
//    cost=0.5x producer, sw-time, where a wake-up was on its way: probe p99 4.5 -> 3.0 us).
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
    /// The consumer's poll ended at `now`; `idle_on_held`: it is about to sleep on an empty
    /// ring while the producer is stopped and the policy would refuse it.
    std::uint32_t on_poll_end(ns_t now, bool idle_on_held) {
        if (mode_ == completion_mode::per_poll) return take();
        if (mode_ == completion_mode::timed && pending_ > 0 &&
            (now - first_ >= window_ || idle_on_held))
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
