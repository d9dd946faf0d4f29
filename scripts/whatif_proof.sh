#!/usr/bin/env bash
# Does `qlimits-lab whatif` predict? For each pattern: run `qlimits-lab pipeline` (real threads)
# under every policy, capturing one more run of one policy (--capture-policy); replay
# that capture under every policy with `whatif`; print predicted vs measured throughput and
# sojourn p99 side by side, and which rows are within +-20%. Nothing is tuned: whatif uses the
# capture and the costs `calibrate` measured during the same pipeline invocation.
# usage: scripts/whatif_proof.sh [LAB] [OUTDIR]   (LAB default build/bench/qlimits-lab)
#   env: PATTERNS (flood,bursts,paced)  POLICIES (none,dql-item,dql-batch,fixed,sw-item,sw-batch,
#        vegas-item,gradient2-item,aimd-item)  CAPTURE_POLICY (none)  SOURCE (the capture's: open for paced)
#        DURATION_MS (500)  WARMUP_MS (100)  REPEAT (3)
set -euo pipefail
lab=${1:-build/bench/qlimits-lab}
out=${2:-whatif-proof}
patterns=${PATTERNS:-flood,bursts,paced}
policies=${POLICIES:-none,dql-item,dql-batch,fixed,sw-item,sw-batch,vegas-item,gradient2-item,aimd-item}
capture_policy=${CAPTURE_POLICY:-none}
source=${SOURCE:-}
mkdir -p "$out"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
# Exit 1 is a run whose checks failed (its rows are kept, marked in the table); anything else
# (bad arguments, a timeout, a crash) stops the script, and no file of an earlier run is read in
# place of this run's (a review, 2026-12-06: a failed step printed the last run's table).
# Exit 1 is also a file that could not be written: the step's JSON must then be there.
step() { # step NAME TEXT_FILE JSON COMMAND...: run, keep exit 0 and 1, stop on the rest
  local name=$1 txt=$2 json=$3 rc=0
  shift 3
  timeout 900 "$@" >"$txt" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "$name: failed with exit $rc (see $txt)" >&2
    exit "$rc"
  fi
  if [ ! -s "$json" ]; then
    echo "$name: wrote no $json (see $txt)" >&2
    exit 1
  fi
  if [ "$rc" -eq 1 ]; then
    echo "$name: checks failed (see $txt: a failed row is marked in the table; a failed captured run is named there only)"
  fi
}
for p in ${patterns//,/ }; do
  rm -f "$out/$p.capture" "$out/$p.real.json" "$out/$p.whatif.json"
  step "pipeline $p" "$out/$p.real.txt" "$out/$p.real.json" "$lab" pipeline --pattern="$p" --policy="$policies" \
    --capture-policy="$capture_policy" --capture "$out/$p.capture" \
    --duration-ms="${DURATION_MS:-500}" --warmup-ms="${WARMUP_MS:-100}" --repeat="${REPEAT:-3}" \
    --json "$out/$p.real.json"
  step "whatif $p" "$out/$p.whatif.txt" "$out/$p.whatif.json" "$lab" whatif "$out/$p.capture" --policy="$policies" \
    ${source:+--source="$source"} --json "$out/$p.whatif.json" --svg "$out"
done
python3 "$(dirname "$0")/whatif_table.py" "$out" "$patterns" "$capture_policy"
