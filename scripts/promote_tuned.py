#!/usr/bin/env python3
"""Promotes sweep results into tuning-database records (schedules/tuning.db, or a user's database).

Reads driver JSON rows (convbwd-driver --json): rows of kernels forced by name (a sweep, MODE=sweep
in scripts/gpu_run.sh) and rows of the dispatcher's own choice on the same problems. For each
problem, the fastest kernel (with the launch-time knobs it was forced with, "--kernel 'NAME
knob=value'") becomes a record "<problem_key> <kernel> [knob=value ...]" where it beats the
dispatcher's choice by more than --margin (default 10%: run-to-run noise on the H100 is about
that), measured in the same run. Records are keyed by the rows' problem_key field (the runtime's
problem_key()), so they apply to that problem only (batch size included), as MIOpen's find-db
does; every other problem keeps the class defaults.

Usage: promote_tuned.py --default rows.json [--margin 0.1] sweep.json... >> my.db
"""
import argparse
import json
from collections import defaultdict


def problem_key(row):
    """The row's problem_key (convbwd-driver --json writes the runtime's own key)."""
    return row["problem_key"]


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
        print("# %.3f ms, default %s %.3f ms" % (w["time_ms"], d["kernel"], d["time_ms"]))
        print("%s %s%s" % (key, w["kernel"], (" " + w["launch"]) if w.get("launch") else ""))


if __name__ == "__main__":
    main()
