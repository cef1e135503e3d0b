#!/usr/bin/env python3
"""The chart of a tuning run: one panel per problem class, each candidate's geomean ratio
(peer time / candidate time over the class's suite problems) in the order it was proposed,
coloured by search round, with the best so far, the library's default and the peer (1.0).

    python3 autotune/chart.py RESULTS_DIR [--png RESULTS_DIR/search.png]

Reads every *.jsonl in RESULTS_DIR (the results database, autotune/README.md). convbwd-tune runs
it at the end of a run with the set-up's Python (matplotlib is pinned in scripts/setup.sh).
Prints a one-line summary per class either way.
"""
import argparse
import glob
import json
import math
import os
import sys
from collections import defaultdict


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def load(dirname):
    rows = []
    for f in sorted(glob.glob(os.path.join(dirname, "*.jsonl"))):
        with open(f) as fh:
            for line in fh:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass  # a torn last line of a killed run
    return rows


def classes(rows):
    """class -> (default ratio, [(index, round, ratio or None, status)])"""
    peer, default_ms, cls_problems = {}, {}, defaultdict(set)
    for r in rows:
        if r.get("kind") == "default":
            key = r["problem_key"]
            cls_problems[r["class"]].add(key)
            if r.get("peer_ms") is not None:
                peer[key] = float(r["peer_ms"])
            if r.get("status") == "ok" and r.get("time_ms") is not None:
                default_ms[key] = float(r["time_ms"])
    runs = defaultdict(dict)  # class -> candidate -> {key: row}
    for r in rows:
        if r.get("kind") == "run" and r.get("edge") in (0, "0"):
            runs[r["class"]].setdefault(r["candidate"], {})[r["problem_key"]] = r
    out = {}
    for c, keys in sorted(cls_problems.items()):
        d = geomean([peer[k] / default_ms[k] for k in keys if k in peer and k in default_ms])
        pts = []
        for cand, by_key in runs.get(c, {}).items():
            first = next(iter(by_key.values()))
            ok = all(by_key.get(k, {}).get("status") == "ok" for k in keys)
            ratio = geomean([peer[k] / float(by_key[k]["time_ms"]) for k in keys if k in peer]) if ok else None
            status = "ok" if ok else next((r["status"] for r in by_key.values() if r["status"] != "ok"), "missing")
            pts.append((int(first.get("index", 0)), int(first.get("round", 0)), ratio, status))
        out[c] = (d, sorted(pts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="the --results folder of a run")
    ap.add_argument("--png", help="where to draw the chart (default RESULTS/search.png)")
    args = ap.parse_args()
    rows = load(args.results)
    peer = next((r.get("peer") for r in rows if r.get("peer")), "peer")
    device = next((r.get("device") for r in rows if r.get("device")), "?")
    data = classes(rows)
    if not data:
        sys.exit(f"{args.results}: no rows")
    for c, (d, pts) in data.items():
        ok = [p[2] for p in pts if p[2] is not None]
        print(f"{c}: default {d:.2f}x, best candidate {max(ok) if ok else float('nan'):.2f}x {peer}, "
              f"{len(ok)}/{len(pts)} candidates verified and timed on every problem")
    png = args.png or os.path.join(args.results, "search.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"note: matplotlib is not installed; {png} not written", file=sys.stderr)
        return
    n = len(data)
    cols = min(3, n)
    rws = (n + cols - 1) // cols
    fig, axes = plt.subplots(rws, cols, figsize=(5.2 * cols, 3.4 * rws), squeeze=False)
    for ax, (c, (d, pts)) in zip(axes.flat, data.items()):
        good = [(i, rd, r) for i, rd, r, s in pts if r is not None]
        bad = [(i, s) for i, rd, r, s in pts if r is None]
        if good:
            sc = ax.scatter([g[0] for g in good], [g[2] for g in good], c=[g[1] for g in good], cmap="viridis",
                            s=18, zorder=3, label="candidate (colour: round)")
            best, line = 0.0, []
            for i, _, r in sorted(good):
                best = max(best, r)
                line.append((i, best))
            ax.step([p[0] for p in line], [p[1] for p in line], where="post", color="C3", label="best so far")
        lo = min([g[2] for g in good] + [d if math.isfinite(d) else 1.0, 1.0]) if good else 0.5
        for i, s in bad:
            ax.plot([i], [lo * 0.9], marker="x", color="grey", ms=4, zorder=2)
        if math.isfinite(d):
            ax.axhline(d, color="C0", ls="--", lw=1, label=f"library default {d:.2f}x")
        ax.axhline(1.0, color="black", lw=0.8, label=f"{peer} = 1")
        ax.set_yscale("log")
        ax.set_title(c, fontsize=8)
        ax.set_xlabel("candidate (proposal order); x: not verified/timed", fontsize=7)
        ax.set_ylabel(f"{peer} time / ours", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="best")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(f"convbwd-tune search, {device} ({os.path.basename(os.path.abspath(args.results))})", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
