#!/usr/bin/env python3
"""Check the software_limit targets (docs/software_limit.md) on `qlimits-lab run --json` output.

usage: sw_targets.py RESULT.json [...]   (runs that include none, dql-*, sw-* and fixed-1..256)

Per case it prints the T6 reference (the smallest fixed-N whose throughput reaches 0.97x none)
and, for every sw row: throughput / none, sojourn p99 / that reference's, CPU ns per item /
none's (T9) and producer wake-ups / dql-item's. Exit status 1 if any sw-item row (sw in
scenarios with one completion mode) misses T6 or T9, so a sweep can count failures; 2 if the
input cannot decide it (a case without none, dql-item or one of fixed-1..256: a smaller
reference than the missing one would be judged leniently), with every such case named.
A metric the lab wrote as null counts as a miss of the target it decides.

T2 is checked too, in every case with sw-item, sw-poll and sw-time rows (veth-bql): their
limit_mean within 1.5x of each other and their throughput within 2 % (largest over smallest).
Its verdicts are printed and counted, and do not change the exit status (a sweep counts T6/T9).
"""
import json
import sys


def metric(r, k):
    v = r["metrics"].get(k)
    return None if v is None else float(v)


def cpu(r):
    """Producer plus consumer CPU ns per item (None if either is missing)."""
    a, b = metric(r, "producer_cpu_ns_per_item"), metric(r, "consumer_cpu_ns_per_item")
    return None if a is None or b is None else a + b


def cases_of(paths):
    """Rows grouped by case: {(scenario, case, path): {policy: row}}."""
    cases = {}
    for p in paths:
        with open(p) as f:
            for r in json.load(f):  # a case is one file's scenario and case label
                cases.setdefault((r["scenario"], r["case"], p), {})[r["policy"]] = r
    return cases


def t6_reference(by, tp0):
    """T6's reference: (N, row) of the smallest fixed-N reaching 0.97x none's throughput."""
    fixed = sorted((int(n.split("-")[1]), r) for n, r in by.items()
                   if n.startswith("fixed-") and n.split("-")[1].isdigit())
    return next(((n, r) for n, r in fixed if metric(r, "throughput_pps") >= 0.97 * tp0), None)


FIXED_LIMITS = [2 ** k for k in range(9)]  # 1, 2, 4 ... 256: T6's constants


def missing_rows(by):
    """The rows a verdict on this case needs and the case does not have."""
    need = ["none"] + [f"fixed-{n}" for n in FIXED_LIMITS]
    out = [n for n in need if n not in by]
    if "dql-item" not in by and "dql" not in by:
        out.append("dql-item")
    return out


GRANULARITIES = ("sw-item", "sw-poll", "sw-time")  # T2's rows: one policy, three completion modes


def t2_verdict(by):
    """T2 on one case: (limit spread, throughput spread, met), None without the three rows."""
    if not all(n in by for n in GRANULARITIES):
        return None
    lims = [metric(by[n], "limit_mean") for n in GRANULARITIES]
    tps = [metric(by[n], "throughput_pps") for n in GRANULARITIES]
    if None in lims or None in tps or min(lims) <= 0 or min(tps) <= 0:
        return (float("nan"), float("nan"), False)  # a null metric misses the target it decides
    lim_x, tp_x = max(lims) / min(lims), max(tps) / min(tps)
    return (lim_x, tp_x, lim_x <= 1.5 and tp_x <= 1.02)


def main(paths):
    failures = 0
    incomplete = 0
    t2_cases = t2_misses = 0
    for (scen, case, path), by in cases_of(paths).items():
        if not any(n.startswith("sw") for n in by):
            continue
        if (t2 := t2_verdict(by)) is not None:
            t2_cases += 1
            t2_misses += not t2[2]
            lims = " / ".join(f"{metric(by[n], 'limit_mean') or float('nan'):.1f}" for n in GRANULARITIES)
            print(f"{path.split('/')[-1]:12} {scen:12} {case:26} T2 limit_mean {lims} (x{t2[0]:.2f})"
                  f"  throughput spread {100 * (t2[1] - 1):.1f} %  T2 {'ok' if t2[2] else 'MISS'}")
        if missing := missing_rows(by):
            incomplete += 1
            print(f"{path.split('/')[-1]:12} {scen:12} {case:26} cannot judge: no {', '.join(missing)}",
                  file=sys.stderr)
            continue
        none = by["none"]
        tp0 = metric(none, "throughput_pps")
        ref = t6_reference(by, tp0)
        ref_soj = metric(ref[1], "sojourn_p99_us") if ref else None
        dql = by.get("dql-item") or by.get("dql")
        for name, r in sorted(by.items()):
            if not name.startswith("sw"):
                continue
            tp = metric(r, "throughput_pps") / tp0
            soj = metric(r, "sojourn_p99_us")
            soj_x = soj / ref_soj if ref_soj else None
            cpu_x = cpu(r) / cpu(none) if cpu(r) and cpu(none) else None
            wk, wk_dql = metric(r, "producer_wakeups_per_s"), dql and metric(dql, "producer_wakeups_per_s")
            t6 = tp >= 0.97 and soj_x is not None and soj_x <= 1.5
            t9 = (cpu_x is not None and cpu_x <= 1.1 and wk is not None and wk_dql is not None
                  and wk <= wk_dql)
            main_row = name in ("sw-item", "sw")
            if main_row and not (t6 and t9):
                failures += 1
            print(f"{path.split('/')[-1]:12} {scen:12} {case:26} {name:9} tput {tp:6.3f}x  soj.p99 {soj:9.2f} us"
                  f"  ref fixed-{ref[0] if ref else '-':<4} x{soj_x if soj_x else float('nan'):6.2f}"
                  f"  cpu x{cpu_x if cpu_x else float('nan'):5.2f}"
                  f"  p.wake {wk if wk is not None else float('nan'):9.3g} (dql {wk_dql if wk_dql is not None else float('nan'):9.3g})"
                  f"  T6 {'ok' if t6 else 'MISS'}  T9 {'ok' if t9 else 'MISS'}")
    print(f"{failures} sw-item/sw rows miss T6 or T9")
    if t2_cases:
        print(f"T2: {t2_misses} of {t2_cases} cases with sw-item, sw-poll and sw-time miss it")
    if incomplete:
        print(f"{incomplete} cases could not be judged (rows missing): no verdict", file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
