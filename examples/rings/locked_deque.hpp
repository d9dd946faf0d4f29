// SPDX-License-Identifier: MIT
// A mutex-protected std::deque with a capacity: the simplest thread-to-thread queue, here as a
// plain struct with no member functions, joined to qlimits by a ring_traits specialization.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

#include "qlimits/adapters/ring_traits.hpp"

namespace rings {
template <class T>
struct locked_deque {
    std::mutex mutex;
    std::deque<T> items;
    std::size_t capacity = 256;
};
} // namespace rings

template <class T>
struct qlimits::ring_traits<rings::locked_deque<T>> {
    using value_type = T;
    // std::deque may throw std::bad_alloc from push_back; here that ends the program
    // (std::terminate through noexcept), which is what an example ring can afford.
    static bool try_push(rings::locked_deque<T>& r, T&& v) noexcept {
        const std::lock_guard lock(r.mutex);
        if (r.items.size() >= r.capacity)
            return false;
        r.items.push_back(std::move(v));
        return true;
    }
    static bool try_pop(rings::locked_deque<T>& r, T& out) noexcept {
        const std::lock_guard lock(r.mutex);
        if (r.items.empty())
            return false;
        out = std::move(r.items.front());
        r.items.pop_front();
        return true;
    }
};
