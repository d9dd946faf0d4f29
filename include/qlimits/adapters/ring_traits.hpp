// SPDX-License-Identifier: MIT
// qlimits/adapters/ring_traits.hpp: how the adapters talk to a user's ring.
//
// qlimits ships no ring. A ring joins in one of two ways (the allocator_traits pattern):
//  - it has the member functions named below, and the constrained partial specialization of
//    ring_traits picks them up; or
//  - the user specializes qlimits::ring_traits<TheirRing> (for types they cannot edit: a DPDK
//    ring, boost::lockfree::spsc_queue, a struct from a C library).
// The primary template is empty on purpose: a ring that speaks neither way fails the concepts
// below. Each rule is its own named concept (ring_has_wake, ring_try_push_is_noexcept, ...), so
// the compiler's message names the member that is missing or malformed.
//
// Two roles, two concepts:
//  - adaptable_ring (for tx_gate): a NIC-style ring with a stop flag the gate may set and clear:
//      bool stopped() const noexcept;   void stop() noexcept;   void wake() noexcept;
//    wake() must be idempotent: the completion path and the producer's re-check may both call it
//    for one stop (the kernel makes this a test-and-clear; qlimits does not require one). With
//    the producer and the completion path on two threads, the three run concurrently: the flag
//    must be safe to share (e.g. a std::atomic<bool>; relaxed order is enough, the gate fences).
//  - channel_ring (for channel): a single-producer single-consumer transfer ring:
//      using value_type = ...;
//      bool try_push(value_type&& v) noexcept;   // moves from v only when it returns true
//      bool try_pop(value_type& out) noexcept;   // false: empty
//    optionally  static std::uint32_t units(const value_type&) noexcept.
//
// Units of an item (what the limit counts): ring_traits<Ring>::units(item) if the traits have
// it, else item_units<value_type>::of(item), whose primary template says 1 (packet-counted rings
// such as veth's ptr_ring). Specialize item_units for a packet type to count bytes.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace qlimits {
inline namespace v0 {

/// Units one item counts for. Primary template: 1 (the ring limits packets, not bytes).
/// Specialize with `static std::uint32_t of(const T&) noexcept` to count bytes.
template <class T>
struct item_units {
    [[nodiscard]] static constexpr std::uint32_t of(const T&) noexcept { return 1; }
};

/// The customization point. Empty unless a specialization below or a user's applies.
template <class Ring>
struct ring_traits {};

namespace detail {
// A ring with any of stopped()/stop()/wake() is taken as meant to be stoppable: its traits get
// whichever of the three it has, so a ring missing one fails adaptable_ring on exactly that
// member, and the compiler's message names it.
template <class Ring>
concept names_a_stop_member = requires(Ring& r) { r.stopped(); } ||
                              requires(Ring& r) { r.stop(); } || requires(Ring& r) { r.wake(); };

// A ring that names its value_type is taken as meant to be a transfer ring: its traits get the
// value_type and whichever of try_push/try_pop it has. The members are forwarded as they are
// (return type and noexcept included), so the concepts below can say what is wrong with them.
template <class Ring>
concept names_value_type = requires { typename Ring::value_type; };

// A member named `units` of any kind (static or not, function or data, any signature,
// overloaded or a template): where one exists it is what the ring means an item to count, so it
// must be well-formed rather than passed over for item_units (ring_units_is_noexcept_uint32).
// `&T::units` alone misses overloads and templates (it is ill-formed for them), so a member
// callable with an item, on an object or on the class, counts too. (Not detected: a `units`
// the ring makes private or protected, which the ring does not offer to callers.)
template <class T, class V>
concept names_units_member =
    requires { &T::units; } || requires(const T& t, const V& v) { t.units(v); } ||
    requires(T& t, V& v) { t.units(v); } || requires(V& v) { T::units(v); };

// Each role lives in its own base so a ring may have either set of members, or both.
template <class Ring>
struct native_stop_traits {};
template <names_a_stop_member Ring>
struct native_stop_traits<Ring> {
    static decltype(auto) stopped(const Ring& r) noexcept(noexcept(r.stopped()))
        requires requires { r.stopped(); }
    {
        return r.stopped();
    }
    static decltype(auto) stop(Ring& r) noexcept(noexcept(r.stop()))
        requires requires { r.stop(); }
    {
        return r.stop();
    }
    static decltype(auto) wake(Ring& r) noexcept(noexcept(r.wake()))
        requires requires { r.wake(); }
    {
        return r.wake();
    }
};

template <class Ring>
struct native_transfer_traits {};
template <names_value_type Ring>
struct native_transfer_traits<Ring> {
    using value_type = typename Ring::value_type;
    static decltype(auto) try_push(Ring& r, value_type&& v) noexcept(
        noexcept(r.try_push(std::move(v))))
        requires requires { r.try_push(std::move(v)); }
    {
        return r.try_push(std::move(v));
    }
    static decltype(auto) try_pop(Ring& r, value_type& out) noexcept(noexcept(r.try_pop(out)))
        requires requires { r.try_pop(out); }
    {
        return r.try_pop(out);
    }
    // Only when the ring itself says how big an item is; otherwise item_units decides. Passed
    // on as declared (return type, noexcept), so a malformed one is refused by
    // ring_units_is_noexcept_uint32 rather than skipped in favour of item_units.
    [[nodiscard]] static constexpr decltype(auto) units(const value_type& v) noexcept(
        noexcept(Ring::units(v)))
        requires requires(const value_type& item) { Ring::units(item); }
    {
        return Ring::units(v);
    }
};
} // namespace detail

/// Rings that already have the member functions need no specialization.
template <class Ring>
    requires(detail::names_a_stop_member<Ring> || detail::names_value_type<Ring>)
struct ring_traits<Ring> : detail::native_stop_traits<Ring>, detail::native_transfer_traits<Ring> {
};

// One concept per member and rule, so a refused ring's diagnostic names what is wrong:
// "ring_has_wake<R> evaluated to false", "ring_try_push_is_noexcept<R> evaluated to false"...
template <class Ring>
concept ring_has_stopped = requires(const Ring& r) { ring_traits<Ring>::stopped(r); };
template <class Ring>
concept ring_has_stop = requires(Ring& r) { ring_traits<Ring>::stop(r); };
template <class Ring>
concept ring_has_wake = requires(Ring& r) { ring_traits<Ring>::wake(r); };
template <class Ring>
concept ring_stop_members_are_noexcept = requires(Ring& r, const Ring& cr) {
    { ring_traits<Ring>::stopped(cr) } noexcept;
    { ring_traits<Ring>::stop(r) } noexcept;
    { ring_traits<Ring>::wake(r) } noexcept;
};
template <class Ring>
concept ring_stopped_returns_bool = requires(const Ring& r) {
    { ring_traits<Ring>::stopped(r) } -> std::same_as<bool>;
};

/// A ring tx_gate can stop and wake (NIC-style: the device completes what the producer posts).
template <class Ring>
concept adaptable_ring = ring_has_stopped<Ring> && ring_has_stop<Ring> && ring_has_wake<Ring> &&
                         ring_stopped_returns_bool<Ring> && ring_stop_members_are_noexcept<Ring>;

template <class Ring>
concept ring_has_value_type = std::is_object_v<typename ring_traits<Ring>::value_type>;
template <class Ring>
concept ring_has_try_push = requires(Ring& r, typename ring_traits<Ring>::value_type& v) {
    ring_traits<Ring>::try_push(r, std::move(v));
};
template <class Ring>
concept ring_has_try_pop = requires(Ring& r, typename ring_traits<Ring>::value_type& v) {
    ring_traits<Ring>::try_pop(r, v);
};
template <class Ring>
concept ring_try_push_returns_bool = requires(Ring& r, typename ring_traits<Ring>::value_type& v) {
    { ring_traits<Ring>::try_push(r, std::move(v)) } -> std::same_as<bool>;
};
template <class Ring>
concept ring_try_pop_returns_bool = requires(Ring& r, typename ring_traits<Ring>::value_type& v) {
    { ring_traits<Ring>::try_pop(r, v) } -> std::same_as<bool>;
};
template <class Ring>
concept ring_try_push_is_noexcept = requires(Ring& r, typename ring_traits<Ring>::value_type& v) {
    { ring_traits<Ring>::try_push(r, std::move(v)) } noexcept;
};
template <class Ring>
concept ring_try_pop_is_noexcept = requires(Ring& r, typename ring_traits<Ring>::value_type& v) {
    { ring_traits<Ring>::try_pop(r, v) } noexcept;
};

/// A single-producer single-consumer ring a channel can move items through.
/// An item's units (what the limit counts) must be a std::uint32_t computed without throwing:
/// the traits' (or the ring's own) units() if there is one, else item_units<value_type>::of().
/// Each is refused by name when malformed (returning int or size_t, or not noexcept); a
/// malformed units() is never passed over for item_units (its items would count 1 each).
template <class Ring>
concept ring_has_units =
    requires(const typename ring_traits<Ring>::value_type& v) { ring_traits<Ring>::units(v); } ||
    (std::is_base_of_v<detail::native_transfer_traits<Ring>, ring_traits<Ring>>
         ? detail::names_units_member<Ring, typename ring_traits<Ring>::value_type> // the ring's
         : detail::names_units_member<ring_traits<Ring>,
                                      typename ring_traits<Ring>::value_type>); // a specialization's
template <class Ring>
concept ring_units_is_noexcept_uint32 =
    !ring_has_units<Ring> || requires(const typename ring_traits<Ring>::value_type& v) {
        { ring_traits<Ring>::units(v) } noexcept -> std::same_as<std::uint32_t>;
    };
template <class Ring>
concept ring_item_units_are_noexcept_uint32 =
    ring_has_units<Ring> || requires(const typename ring_traits<Ring>::value_type& v) {
        { item_units<typename ring_traits<Ring>::value_type>::of(v) } noexcept
            -> std::same_as<std::uint32_t>;
    };
template <class Ring>
concept channel_ring = ring_has_value_type<Ring> && ring_has_try_push<Ring> &&
                       ring_has_try_pop<Ring> && ring_try_push_returns_bool<Ring> &&
                       ring_try_pop_returns_bool<Ring> && ring_try_push_is_noexcept<Ring> &&
                       ring_try_pop_is_noexcept<Ring> && ring_units_is_noexcept_uint32<Ring> &&
                       ring_item_units_are_noexcept_uint32<Ring>;

/// The value type of a channel_ring.
template <channel_ring Ring>
using ring_value_t = typename ring_traits<Ring>::value_type;

/// Units an item of Ring counts for: the traits' units() if any, else item_units.
template <channel_ring Ring>
[[nodiscard]] constexpr std::uint32_t units_of(const ring_value_t<Ring>& v) noexcept {
    if constexpr (ring_has_units<Ring>)
        return ring_traits<Ring>::units(v);
    else
        return item_units<ring_value_t<Ring>>::of(v);
}

} // namespace v0
} // namespace qlimits
