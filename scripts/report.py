#!/usr/bin/env python3
"""Markdown tables and a roofline chart from `convbwd-driver --json` rows.

    convbwd-driver --shapes shapes/resnet50.txt -n 4 -t 1 --compare onednn --json > rows.jsonl
    scripts/report.py rows.jsonl --peak-tflops 1.2 --peak-gbps 40 --png roofline.png

Reads JSON rows from files or stdin (other lines are skipped). One table per (target,
direction): problem, kernel, time, TFLOP/s, peer time, peer-time / convbwd-time (> 1: convbwd
is faster), the roofline floor max(FLOPs / peak, bytes / bandwidth), and the geomean ratio.
FLOPs = 2*N*K*(C/G)*P*Q*R*S; bytes = the three tensors of the call. Python 3 stdlib; the
chart needs matplotlib (skipped with a note without it).
"""
import argparse
import json
import math
import signal
import sys
from collections import defaultdict


def flops_and_bytes(problem):
    """FLOPs and bytes of a normalised MIOpenDriver line, e.g. 'conv -n 2 -c 3 ... -F 2'."""
    tok = problem.split()
    f = {tok[i]: int(tok[i + 1]) for i in range(1, len(tok) - 1) if tok[i].startswith("-") and tok[i + 1].lstrip("-").isdigit()}
    n, c, h, w, k = f["-n"], f["-c"], f["-H"], f["-W"], f["-k"]
    r, s, g = f.get("-y", 1), f.get("-x", 1), f.get("-g", 1)
    pb, pr = f.get("--pad_bottom", f.get("-p", 0)), f.get("--pad_right", f.get("-q", 0))
    p = (h + f.get("-p", 0) + pb - f.get("-l", 1) * (r - 1) - 1) // f.get("-u", 1) + 1
    q = (w + f.get("-q", 0) + pr - f.get("-j", 1) * (s - 1) - 1) // f.get("-v", 1) + 1
    elem = 4 if tok[0] == "conv" else 2
    return 2.0 * n * k * (c // g) * p * q * r * s, elem * (n * c * h * w + n * k * p * q + k * (c // g) * r * s)


def read_rows(paths):
    rows = []
    for path in paths or ["-"]:
        stream = sys.stdin if path == "-" else open(path)
        for line in stream:
            line = line.strip()
            if line.startswith("{"):
                row = json.loads(line)
                if "problem" in row and "direction" in row:
                    rows.append(row)
    return rows


def fmt(x, spec=".4g"):
    return "-" if x is None else format(x, spec)


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def floor_ms(flops, nbytes, args):
    if not (args.peak_tflops and args.peak_gbps):
        return None
    return max(flops / (args.peak_tflops * 1e12), nbytes / (args.peak_gbps * 1e9)) * 1e3


def tables(rows, args):
    groups = defaultdict(list)
    for r in rows:
        groups[(r.get("target", "host"), r["direction"])].append(r)
    for (target, direction), rs in sorted(groups.items()):
        peer = next((r["peer"] for r in rs if r.get("peer")), None)
        print(f"\n### {target} {direction}\n")
        print(f"| problem | kernel | time ms | TFLOP/s | {peer or 'peer'} ms | {peer or 'peer'}/convbwd | floor ms |")
        print("|---|---|---:|---:|---:|---:|---:|")
        ratios = []
        for r in rs:
            flops, nbytes = flops_and_bytes(r["problem"])
            t, pt = r.get("time_ms"), r.get("peer_time_ms")
            ratio = pt / t if t and pt else None
            if ratio:
                ratios.append(ratio)
            tok = r["problem"].split()
            problem = " ".join(t for i, t in enumerate(tok) if t != "-F" and (i == 0 or tok[i - 1] != "-F"))
            tflops = flops / t / 1e9 if t else None
            print(f"| `{problem}` | {r.get('kernel') or r.get('error', '-')} | {fmt(t)} | {fmt(tflops)} "
                  f"| {fmt(pt)} | {fmt(ratio, '.2f')} | {fmt(floor_ms(flops, nbytes, args))} |")
        gm = geomean(ratios)
        print(f"\ngeomean {peer or 'peer'}-time / convbwd-time: {fmt(gm, '.3f')} over {len(ratios)} problems")


def roofline(rows, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"note: matplotlib is not installed; {args.png} not written", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ais = []
    for direction, color in (("bwd_data", "tab:blue"), ("bwd_weight", "tab:orange")):
        pts = []
        for r in rows:
            flops, nbytes = flops_and_bytes(r["problem"])
            if r["direction"] == direction and r.get("time_ms"):
                pt = r.get("peer_time_ms")
                pts.append((flops / nbytes, flops / r["time_ms"] / 1e9, flops / pt / 1e9 if pt else None))
        if not pts:
            continue
        ais += [p[0] for p in pts]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], color=color, marker="o", label=f"convbwd {direction}")
        peer = [p for p in pts if p[2]]
        if peer:
            name = next((r["peer"] for r in rows if r.get("peer")), "peer")
            ax.scatter([p[0] for p in peer], [p[2] for p in peer], color=color, marker="x", label=f"{name} {direction}")
            for ai, y, py in peer:
                ax.plot([ai, ai], [y, py], color=color, lw=0.5, alpha=0.5)
    if args.peak_tflops and args.peak_gbps and ais:
        lo, hi = min(ais) / 2, max(ais) * 2
        xs = [lo * (hi / lo) ** (i / 99) for i in range(100)]
        ax.plot(xs, [min(args.peak_tflops, x * args.peak_gbps / 1e3) for x in xs], "k-", lw=1,
                label=f"ceiling: {args.peak_tflops} TFLOP/s, {args.peak_gbps} GB/s")
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOPs / byte)", ylabel="achieved TFLOP/s",
           title="convbwd roofline")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="JSON-row files (default: stdin; '-' is stdin)")
    ap.add_argument("--peak-tflops", type=float, help="compute ceiling, TFLOP/s")
    ap.add_argument("--peak-gbps", type=float, help="memory-bandwidth ceiling, GB/s")
    ap.add_argument("--png", help="write the roofline chart here")
    args = ap.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    rows = read_rows(args.files)
    if not rows:
        sys.exit("report.py: no convbwd-driver JSON rows in the input")
    tables(rows, args)
    if args.png:
        roofline(rows, args)


if __name__ == "__main__":
    main()
