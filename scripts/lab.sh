#!/usr/bin/env bash
# The policy lab in one command: installs what it needs, builds (Release) and runs
# `qlimits-lab` with the given arguments (default: `run all`, every scenario and policy,
# plots written to ./lab-out/).
#   bash scripts/lab.sh                          # qlimits-lab run all
#   bash scripts/lab.sh run veth-bql --nrules=0  # one scenario, one parameter changed
#   bash scripts/lab.sh sweep veth-bql --base-cost-ns=300..600:7 --nrules=0
#   bash scripts/lab.sh pipeline --compare-sim   # real threads beside the simulated twin
#   bash scripts/lab.sh replay dql < my.trace
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/deps.sh"
qlimits_install_deps cmake make g++ libbenchmark-dev
# A build directory of its own, so a build/ configured otherwise (Debug, the lab off) is neither
# used nor changed.
build="$root/build-lab"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DQLIMITS_BUILD_TESTS=OFF \
  -DQLIMITS_BUILD_LAB=ON >/dev/null
cmake --build "$build" --target qlimits-lab -j"$(nproc)" >/dev/null
[ $# -eq 0 ] && set -- run all
exec "$build/bench/qlimits-lab" "$@"
