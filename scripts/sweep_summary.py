#!/usr/bin/env python3
"""Summarises driver JSON rows per kernel: geomean peer-time / convbwd-time over the problems
each kernel ran (rows with an error are skipped). Usage: sweep_summary.py rows.json..."""
import json
import math
import sys
from collections import defaultdict

ratios = defaultdict(list)
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            t, pt = r.get("time_ms"), r.get("peer_time_ms")
            if r.get("error") or not t or not pt:
                continue
            ratios[(r["direction"], r["kernel"])].append(pt / t)
print("| direction | kernel | problems | geomean peer/convbwd | min | max |")
print("|---|---|---:|---:|---:|---:|")
for (d, k), v in sorted(ratios.items()):
    g = math.exp(sum(math.log(x) for x in v) / len(v))
    print(f"| {d} | {k} | {len(v)} | {g:.3f} | {min(v):.3f} | {max(v):.3f} |")
