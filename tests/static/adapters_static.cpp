// Compile-time checks of the adapters' concepts: what joins, what does not, and the noexcept
// contract of the hot paths. If this file compiles, it passes.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../../examples/rings/locked_deque.hpp"
#include "../../examples/rings/spsc_ring.hpp"
#include "qlimits/adapters/channel.hpp"
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#if QLIMITS_HAVE_BOOST_LOCKFREE
#include "../../examples/rings/boost_ring.hpp"
#endif

namespace static_adapters {
using qlimits::adaptable_ring;
using qlimits::channel_ring;
using qlimits::ring_has_units;
using qlimits::ring_units_is_noexcept_uint32;
using qlimits::limit_policy;

// ---- limit policies --------------------------------------------------------------------------
static_assert(limit_policy<qlimits::fixed_limit<>>);
static_assert(limit_policy<qlimits::unlimited<>>);
static_assert(limit_policy<qlimits::dql<>>);
static_assert(!limit_policy<int>);

// A policy whose available() may throw: not a policy (hot paths must be noexcept).
struct throwing_policy {
    using time_point = qlimits::jiffy_clock::time_point;
    struct config_type {};
    struct stats_type {};
    static constexpr std::uint32_t max_object = 1;
    throwing_policy(const config_type&, time_point) noexcept {}
    std::int64_t available() const { return 0; } // not noexcept
    std::uint32_t limit() const noexcept { return 0; }
    std::uint32_t inflight() const noexcept { return 0; }
    bool on_queued(std::uint32_t) noexcept { return true; }
    bool on_queued(std::uint32_t, time_point) noexcept { return true; }
    bool on_completed(std::uint32_t, time_point) noexcept { return true; }
    void reset(time_point) noexcept {}
    stats_type stats() const noexcept { return {}; }
};
static_assert(!limit_policy<throwing_policy>);

// ---- NIC-style rings (tx_gate) ---------------------------------------------------------------
struct nic {
    bool stopped() const noexcept { return false; }
    void stop() noexcept {}
    void wake() noexcept {}
};
struct nic_without_wake {
    bool stopped() const noexcept { return false; }
    void stop() noexcept {}
};
struct nic_throwing_stop {
    bool stopped() const noexcept { return false; }
    void stop() {}
    void wake() noexcept {}
};
struct nic_int_stopped {
    int stopped() const noexcept { return 0; } // exact return types: bool, not convertible
    void stop() noexcept {}
    void wake() noexcept {}
};
struct opaque_nic {
    std::atomic<bool> off{false};
};
struct opaque_pipe {};
struct never_specialized_nic {
    std::atomic<bool> off{false};
};
static_assert(adaptable_ring<nic>);
static_assert(!adaptable_ring<int>);
static_assert(!adaptable_ring<nic_without_wake>);
static_assert(!adaptable_ring<nic_throwing_stop>);
static_assert(!adaptable_ring<nic_int_stopped>);
static_assert(!adaptable_ring<never_specialized_nic>); // data only, and no specialization
static_assert(!channel_ring<nic>);                     // a stop flag is not a transfer ring

// ---- transfer rings (channel) ----------------------------------------------------------------
struct pipe {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
};
struct pipe_without_pop {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
};
struct pipe_without_value_type {
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
};
struct pipe_throwing_push {
    using value_type = int;
    bool try_push(int&&) { return true; }
    bool try_pop(int&) noexcept { return true; }
};
struct pipe_void_pop {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    void try_pop(int&) noexcept {}
};
struct sized_pipe {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    static constexpr std::uint32_t units(const int& v) noexcept {
        return static_cast<std::uint32_t>(v);
    }
};
// A ring whose own units() returns size_t, or may throw: refused by name, never passed over for
// item_units (which would count its 1500-byte packets as 1 unit each).
struct pipe_size_t_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    static std::size_t units(const int& v) noexcept { return static_cast<std::size_t>(v); }
};
struct pipe_throwing_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    static std::uint32_t units(const int& v) { return static_cast<std::uint32_t>(v); }
};
// Any other `units` the ring names is refused too: non-static, taking a non-const reference,
// or a data member.
struct pipe_member_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    std::uint32_t units(const int& v) const noexcept { return static_cast<std::uint32_t>(v); }
};
struct pipe_mutable_ref_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    static std::uint32_t units(int& v) noexcept { return static_cast<std::uint32_t>(v); }
};
struct pipe_data_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    static constexpr std::uint32_t units = 1500;
};
// Overloaded or a template (review 2026-12-03): `&T::units` is ill-formed for these, and the
// items of such a ring counted 1 each, a byte limit silently became a packet limit.
struct pipe_overloaded_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    std::uint32_t units(const int& v) const noexcept { return static_cast<std::uint32_t>(v); }
    std::uint32_t units(const long& v) const noexcept { return static_cast<std::uint32_t>(v); }
};
struct pipe_template_units {
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    template <class T>
    std::uint32_t units(const T& v) const noexcept {
        return static_cast<std::uint32_t>(v);
    }
};
struct pipe_static_overloaded_units { // callable as Ring::units(item): used, not refused
    using value_type = int;
    bool try_push(int&&) noexcept { return true; }
    bool try_pop(int&) noexcept { return true; }
    static constexpr std::uint32_t units(const int& v) noexcept {
        return static_cast<std::uint32_t>(v);
    }
    static constexpr std::uint32_t units(const long& v) noexcept {
        return static_cast<std::uint32_t>(v);
    }
};
// A polymorphic ring with a private virtual destructor: a first detector of overloaded `units`
// derived a class from the ring, which failed to compile here (review 2026-12-03).
class poly_ring {
public:
    using value_type = int;
    virtual bool try_push(int&&) noexcept { return true; }
    virtual bool try_pop(int&) noexcept { return true; }
    static void destroy(poly_ring* r) { delete r; }

private:
    virtual ~poly_ring() = default;
};
struct both_roles {
    using value_type = long;
    bool try_push(long&&) noexcept { return true; }
    bool try_pop(long&) noexcept { return true; }
    bool stopped() const noexcept { return false; }
    void stop() noexcept {}
    void wake() noexcept {}
};
static_assert(channel_ring<pipe>);
static_assert(!channel_ring<int>);
static_assert(!channel_ring<pipe_without_pop>);
static_assert(!channel_ring<pipe_without_value_type>);
static_assert(!channel_ring<pipe_throwing_push>);
static_assert(!channel_ring<pipe_void_pop>);
static_assert(ring_has_units<pipe_size_t_units>);
static_assert(!ring_units_is_noexcept_uint32<pipe_size_t_units>);
static_assert(!channel_ring<pipe_size_t_units>);
static_assert(!ring_units_is_noexcept_uint32<pipe_throwing_units>);
static_assert(!channel_ring<pipe_throwing_units>);
static_assert(!ring_has_units<pipe> && ring_units_is_noexcept_uint32<pipe>);
static_assert(ring_has_units<pipe_member_units> && !channel_ring<pipe_member_units>);
static_assert(ring_has_units<pipe_mutable_ref_units> && !channel_ring<pipe_mutable_ref_units>);
static_assert(ring_has_units<pipe_data_units> && !channel_ring<pipe_data_units>);
static_assert(ring_has_units<pipe_overloaded_units> && !channel_ring<pipe_overloaded_units>);
static_assert(ring_has_units<pipe_template_units> && !channel_ring<pipe_template_units>);
static_assert(ring_has_units<pipe_static_overloaded_units> &&
              channel_ring<pipe_static_overloaded_units>);
