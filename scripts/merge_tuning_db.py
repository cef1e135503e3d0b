#!/usr/bin/env python3
"""Merges tuning databases written by convbwd-tune (--out, or gpu_tune.sh promote) into the default one.

Each record of the inputs (`<problem_key> <kernel> [knob=value ...]   # times`) replaces the record of
the same problem key in TARGET (with the comment line right above it, when that comment gives a
record's times), or is added. The added and replacing records go at the end of TARGET under one
header: the lines given by --header (device, date, command, where the rows are), then the records
with the tuner's comment (its time, the library's, the peer's). `module` lines are refused: the
default database names kernels built into the library, not a run's module.

Usage: merge_tuning_db.py --target schedules/tuning.db --header "# ..." [--header "# ..."] DB...
"""
import argparse
import re
import sys

RECORD = re.compile(r"^(\S+)\s+(\S+)((?:\s+[a-z_]+=\S+)*)\s*(#.*)?$")


def records(path):
    out = []
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            if s.startswith("module "):
                sys.exit(f"{path}:{n}: a module line: the default database names built-in kernels only")
            m = RECORD.match(s)
            if not m:
                sys.exit(f"{path}:{n}: not a record: {s}")
            out.append((m.group(1), f"{m.group(1)} {m.group(2)}{m.group(3)}", (m.group(4) or "").lstrip("# ")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", required=True)
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("db", nargs="+")
    a = ap.parse_args()
    new = {}
    for path in a.db:
        for key, rec, note in records(path):
            new[key] = (rec, note)
    lines = open(a.target).read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    kept, replaced = [], 0
    for line in lines:
        s = line.strip()
        key = s.split()[0] if s and not s.startswith("#") else None
        if key in new:
            replaced += 1
            # The comment right above an old record gives its times: it goes with it.
            if kept and re.match(r"^# [0-9.e+-]+ ms,", kept[-1]):
                kept.pop()
            continue
        kept.append(line)
    kept.append("#")
    kept.extend(a.header)
    for key in sorted(new):
        rec, note = new[key]
        if note:
            kept.append(f"# {note}")
        kept.append(rec)
    with open(a.target, "w") as fh:
        fh.write("\n".join(kept) + "\n")
    print(f"{a.target}: {len(new)} records merged ({replaced} replaced)")


if __name__ == "__main__":
    main()
