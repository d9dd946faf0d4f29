// What moves through the simulated systems.
#pragma once

#include <cstdint>

#include "engine.hpp"

namespace lab::sim {

struct packet {
    ns_t born = 0;            ///< entered the qdisc (a probe's or a request's delay starts here)
    ns_t posted = 0;          ///< entered the ring (its sojourn starts here)
    std::uint32_t bytes = 0;  ///< wire size
    std::uint32_t flow = 0;   ///< source flow (fair queuing key)
    ns_t cost_ns = 0;         ///< consumer work for this packet (software ring only; 64-bit:
                              ///< nrules x rule-ns reaches 10^12 ns within the documented ranges)
    bool probe = false;       ///< ping / request-response packet: its delay is measured
};

} // namespace lab::sim
