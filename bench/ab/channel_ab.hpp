// The interface between the two compilations of channel_ab_rows.cpp and channel_ab_main.cpp.
#pragma once

#include <functional>
#include <vector>

namespace ab {
struct result {
    double ns_per_item;     ///< wall time over items (per round trip for ping_pong_round_trip)
    double empty_per_item;  ///< failed polls of the consumer per item
    double refused_per_item; ///< refused sends of the producer per item
};
struct row {
    const char* name;
    std::function<result()> run;
};
} // namespace ab

namespace ab_prev {
std::vector<ab::row> rows();
}
namespace ab_cur {
std::vector<ab::row> rows();
}
