#!/usr/bin/env python3
"""Table of scripts/gpu_mma.sh's rows: per suite and kernel, the geomean of cuDNN time / convbwd time
in the same layout (NHWC; --layout NCHW: NCHW) and against cuDNN's faster layout per layer (NHWC or NCHW, from the
cuda runs' peer times), with convbwd's median and best TFLOP/s and the geomean of its roofline
floor / time (floor = max(FLOPs / 787 TFLOP/s bf16 tensor-core GEMM, bytes / bandwidth): the H100's
ceilings measured on the device machine, shared/DESIGN.md; an H200 (the run's device.txt) has the same
chip and 4300 GB/s, docs/PERFORMANCE.md's ceilings). Usage: mma_summary.py [--layout NHWC|NCHW] DIR"""
import glob
import json
import math
import os
import re
import sys
from collections import defaultdict


def rows(path):
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                yield json.loads(line)


def key(r):  # the problem without layout or target
    return r["problem"].split(" -I ")[0]


def suite_of(path):  # <suite>_<kernel>.json, <suite>_cuda_<layout>.json
    return re.split(r"_bwd[dw]_|_cuda_", os.path.basename(path)[: -len(".json")])[0]


def best_peers(d):
    """(suite, problem) -> cuDNN's best time over layouts: every cuDNN time of the layer in the run
    (the cuda runs' NHWC and NCHW, and NHWC beside each opencl kernel)."""
    best = defaultdict(lambda: math.inf)
    for path in glob.glob(os.path.join(d, "*.json")):
        for r in rows(path):
            if r.get("peer_time_ms"):
                k = (suite_of(path), key(r))
                best[k] = min(best[k], r["peer_time_ms"])
    return best


def bandwidth(d):  # bytes/s of the run's GPU
    p = os.path.join(d, "device.txt")
    return 4300e9 if os.path.exists(p) and "H200" in open(p).read() else 2971e9


def main(d, layout="NHWC"):
    other = "NCHW" if layout == "NHWC" else "NHWC"
    bw = bandwidth(d)
    best_peer = best_peers(d)
    table = defaultdict(list)
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        base = os.path.basename(path)[: -len(".json")]
        if base.endswith("_cuda_" + other):  # only cuDNN's other layout, for the best-layout ratio
            continue
        suite = suite_of(path)
        for r in rows(path):
            if r.get("error") or not r.get("time_ms") or not r.get("peer_time_ms"):
                continue
            floor_ms = max(r["flops"] / 787e12, r["bytes"] / bw) * 1e3
            table[(suite, r["kernel"])].append(
                (r["peer_time_ms"] / r["time_ms"], best_peer[(suite, key(r))] / r["time_ms"], r.get("tflops", 0),
                 bool(r.get("verified")) or bool(r.get("peer_verified")), floor_ms / r["time_ms"]))
    # checked: verified against the double reference (-V 1), or (-V 0) cuDNN's output agrees with it.
    print(f"| suite | kernel | layers | vs cuDNN {layout} | vs cuDNN best layout | TFLOP/s median | TFLOP/s max | floor / time | checked |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
    for (s, k), v in sorted(table.items()):
        tf = sorted(x[2] for x in v)
        print(f"| {s} | {k} | {len(v)} | {gm([x[0] for x in v]):.3f} | {gm([x[1] for x in v]):.3f} | "
              f"{tf[len(tf) // 2]:.1f} | {tf[-1]:.1f} | {gm([x[4] for x in v]):.2f} | {sum(x[3] for x in v)}/{len(v)} |")


if __name__ == "__main__":
    a = sys.argv[1:]
    lay = "NHWC"
    if a[:1] == ["--layout"]:
        lay, a = a[1], a[2:]
    main(a[0], lay)
