// SPDX-License-Identifier: MIT
// boost::lockfree::spsc_queue joins qlimits through a ring_traits specialization: it is a type
// we cannot edit, and it names its operations push/pop instead of try_push/try_pop.
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include "qlimits/adapters/ring_traits.hpp"

template <class T, class... Options>
struct qlimits::ring_traits<boost::lockfree::spsc_queue<T, Options...>> {
    using ring = boost::lockfree::spsc_queue<T, Options...>;
    using value_type = T;
    // push() copies and pop() assigns; neither throws for the nothrow-copyable T we use.
    static bool try_push(ring& q, T&& v) noexcept { return q.push(v); }
    static bool try_pop(ring& q, T& out) noexcept { return q.pop(out); }
};
