// The pipeline's ring: a bounded single-producer single-consumer ring of fixed capacity, the
// shape of veth's ptr_ring or a DPDK rte_ring in SP/SC mode. qlimits ships no ring; this one is
// the lab's, and it joins the channel through the member functions ring_traits looks for.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "qlimits/config.hpp"

namespace lab::pipe {

template <class T>
class spsc_ring {
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
        head_.store(h + 1, std::memory_order_release);
        return true;
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }

private:
    const std::size_t cap_;
    std::unique_ptr<T[]> slots_;
    alignas(qlimits::cache_line_size) std::atomic<std::size_t> head_{0};
    std::size_t tail_cache_ = 0; // consumer's view of tail
    alignas(qlimits::cache_line_size) std::atomic<std::size_t> tail_{0};
    std::size_t head_cache_ = 0; // producer's view of head
};

} // namespace lab::pipe
