// SPDX-License-Identifier: MIT
// A hand-written bounded single-producer single-consumer ring, as a user might already own one
// (Lamport's ring with cached indices, after rigtorp/SPSCQueue). qlimits ships no ring: this one
// lives with the examples, and tests and benchmarks borrow it. It has the member functions
// qlimits::ring_traits looks for, so it needs no specialization.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace rings {

template <class T, std::size_t Capacity>
class spsc_ring {
    static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0, "a power of two");
    static_assert(std::is_nothrow_move_assignable_v<T> &&
                  std::is_nothrow_default_constructible_v<T>);

public:
    using value_type = T;

    /// Producer only. Moves from v only when there is room.
    bool try_push(T&& v) noexcept {
        const std::size_t head = head_.load(std::memory_order_relaxed);
        if (head - tail_seen_ == Capacity) {
            tail_seen_ = tail_.load(std::memory_order_acquire); // pairs with try_pop's release
            if (head - tail_seen_ == Capacity)
                return false;
        }
        slots_[head % Capacity] = std::move(v);
        head_.store(head + 1, std::memory_order_release); // publishes the slot to try_pop
        return true;
    }
    /// Consumer only.
    bool try_pop(T& out) noexcept {
        const std::size_t tail = tail_.load(std::memory_order_relaxed);
        if (tail == head_seen_) {
            head_seen_ = head_.load(std::memory_order_acquire); // pairs with try_push's release
            if (tail == head_seen_)
                return false;
        }
        out = std::move(slots_[tail % Capacity]);
        tail_.store(tail + 1, std::memory_order_release); // hands the slot back to try_push
        return true;
    }
    static constexpr std::size_t capacity() noexcept { return Capacity; }

private:
    alignas(64) std::atomic<std::size_t> head_{0}; // written by the producer
    std::size_t tail_seen_ = 0;                    // producer's copy of tail_
    alignas(64) std::atomic<std::size_t> tail_{0}; // written by the consumer
    std::size_t head_seen_ = 0;                    // consumer's copy of head_
    alignas(64) std::array<T, Capacity> slots_{};
};

} // namespace rings
