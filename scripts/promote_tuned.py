#!/usr/bin/env python3
"""Promotes sweep results into the tuned dispatch table (schedules/dispatch_table.inc).

Reads driver JSON rows (convbwd-driver --json): rows of kernels forced by name (a sweep, MODE=sweep
in scripts/gpu_run.sh) and rows of the dispatcher's own choice on the same problems. For each
problem, the fastest kernel becomes a CONVBWD_TUNED row where it beats the dispatcher's choice by
more than --margin (default 10%: run-to-run noise on the H100 is about that), measured in the
same run. Rows are keyed exactly as runtime/src/dispatch.cpp's problem_key(), so they apply to
that problem only (batch size included), as MIOpen's find-db does; every other problem keeps the
class defaults.

Usage: promote_tuned.py --default rows.json [--margin 0.1] sweep.json... > rows.inc
"""
import argparse
import json
import re
from collections import defaultdict


def parse_problem(cmd):
    """MIOpenDriver conv arguments -> dict of the problem's fields."""
    args = dict(re.findall(r"-(\w) (\S+)", cmd))
    n, c, h, w, k = (int(args[x]) for x in "ncHWk")
    r, s = int(args.get("y", 1)), int(args.get("x", 1))
    ph, pw = int(args.get("p", 0)), int(args.get("q", 0))
    sh, sw = int(args.get("u", 1)), int(args.get("v", 1))
    dh, dw = int(args.get("l", 1)), int(args.get("j", 1))
    g = int(args.get("g", 1))
    p = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    q = (w + 2 * pw - dw * (s - 1) - 1) // sw + 1
    return dict(n=n, c=c, h=h, w=w, k=k, p=p, q=q, r=r, s=s, g=g, pad=(ph, ph, pw, pw), u=(sh, sw), l=(dh, dw))


def problem_key(row):
    """runtime/src/dispatch.cpp problem_key() for a driver row."""
    f = parse_problem(row["problem"])
    return ("%s %s %s %s n%d c%d h%d w%d k%d p%d q%d r%d s%d g%d pad%d,%d,%d,%d u%d,%d l%d,%d" %
            ((row["direction"], row["dtype"], row["layout"], row["target"], f["n"], f["c"], f["h"], f["w"], f["k"],
              f["p"], f["q"], f["r"], f["s"], f["g"]) + f["pad"] + f["u"] + f["l"]))


def rows(path):
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("time_ms") and not r.get("error"):
                    yield r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--default", required=True, action="append", help="rows of the dispatcher's choice")
    ap.add_argument("--margin", type=float, default=0.10)
    ap.add_argument("sweep", nargs="+")
    a = ap.parse_args()
    default = {}
    for path in a.default:
        for r in rows(path):
            default[problem_key(r)] = r
    best = defaultdict(list)
    for path in a.sweep:
        for r in rows(path):
            best[problem_key(r)].append(r)
    for key in sorted(best):
        if key not in default:
            continue
        d = default[key]
        w = min(best[key], key=lambda r: r["time_ms"])
        if w["kernel"] == d["kernel"] or w["time_ms"] * (1 + a.margin) >= d["time_ms"]:
            continue
        print('CONVBWD_TUNED("%s", "%s")  // %.3f ms, default %s %.3f ms' %
              (key, w["kernel"], w["time_ms"], d["kernel"], d["time_ms"]))


if __name__ == "__main__":
    main()
