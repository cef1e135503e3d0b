#!/usr/bin/env python3
"""One network's layers across scripts/gpu_mma.sh runs (one run per layer class: pointwise,
spatial, stride 2; each run's rows are ratios measured in its own process). Within a run the
layers fall into groups by the most specific filter class of a fragment kernel that took them
(k1 or k3, else any): each group is served by the kernel with the best geomean against cuDNN's
best layout over the group's layers among those that took all of them (what a tuning record per
problem class would pick); a layer no fragment kernel took keeps the library's cuda default from
the same run (a run of no fragment kernel, gpu_mma.sh's MMA_KERNELS='^$': the library's choices,
tuning database included). A layer in several runs counts once (the first run given).
Prints per run and per direction the geomean against cuDNN in the layout (NHWC; --layout NCHW) and its
best layout.
Usage: mma_network.py [--layout L] [--kernels REGEX] SUITE DIR...  (DIR: an unpacked gpu_mma.sh archive; REGEX:
only the fragment kernels whose names it matches, say the library's defaults)"""
import glob
import math
import os
import re
import sys
from collections import defaultdict

from mma_summary import best_peers, key, rows

gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
args = sys.argv[1:]
only = re.compile(".")
layout = "NHWC"
if args[:1] == ["--layout"]:
    layout, args = args[1], args[2:]
if args[:1] == ["--kernels"]:
    only, args = re.compile(args[1]), args[2:]
suite, dirs = args[0], args[1:]
seen = set()
total = defaultdict(lambda: ([], []))  # direction -> (vs the layout, vs best)
print(f"| run | direction | layers | kernel | vs cuDNN {layout} | vs cuDNN best layout |")
print("|---|---|---:|---|---:|---:|")
for d in dirs:
    peers = best_peers(d)
    best = {l: t for (s, l), t in peers.items() if s == suite}
    default = {}
    p = os.path.join(d, f"{suite}_cuda_{layout}.json")
    for r in rows(p) if os.path.exists(p) else []:
        if r.get("time_ms") and r.get("peer_time_ms"):
            default[key(r)] = r
    kernels = {}
    for p in glob.glob(os.path.join(d, f"{suite}_bwd[dw]_*.json")):
        ok = [r for r in rows(p) if r.get("time_ms") and r.get("peer_time_ms")]
        if ok and only.search(ok[0]["kernel"]):
            kernels[ok[0]["kernel"]] = {key(r): r for r in ok}
    fclass = lambda k: re.search(r"_(k1|k3|any)_", k).group(1)
    groups = defaultdict(list)  # the most specific filter class that took the layer -> layers
    for l in {l for rs in kernels.values() for l in rs}:
        took = {fclass(k) for k, rs in kernels.items() if l in rs}
        groups[next(c for c in ("k1", "k3", "any") if c in took)].append(l)
    layers = []
    for ls in groups.values():
        full = [k for k, rs in kernels.items() if all(l in rs for l in ls)]
        if not full:  # no kernel took every layer of the group: each layer its best kernel's row
            layers += [(l, min((rs[l] for rs in kernels.values() if l in rs), key=lambda r: r["time_ms"])) for l in ls]
            continue
        pick = max(full, key=lambda k: gm([best[l] / kernels[k][l]["time_ms"] for l in ls]))
        layers += [(l, kernels[pick][l]) for l in ls]
    took_any = {l for l, _ in layers}
    layers += [(l, r) for l, r in default.items() if l not in took_any]
    nh, bl, used = [], [], set()
    for l, r in layers:
        if (r["direction"], l) in seen:
            continue
        seen.add((r["direction"], l))
        used.add(r["kernel"])
        nh.append(r["peer_time_ms"] / r["time_ms"])
        bl.append(best[l] / r["time_ms"])
        total[r["direction"]][0].append(nh[-1])
        total[r["direction"]][1].append(bl[-1])
    if nh:
        label = re.sub(r"^mma-(bf16|f16)-", "", os.path.basename(os.path.normpath(d).removesuffix("/mma")))
        print(f"| {label} | {r['direction']} | {len(nh)} | "
              f"{', '.join(sorted(used))} | {gm(nh):.3f} | {gm(bl):.3f} |")
for direction, (nh, bl) in sorted(total.items()):
    print(f"| all | {direction} | {len(nh)} | | **{gm(nh):.3f}** | **{gm(bl):.3f}** |")
