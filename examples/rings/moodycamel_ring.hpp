// SPDX-License-Identifier: MIT
// moodycamel::ReaderWriterQueue (Debian libreaderwriterqueue-dev) joins qlimits through a
// ring_traits specialization: a type we cannot edit, whose operations are try_enqueue and
// try_dequeue. try_enqueue never allocates (it fails when the preallocated blocks are full), so
// false means full, as channel expects; enqueue() would grow the queue instead.
#pragma once

#include <readerwriterqueue/readerwriterqueue.h>

#include <type_traits>

#include "qlimits/adapters/ring_traits.hpp"

template <class T, std::size_t BlockSize>
struct qlimits::ring_traits<moodycamel::ReaderWriterQueue<T, BlockSize>> {
    using ring = moodycamel::ReaderWriterQueue<T, BlockSize>;
    using value_type = T;
    // The queue's functions are not marked noexcept; they throw only if T's move does.
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>);
    static bool try_push(ring& q, T&& v) noexcept { return q.try_enqueue(std::move(v)); }
    static bool try_pop(ring& q, T& out) noexcept { return q.try_dequeue(out); }
};
