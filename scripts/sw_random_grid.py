#!/usr/bin/env python3
"""T6/T9 of software_limit on random parameter sets (docs/software_limit.md).

scripts/sw_sweep.sh runs a fixed grid, which is published by being in the repository; a default
checked only there could be tuned to it. This draws N cases from the ranges issue 10 names
(ring 64-4096, consumer cost 50 ns - 200 us per item, wake costs 0-50 us, poll budgets 8-256,
bursty producers), seeded, so two settings can be compared on the same fresh draw, and reports
how many sw rows meet T6 and T9 (scripts/sw_targets.py).

usage: sw_random_grid.py LAB OUTDIR [--n N] [--seed S] [-- EXTRA LAB ARGS...]
"""
import math
import os
import random
import re
import subprocess
import sys


def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def cases(n, seed):
    rng = random.Random(seed)
    for i in range(n):
        ring = 2 ** rng.randint(6, 12)  # 64 .. 4096
        cost = round(log_uniform(rng, 50, 200_000))
        batch = 2 ** rng.randint(3, 8)  # 8 .. 256
        # Wake costs: a third of the cases near zero (spinning or cheap wake-ups).
        wake = 0 if rng.random() < 0.33 else round(log_uniform(rng, 200, 50_000))
        call = round(wake * rng.uniform(0.1, 1.0))
        if i % 2 == 0:
            args = ["veth-bql", "--nrules=0", "--adversarial=0", "--speed-cases=0",
                    f"--ring={ring}", f"--base-cost-ns={cost}", f"--producer-wake-ns={wake}",
                    f"--consumer-wake-ns={round(log_uniform(rng, 100, 50_000))}",
                    f"--budget={batch}", f"--wake-call-ns={min(call, 5000)}",
                    f"--producer-ns={round(log_uniform(rng, 50, 2 * cost + 100))}"]
        else:
            burst = 2 ** rng.randint(3, 9)
            gap = round(log_uniform(rng, 10, 1000))
            args = ["thread-ring", "--pattern=flood,bursts", f"--ring={ring}",
                    f"--work-ns={cost}", f"--wake-ns={wake}", f"--wake-call-ns={call}",
                    f"--batch={batch}", f"--burst={burst}", f"--burst-gap-us={gap}"]
        yield i, args


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    lab, out = argv[0], argv[1]
    n, seed = 20, 1
    for a in argv[2:]:
        if a.startswith("--n="):
            n = int(a[4:])
        elif a.startswith("--seed="):
            seed = int(a[7:])
    os.makedirs(out, exist_ok=True)
    fixed = "1,2,4,8,16,32,64,128,256"
    paths = []
    for i, args in cases(n, seed):
        path = os.path.join(out, f"case_{i}.json")
        cmd = [lab, "run", *args, "--duration-ms=1000", "--warmup-ms=200",
               "--policy=none,dql,sw,fixed", f"--fixed-limit={fixed}", "--json", path, *extra]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not os.path.exists(path):
            sys.exit(f"case {i} failed: {' '.join(cmd)}\n{r.stderr}")
        paths.append(path)
        print(f"case {i}: {' '.join(args)}", flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    t = subprocess.run([sys.executable, os.path.join(here, "sw_targets.py"), *paths],
                       stdout=subprocess.PIPE, text=True)
    rows = [l for l in t.stdout.splitlines() if re.search(r"\bsw-(item|batch)\b", l) and "T6" in l]
    t6 = sum("T6 ok" in l for l in rows)
    t9 = sum("T9 ok" in l for l in rows)
    both = sum("T6 ok" in l and "T9 ok" in l for l in rows)
    print(t.stdout, end="")
    print(f"sw-item/sw-batch rows: {len(rows)}; T6 met {t6}, T9 met {t9}, both {both}")


if __name__ == "__main__":
    main()
