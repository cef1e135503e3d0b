#!/usr/bin/env python3
"""Per-suite table of driver JSON rows (convbwd-driver --shapes S --compare P --json, one file per
layout, every row of one run): for each (suite, direction, layout), the geomean of peer time /
convbwd time over the suite's layers in the same layout, the same against the peer's best layout
for each layer (users pick the faster layout), the same against the peer called from the caller's
layout where it computes in formats of its own (oneDNN's blocked formats: with its reorders in and
out, "peer_layout_time_ms"; its primitive time elsewhere), and the worst layer. Ratios above 1:
convbwd is faster. Rows with an error or no time are counted as missing.

Usage: suites.py rows.json... [--md] [--layers] [--kernels]   (the rows' "shapes" field names the suite)
  --kernels: after the table, per (suite, direction, layout) the kernels the rows ran (the library's
            choice where none was forced: how many layers each) and the rows that agree with the peer
  --layers: one row per layer and direction instead (the shape file's comment names the layer):
            each layout's ratio against the peer in that layout, against the peer's best layout and
            against the peer from the caller's layout
"""
import json
import math
import os
import sys
from collections import Counter, defaultdict


def rows(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    yield json.loads(line)


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    md = "--md" in sys.argv
    paths = [p for p in sys.argv[1:] if p not in ("--md", "--layers", "--kernels")]
    # (suite, direction, problem without layout) -> layout -> row
    by_layer = defaultdict(dict)
    for r in rows(paths):
        suite = os.path.splitext(os.path.basename(r.get("shapes", "?")))[0]
        key = (suite, r["direction"], r.get("problem_key", r["problem"]).replace("-" + r["layout"] + "-", "-"))
        by_layer[key][r["layout"]] = r
    table = defaultdict(lambda: {"same": [], "best": [], "caller": [], "worst": (float("inf"), ""), "missing": 0})
    for (suite, direction, _), per_layout in by_layer.items():
        best = peer_best(per_layout.values())
        for layout, r in per_layout.items():
            t = table[(suite, direction, layout)]
            if not timed(r):
                t["missing"] += 1
                continue
            ratio = r["peer_time_ms"] / r["time_ms"]
            t["same"].append(ratio)
            t["best"].append(best / r["time_ms"])
            t["caller"].append(caller_ms(r) / r["time_ms"])
            if ratio < t["worst"][0]:
                t["worst"] = (ratio, r["problem"].split(" -F")[0] + " " + r["kernel"])
    if "--layers" in sys.argv:
        return layers(by_layer, md)
    head = ["suite", "direction", "layout", "layers", "geomean (same layout)", "geomean (peer's best layout)",
            "geomean (peer from the caller's layout)", "worst", "worst layer (kernel)"]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("%-16s %-10s %-6s %6s %8s %8s %8s %7s  %s" % ("suite", "direction", "layout", "layers", "same", "best",
                                                           "caller", "worst", "worst layer (kernel)"))
    for (suite, direction, layout), t in sorted(table.items()):
        n = "%d%s" % (len(t["same"]), "+%d missing" % t["missing"] if t["missing"] else "")
        vals = (suite, direction, layout, n, "%.3f" % geomean(t["same"]), "%.3f" % geomean(t["best"]),
                "%.3f" % geomean(t["caller"]), "%.3f" % t["worst"][0], t["worst"][1])
        if md:
            print("| " + " | ".join(vals) + " |")
        else:
            print("%-16s %-10s %-6s %6s %8s %8s %8s %7s  %s" % vals)
    if "--kernels" in sys.argv:
        kernels(by_layer)


def kernels(by_layer):
    """Per (suite, direction, layout): the kernels of its rows, how many layers each, and the rows
    whose output agrees with the peer's ("peer_verified")."""
    runs = defaultdict(lambda: [Counter(), 0, 0])  # kernels, rows, agreeing rows
    for (suite, direction, _), per_layout in by_layer.items():
        for layout, r in per_layout.items():
            k = runs[(suite, direction, layout)]
            k[0][r.get("kernel") or "error"] += 1
            k[1] += 1
            k[2] += bool(r.get("peer_verified"))
    for (suite, direction, layout), (kern, n, agree) in sorted(runs.items()):
        print("%s %s %s: %d of %d layers agree with the peer; %s" % (
            suite, direction, layout, agree, n, ", ".join("%s x%d" % kv for kv in kern.most_common())))


_shape_lines = {}  # shape file -> its lines (read once)


def layer_name(r):
    """The comment of the row's line in its shape file (the layer's name), else its problem."""
    path = r.get("shapes")
    if path not in _shape_lines:
        try:
            with open(path) as f:
                _shape_lines[path] = f.read().splitlines()
        except (OSError, TypeError):
            _shape_lines[path] = []
    lines, line = _shape_lines[path], r.get("line")
    if isinstance(line, int) and 0 < line <= len(lines) and "#" in lines[line - 1]:
        return lines[line - 1].split("#", 1)[1].strip()
    return r["problem"].split(" -F")[0]


def timed(r):
    """A row with both times and no error (one the ratios can use)."""
    return not r.get("error") and bool(r.get("time_ms")) and bool(r.get("peer_time_ms"))


def caller_ms(r):
    """The peer's time from the caller's layout (with its reorders), else its own time."""
    return r.get("peer_layout_time_ms") or r["peer_time_ms"]


def peer_best(per_layout):
    """The peer's least time over the layer's rows (its faster layout), else None."""
    return min((r["peer_time_ms"] for r in per_layout if r.get("peer_time_ms")), default=None)


def layers(by_layer, md):
    head = ["layer", "direction", "NCHW", "NCHW vs best", "NCHW vs caller", "NHWC", "NHWC vs best",
            "NHWC vs caller", "kernels (NCHW / NHWC)"]
    fmt = "%-44s %-10s %6s %6s %6s %6s %6s %6s  %s"
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head) if md else fmt % tuple(head))
    for (suite, direction, _), per_layout in sorted(by_layer.items(), key=lambda kv: (kv[0][0], min(
            r.get("line", 0) for r in kv[1].values()), kv[0][1])):
        best = peer_best(per_layout.values())
        vals, kernels, name = [], [], ""
        for layout in ("nchw", "nhwc"):
            r = per_layout.get(layout)
            ok = r and timed(r)
            vals += ["%.2f" % (r["peer_time_ms"] / r["time_ms"]), "%.2f" % (best / r["time_ms"]),
                     "%.2f" % (caller_ms(r) / r["time_ms"])] if ok else ["-", "-", "-"]
            kernels.append(r["kernel"] if r and r.get("kernel") else "-")
            name = name or (layer_name(r) if r else "")
        row = (name[:44], direction, *vals, " / ".join(kernels))
        print("| " + " | ".join(row) + " |" if md else fmt % row)


if __name__ == "__main__":
    main()
