#!/usr/bin/env python3
"""Kernels x layers table of driver JSON rows, one file per forced kernel (scripts/gpu_kernels.sh:
convbwd-driver --kernel K --compare P --json): per kernel and layer the peer's time over the
kernel's in the same run, in the kernel's layout / against the peer's faster layout for the layer
(the least peer time of any row of that problem), then the geomean over the layers it ran.
Rows with an error (a problem the kernel cannot implement) are left out.

Usage: kernel_table.py rows.json... [--md]
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suites import geomean, layer_name, peer_best, rows, timed  # noqa: E402  (one reading of the rows)


def main():
    md = "--md" in sys.argv
    paths = [p for p in sys.argv[1:] if p != "--md"]
    by_problem = defaultdict(list)  # problem without layout -> its rows (every kernel, layout)
    cells = defaultdict(dict)  # kernel -> layer -> row
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
            cells[kernel][name] = r
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


if __name__ == "__main__":
    main()
