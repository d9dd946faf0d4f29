#!/usr/bin/env python3
"""Predicted (qlimits-lab whatif --json) vs measured (qlimits-lab pipeline --json) throughput and
sojourn p99, per pattern and policy, as a markdown table (scripts/whatif_proof.sh runs both).
usage: whatif_table.py OUTDIR PATTERNS CAPTURE_POLICY   (reads OUTDIR/P.real.json, P.whatif.json)"""
import json, sys
out, patterns, cap = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
def load(path):
    # A run whose checks failed is kept, and its row says so.
    return {r["policy"]: dict(r["metrics"], failed=bool(r.get("checks"))) for r in json.load(open(path))}
print(f"\ncaptured under {cap}; goal: |predicted - measured| / measured <= 20%\n")
print("| pattern | policy | measured items/s | predicted | off | measured soj.p99 us | predicted | off "
      "| real x none, rounds' min-max |")
print("|---|---|---|---|---|---|---|---|---|")
within = total = 0
hits = {"throughput_pps": 0, "sojourn_p99_us": 0}
for p in patterns:
    real, pred = load(f"{out}/{p}.real.json"), load(f"{out}/{p}.whatif.json")
    for pol, m in real.items():
        if pol not in pred: continue
        failed = m["failed"] or pred[pol]["failed"]
        row = [p, pol + (" (captured)" if pol == cap else "") + (" CHECKS FAILED" if failed else "")]
        ok = not failed
        for key in ("throughput_pps", "sojourn_p99_us"):
            a, b = m.get(key), pred[pol].get(key)
            if not a or b is None:
                row += ["-", "-", "-"]; ok = False; continue
            off = (b - a) / a
            ok = ok and abs(off) <= 0.20
            hits[key] += (not failed) and abs(off) <= 0.20
            row += [f"{a:.4g}", f"{b:.4g}", f"{100 * off:+.0f}%"]
        spread = (m.get("throughput_x_none_min"), m.get("throughput_x_none_max"))
        row.append(f"{spread[0]:.2f}-{spread[1]:.2f}" if None not in spread else "-")
        total += 1; within += ok
        print("| " + " | ".join(row) + " |")
print(f"\nwithin 20%: throughput {hits['throughput_pps']} of {total} rows, sojourn p99 "
      f"{hits['sojourn_p99_us']} of {total}, both {within} of {total}")
