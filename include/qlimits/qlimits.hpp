// SPDX-License-Identifier: MIT
// qlimits/qlimits.hpp: everything public, in one include.
#pragma once

#include "qlimits/adapters/channel.hpp"
#include "qlimits/adapters/moderation.hpp"
#include "qlimits/adapters/ring_traits.hpp"
#include "qlimits/adapters/tx_gate.hpp"
#include "qlimits/clock.hpp"
#include "qlimits/concepts.hpp"
#include "qlimits/config.hpp"
#include "qlimits/dim/net_dim.hpp"
#include "qlimits/dim/profiles.hpp"
#include "qlimits/dim/rdma_dim.hpp"
#include "qlimits/dim/sample.hpp"
#include "qlimits/dim/stats.hpp"
#include "qlimits/dim/tuner.hpp"
#include "qlimits/limits/aimd_limit.hpp"
#include "qlimits/limits/dql.hpp"
#include "qlimits/limits/fixed.hpp"
#include "qlimits/limits/gradient2_limit.hpp"
#include "qlimits/limits/peer_policy.hpp"
#include "qlimits/limits/vegas_limit.hpp"
#include "qlimits/version.hpp"
