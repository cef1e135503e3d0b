#!/usr/bin/env python3
"""A dispatch order of fragment kernels against the library's choice, from scripts/gpu_mma.sh runs
(gpu_mma_network.sh archives: each run times every fragment kernel of its class, the library's cuda
choice and cuDNN in both layouts, in one process). For each layer of a suite the first kernel of
ORDER that took it (as the dispatcher would: a kernel that refused the layer has no row) stands for
the library with those kernels as defaults; a layer none took, or whose library kernel matches --keep
(defaults ahead of ORDER), keeps the library's row. Prints per
suite and dtype: layers, library / new geomean (min, max), cuDNN in the layout / new and cuDNN's
best layout / new (geomean, min), and the layers under 1.0 against the library.
--before: ORDER is the dispatch order before a change and the library (built after it) is what is
measured: prints before / library (the change's speed-up) and cuDNN / library instead.
Usage: mma_library_ab.py --layout NCHW --order 'TAG,TAG,...' [--keep REGEX] [--before] DIR...   (DIR: an unpacked
archive of gpu_mma_network.sh, holding mma-<dtype>-<suite>-<stride>-<class>/ runs; TAG: a kernel name's tail
after the device, with the filter class, as k1_cuda_mmaf1m2n8v4)"""
import argparse
import glob
import math
import os
import re
from collections import defaultdict

from mma_summary import best_peers, key, rows

gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
ap = argparse.ArgumentParser()
ap.add_argument("--layout", default="NHWC")
ap.add_argument("--order", required=True)
ap.add_argument("--keep", default="^$", help="library rows whose kernel this matches stay (defaults ahead of ORDER)")
ap.add_argument("--before", action="store_true", help="ORDER is the dispatch before a change; the library is after it")
ap.add_argument("dirs", nargs="+")
a = ap.parse_args()
order = a.order.split(",")
table = defaultdict(list)  # (suite, dtype) -> [(library / new, cudnn / new, best / new, layer)]
seen = set()
for top in a.dirs:
    for d in sorted(glob.glob(os.path.join(top, "mma-*-*"))):
        if not os.path.isdir(d):
            continue
        m = re.match(r"mma-(bf16|f16)-(.+)-s[12]-(pointwise|spatial)$", os.path.basename(d))
        dt, suite = m.group(1), m.group(2)
        best = {l: t for (s, l), t in best_peers(d).items() if s == suite}
        p = os.path.join(d, f"{suite}_cuda_{a.layout}.json")
        lib = {key(r): r for r in rows(p) if r.get("time_ms")} if os.path.exists(p) else {}
        kern = {}
        for p in glob.glob(os.path.join(d, f"{suite}_bwd[dw]_*.json")):
            for r in rows(p):
                if r.get("time_ms") and not r.get("error"):
                    kern.setdefault(r["kernel"], {})[key(r)] = r
        for l, old in lib.items():
            if (dt, suite, l) in seen:
                continue
            seen.add((dt, suite, l))
            new = old
            for tag in ([] if re.search(a.keep, old["kernel"]) else order):
                hit = [rs[l] for k, rs in kern.items() if k.endswith(tag) and l in rs]
                if hit:
                    new = hit[0]
                    break
            if a.before:  # the library is the new one, ORDER the old dispatch
                old, new = new, old
            table[(suite, dt)].append((old["time_ms"] / new["time_ms"], new["peer_time_ms"] / new["time_ms"],
                                       best[l] / new["time_ms"], l, new["kernel"]))
col_old, col_new = ("before", "library") if a.before else ("library", "new")
print(f"| suite | dtype | layers | {col_old} / {col_new}: geomean (min, max) | cuDNN {a.layout} / {col_new} | "
      f"cuDNN best layout / {col_new}: geomean (min) |")
print("|---|---|---:|---|---:|---|")
for (suite, dt), v in sorted(table.items()):
    sp = [x[0] for x in v]
    print(f"| {suite} | {dt} | {len(v)} | {gm(sp):.2f} ({min(sp):.2f}, {max(sp):.2f}) | {gm([x[1] for x in v]):.3f} | "
          f"{gm([x[2] for x in v]):.3f} ({min(x[2] for x in v):.3f}) |")
slower = [(s, dt, x) for (s, dt), v in sorted(table.items()) for x in v if x[0] < 1.0]
if slower:
    print(f"\nLayers slower than {col_old}:")
    for s, dt, x in slower:
        print(f"- {s} {dt} {x[0]:.2f}x {x[4]}: {x[3]}")