static_assert(qlimits::units_of<pipe_static_overloaded_units>(1500) == 1500);
static_assert(channel_ring<poly_ring> && !ring_has_units<poly_ring>);
static_assert(ring_has_units<sized_pipe> && channel_ring<sized_pipe>);
static_assert(channel_ring<both_roles> && adaptable_ring<both_roles>);
static_assert(channel_ring<rings::spsc_ring<int, 8>>);
static_assert(channel_ring<rings::locked_deque<int>>);
#if QLIMITS_HAVE_BOOST_LOCKFREE
static_assert(channel_ring<boost::lockfree::spsc_queue<int, boost::lockfree::capacity<8>>>);
#endif

// ---- units ----------------------------------------------------------------------------------
struct frame {
    std::uint32_t len;
};
} // namespace static_adapters

template <>
struct qlimits::item_units<static_adapters::frame> {
    static constexpr std::uint32_t of(const static_adapters::frame& f) noexcept { return f.len; }
};
// A specialization whose units() is not static (so not callable as ring_traits<R>::units).
template <>
struct qlimits::ring_traits<static_adapters::opaque_pipe> {
    using value_type = int;
    static bool try_push(static_adapters::opaque_pipe&, int&&) noexcept { return true; }
    static bool try_pop(static_adapters::opaque_pipe&, int&) noexcept { return true; }
    std::uint32_t units(const int& v) const noexcept { return static_cast<std::uint32_t>(v); }
};
template <>
struct qlimits::ring_traits<static_adapters::opaque_nic> {
    static bool stopped(const static_adapters::opaque_nic& r) noexcept { return r.off.load(); }
    static void stop(static_adapters::opaque_nic& r) noexcept { r.off.store(true); }
    static void wake(static_adapters::opaque_nic& r) noexcept { r.off.store(false); }
};

namespace static_adapters {
static_assert(adaptable_ring<opaque_nic>);
static_assert(ring_has_units<opaque_pipe> && !channel_ring<opaque_pipe>);
static_assert(qlimits::units_of<pipe>(7) == 1);       // packet-counted by default
static_assert(qlimits::units_of<sized_pipe>(7) == 7); // the ring's own units()
static_assert(qlimits::units_of<rings::spsc_ring<frame, 8>>(frame{1500}) == 1500); // item_units

// ---- the adapters' surface -------------------------------------------------------------------
using gate = qlimits::tx_gate<qlimits::dql<>, nic>;
using chan = qlimits::channel<rings::spsc_ring<int, 8>, qlimits::dql<>>;
static_assert(noexcept(std::declval<gate&>().sent(std::declval<nic&>(), 1U)));
static_assert(noexcept(std::declval<gate&>().sent(std::declval<nic&>(), 1U, true)));
static_assert(noexcept(std::declval<gate&>().completed(std::declval<nic&>(), 1U,
                                                       std::declval<gate::time_point>())));
static_assert(noexcept(std::declval<chan&>().try_send(1)));
static_assert(noexcept(std::declval<chan&>().send(1)));
static_assert(noexcept(std::declval<chan&>().try_receive(std::declval<int&>())));
static_assert(noexcept(std::declval<chan&>().close()));
static_assert(!std::is_copy_constructible_v<gate> && !std::is_move_constructible_v<gate>);
static_assert(!std::is_copy_constructible_v<chan> && !std::is_move_constructible_v<chan>);
static_assert(std::is_same_v<chan::clock_type, qlimits::jiffy_clock>); // the policy's clock
static_assert(std::is_same_v<qlimits::channel<pipe, qlimits::unlimited<>>::value_type, int>);
} // namespace static_adapters
