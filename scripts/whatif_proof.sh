#!/usr/bin/env bash
# Does `qlimits-lab whatif` predict? For each pattern: run `qlimits-lab pipeline` (real threads)
# under every policy, capturing the first round's run of one policy (--capture-policy); replay
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
for p in ${patterns//,/ }; do
  timeout 900 "$lab" pipeline --pattern="$p" --policy="$policies" --capture-policy="$capture_policy" \
    --capture "$out/$p.capture" --duration-ms="${DURATION_MS:-500}" --warmup-ms="${WARMUP_MS:-100}" \
    --repeat="${REPEAT:-3}" --json "$out/$p.real.json" >"$out/$p.real.txt" ||
    echo "pipeline $p: checks failed (see $out/$p.real.txt); rows kept"
  timeout 900 "$lab" whatif "$out/$p.capture" --policy="$policies" ${source:+--source="$source"} \
    --json "$out/$p.whatif.json" --svg "$out" >"$out/$p.whatif.txt" ||
    echo "whatif $p: checks failed (see $out/$p.whatif.txt)"
done
python3 "$(dirname "$0")/whatif_table.py" "$out" "$patterns" "$capture_policy"
