#!/usr/bin/env bash
# T6/T9 of software_limit on parameter sets published nowhere (docs/software_limit.md): a grid
# over ring size, consumer cost, wake-up costs and poll budget, in veth-bql (flood) and
# thread-ring (flood and bursts), each case with none, dql, sw and fixed-1..256. Prints one
# line per sw row (scripts/sw_targets.py) and the count of sw-item/sw rows that miss a target.
# usage: scripts/sw_sweep.sh [LAB] [OUTDIR]    (LAB default build/bench/qlimits-lab)
# Extra lab arguments for every run from LAB_ARGS, e.g. LAB_ARGS=--learn-wake=1.
set -euo pipefail
lab=${1:-build/bench/qlimits-lab}
out=${2:-sw-sweep}
mkdir -p "$out"
rm -f "$out"/*.json # judge this run's results only
here=$(cd "$(dirname "$0")" && pwd)
fixed=1,2,4,8,16,32,64,128,256
common=(--duration-ms=1000 --warmup-ms=200 --policy=none,dql,sw,fixed --fixed-limit=$fixed
        --no-svg)
# shellcheck disable=SC2206 # word splitting of LAB_ARGS is wanted
common+=(${LAB_ARGS:-})
i=0
# One case: exit 1 (a lab check failed on a short run) keeps the rows; anything else (the lab
# missing, a refused argument: no JSON written) stops the sweep.
run_case() {
  local name=$1 rc=0
  shift
  "$lab" "$@" >/dev/null || rc=$?
  if [ "$rc" -eq 1 ]; then
    echo "$name: lab checks failed (short run), rows kept"
  elif [ "$rc" -ne 0 ]; then
    echo "$name: the lab exited $rc; stopping" >&2
    exit 2
  fi
}
# veth-bql: ring, consumer cost per packet, producer wake latency, consumer wake, poll budget.
for spec in "64 50 0 0 8" "4096 200000 50000 50000 256" "1024 2000 10000 5000 32" \
            "128 300 20000 1000 128" "2048 20000 500 30000 16" "512 120 5000 0 256"; do
  read -r ring cost pw cw budget <<<"$spec"
  i=$((i + 1))
  run_case "veth case $i" run veth-bql "${common[@]}" --nrules=0 --adversarial=0 --speed-cases=0 \
    --ring="$ring" --base-cost-ns="$cost" --producer-wake-ns="$pw" --consumer-wake-ns="$cw" \
    --budget="$budget" --json "$out/veth_$i.json"
done
# thread-ring: ring, work per item, wake latency, wake call, batch; flood and bursts.
for spec in "64 50 0 0 8" "4096 200000 50000 20000 256" "1024 2000 10000 3000 32" \
            "256 300 20000 5000 128" "2048 20000 1000 500 16"; do
  read -r ring work wake call batch <<<"$spec"
  i=$((i + 1))
  run_case "thread-ring case $i" run thread-ring "${common[@]}" --pattern=flood,bursts \
    --ring="$ring" --work-ns="$work" --wake-ns="$wake" --wake-call-ns="$call" --batch="$batch" \
    --json "$out/tring_$i.json"
done
python3 "$here/sw_targets.py" "$out"/*.json
