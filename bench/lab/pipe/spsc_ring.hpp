// The pipeline's ring: a bounded single-producer single-consumer ring of fixed capacity, the
// shape of veth's ptr_ring or a DPDK rte_ring in SP/SC mode. qlimits ships no ring; this one is
// the lab's, and it joins the channel through the member functions ring_traits looks for.
//
// Stamps: an item with `entry_ns` and `take_ns` members is stamped by the ring itself, with
// steady_clock, at the push that succeeds (after the room check, before the item is published)
// and at the pop (before its slot is handed back). A slot's items therefore never overlap in
// time: at any instant at most `capacity` items are between their two stamps. Sojourn is then the time in the ring and nothing else: not the
// channel's accounting, doorbell or wake-up calls around the push and the pop, and not the time
// a blocked send() waited for room. The producer reads its last entry stamp back with
// last_entry_ns().
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "qlimits/config.hpp"

namespace lab::pipe {

/// steady_clock in nanoseconds: the lab's wall clock for the real runs.
inline std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

template <class T>
class spsc_ring {
    static constexpr bool stamped = requires(T& t) {
        t.entry_ns = std::uint64_t{};
        t.take_ns = std::uint64_t{};
    };

public:
    using value_type = T;

    explicit spsc_ring(std::size_t capacity)
        : cap_(capacity), slots_(std::make_unique<T[]>(capacity)) {}

    bool try_push(T&& v) noexcept {
        const std::size_t t = tail_.load(std::memory_order_relaxed);
        // The cached head saves a cross-core read on most pushes.
        if (t - head_cache_ >= cap_) {
            head_cache_ = head_.load(std::memory_order_acquire);
            if (t - head_cache_ >= cap_) return false;
        }
        if constexpr (stamped) v.entry_ns = last_entry_ns_ = now_ns();
        slots_[t % cap_] = std::move(v);
        tail_.store(t + 1, std::memory_order_release);
        return true;
    }
    bool try_pop(T& out) noexcept {
        const std::size_t h = head_.load(std::memory_order_relaxed);
        if (h == tail_cache_) {
            tail_cache_ = tail_.load(std::memory_order_acquire);
            if (h == tail_cache_) return false;
        }
        out = std::move(slots_[h % cap_]);
        if constexpr (stamped) out.take_ns = now_ns();
        head_.store(h + 1, std::memory_order_release);
        return true;
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }
    /// The entry stamp of the last item pushed (producer's thread only).
    [[nodiscard]] std::uint64_t last_entry_ns() const noexcept { return last_entry_ns_; }

private:
    const std::size_t cap_;
    std::unique_ptr<T[]> slots_;
    alignas(qlimits::cache_line_size) std::atomic<std::size_t> head_{0};
    std::size_t tail_cache_ = 0; // consumer's view of tail
    alignas(qlimits::cache_line_size) std::atomic<std::size_t> tail_{0};
    std::size_t head_cache_ = 0; // producer's view of head
    std::uint64_t last_entry_ns_ = 0;
};

} // namespace lab::pipe
