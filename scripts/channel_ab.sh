#!/usr/bin/env bash
# Interleaved A/B of channel.hpp between a previous revision and the working tree, in one
# process (bench/ab/). Usage: bash scripts/channel_ab.sh [REV [ROUNDS [SUBSTRING]]]
#   REV: the previous version (default HEAD~1); ROUNDS: rounds of every row (default 5).
# Needs g++ (C++20) and git; pins its two threads to CPUs 0 and 1.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rev=${1:-HEAD~1}
rounds=${2:-5}
only=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/prev"
(cd "$root" && git archive "$rev" include) | tar -x -C "$work/prev"
flags=(-std=c++20 -O3 -DNDEBUG -pthread)
g++ "${flags[@]}" -Dv0=ab_prev_v0 -DAB_SIDE=ab_prev -I"$work/prev/include" \
    -c "$root/bench/ab/channel_ab_rows.cpp" -o "$work/prev.o" &
g++ "${flags[@]}" -DAB_SIDE=ab_cur -I"$root/include" \
    -c "$root/bench/ab/channel_ab_rows.cpp" -o "$work/cur.o" &
g++ "${flags[@]}" -c "$root/bench/ab/channel_ab_main.cpp" -o "$work/main.o" &
wait
g++ -pthread "$work/prev.o" "$work/cur.o" "$work/main.o" -o "$work/channel_ab"
echo "channel_ab: prev = $rev, cur = working tree; $rounds rounds, medians (ns per item)"
"$work/channel_ab" "$rounds" "$only"
