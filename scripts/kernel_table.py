#!/usr/bin/env python3
"""Kernels x layers table of driver JSON rows, one file per forced kernel (scripts/gpu_kernels.sh:
convbwd-driver --kernel K --compare P --json): per kernel and layer the peer's time over the
kernel's in the same run, in the kernel's layout / against the peer's faster layout for the layer
(the least peer time of any row of that problem), then the geomean over the layers it ran.
Rows with an error (a problem the kernel cannot implement) are left out. A kernel with several rows of
one layer (rounds: scripts/host_kernels.sh) is represented by its median-time row.
--base K1,K2: then per kernel and layer the time of the base kernel of its layout (one per layout)
over its own, both from the rows: the peer runs in each kernel's process, and its choice of
algorithm (and so its time) moves between processes, so kernels are compared by their own times.

Usage: kernel_table.py rows.json... [--md] [--base KERNEL,...]
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suites import geomean, layer_name, peer_best, rows, timed  # noqa: E402  (one reading of the rows)


def main():
    args = sys.argv[1:]
    md = "--md" in args
    base = []
    if "--base" in args:
        i = args.index("--base")
        base = args[i + 1].split(",")
        del args[i : i + 2]
    paths = [p for p in args if p != "--md"]
    by_problem = defaultdict(list)  # problem without layout -> its rows (every kernel, layout)
    runs = defaultdict(lambda: defaultdict(list))  # kernel -> layer -> its rows (rounds)
    layers = []
    for path in paths:
        kernel = os.path.splitext(os.path.basename(path))[0]
        for r in rows([path]):
            if not timed(r):
                continue
            r["_problem"] = (r["direction"], r["problem_key"].replace("-" + r["layout"] + "-", "-"))
            by_problem[r["_problem"]].append(r)
            name = layer_name(r)
            if name not in layers:
                layers.append(name)
            runs[kernel][name].append(r)
    cells = {k: {n: sorted(rs, key=lambda r: r["time_ms"])[len(rs) // 2] for n, rs in m.items()} for k, m in runs.items()}
    head = ["kernel"] + layers + ["geomean", "vs best"]
    out = []
    for kernel in sorted(cells):
        row, same, best = [kernel], [], []
        for name in layers:
            r = cells[kernel].get(name)
            if not r:
                row.append("-")
                continue
            same.append(r["peer_time_ms"] / r["time_ms"])
            best.append(peer_best(by_problem[r["_problem"]]) / r["time_ms"])
            row.append("%.2f / %.2f" % (same[-1], best[-1]))
        row += ["%.2f" % geomean(same), "%.2f" % geomean(best)]
        out.append(row)
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in out:
            print("| " + " | ".join(r) + " |")
    else:
        print("per layer: peer / kernel in the kernel's layout / against the peer's faster layout")
        for i, name in enumerate(layers):
            print("  L%d = %s" % (i + 1, name))
        w = max(len(r[0]) for r in out) if out else 10
        print("%-*s " % (w, "kernel") + " ".join("%11s" % ("L%d" % (i + 1)) for i in range(len(layers))) + "  geomean  vs best")
        for r in out:
            print("%-*s " % (w, r[0]) + " ".join("%11s" % c for c in r[1:-2]) + "  %7s  %7s" % (r[-2], r[-1]))
    if base:
        layout_of = lambda k: next(iter(cells[k].values()))["layout"] if cells.get(k) else None  # of its rows
        by_layout = {layout_of(b): b for b in base}
        print("\nown time: base kernel of the layout / kernel, per layer (base: %s)" % ", ".join(base))
        for kernel in sorted(cells):
            b = by_layout.get(layout_of(kernel))
            if not b or b not in cells:
                continue
            vals = [cells[b][n]["time_ms"] / cells[kernel][n]["time_ms"] if n in cells[kernel] and n in cells[b] else None
                    for n in layers]
            got = [v for v in vals if v]
            print("%-*s " % (w, kernel) + " ".join("%11s" % ("%.2f" % v if v else "-") for v in vals) +
                  "  %7.2f" % geomean(got))


if __name__ == "__main__":
    main()
