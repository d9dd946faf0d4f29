// SPDX-License-Identifier: MIT
// qlimits/qlimits.hpp: everything public, in one include.
#pragma once

#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/version.hpp"
