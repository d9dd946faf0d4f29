// SPDX-License-Identifier: MIT
// qlimits/version.hpp: the library version, the one place it is written down.
// CMakeLists.txt reads these three lines with a regex, so project(VERSION) cannot drift.
#pragma once

#define QLIMITS_VERSION_MAJOR 0
#define QLIMITS_VERSION_MINOR 1
#define QLIMITS_VERSION_PATCH 0

namespace qlimits {
inline namespace v0 {
/// The version as one integer: major * 10000 + minor * 100 + patch.
inline constexpr int version =
    QLIMITS_VERSION_MAJOR * 10000 + QLIMITS_VERSION_MINOR * 100 + QLIMITS_VERSION_PATCH;
} // namespace v0
} // namespace qlimits
