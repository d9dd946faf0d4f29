// The peer policies (qlimits::vegas_limit, gradient2_limit, aimd_limit) as registry entries, so
// every limit scenario and the real pipeline run them as they run dql: through the registry.
// Each is the library's own policy on a nanosecond manual clock (it times sojourns from its own
// calls), with Netflix concurrency-limits' defaults, counting in items: on a byte-counted ring
// one item is the scenario's typical item (units_per_item = unit_bytes).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "policy.hpp"
#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/vegas_limit.hpp"

namespace lab::sim {

using peer_clock = qlimits::manual_clock<std::chrono::nanoseconds>;

/// A peer policy with its defaults, counting `unit` units per item.
template <template <class> class Peer>
std::unique_ptr<sim_policy> make_peer(typename Peer<peer_clock>::config_type cfg, double unit) {
    cfg.units_per_item = unit < 1 ? 1U : static_cast<std::uint32_t>(unit);
    return std::make_unique<library_policy<Peer<peer_clock>>>(cfg);
}

/// Append the three peers to a registry under construction (Entry = policy_entry).
template <class Entry, class Args>
void add_peer_entries(std::vector<Entry>& e) {
    const auto unit = [](const Args& a) { return a.bytes ? a.unit_bytes : 1.0; };
    e.push_back({"vegas",
                 "qlimits::vegas_limit (Netflix VegasLimit defaults; RTT = sojourn timed by "
                 "the policy)",
                 true,
                 "",
                 {},
                 [unit](const Args& a) { return make_peer<qlimits::vegas_limit>({}, unit(a)); }});
    e.push_back(
        {"gradient2",
         "qlimits::gradient2_limit (Netflix Gradient2Limit defaults; RTT = sojourn)",
         true,
         "",
         {},
         [unit](const Args& a) { return make_peer<qlimits::gradient2_limit>({}, unit(a)); }});
    e.push_back({"aimd",
                 "qlimits::aimd_limit (Netflix AIMDLimit defaults, timeout --aimd-timeout-us)",
                 true,
                 "",
                 {{"aimd-timeout-us",
                   "1000",
                   1,
                   1e7,
                   false,
                   false,
                   {},
                   "us",
                   "ours: a 1 ms sojourn budget (Netflix's 5 s default never fires on a ring)"}},
                 [unit](const Args& a) {
                     qlimits::aimd_config cfg{};
                     cfg.timeout = std::chrono::nanoseconds{
                         static_cast<std::int64_t>(a.get("aimd-timeout-us") * 1000.0)};
                     return make_peer<qlimits::aimd_limit>(cfg, unit(a));
                 }});
}

} // namespace lab::sim
