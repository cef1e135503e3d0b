#!/usr/bin/env python3
"""The innermost loops of each kernel in a SASS listing that hold matrix instructions (HMMA, HGMMA),
with their instructions counted by opcode: how many instructions a k-block issues beside its
HMMAs. Reads `cuobjdump --dump-sass` (branch targets as addresses) or `nvdisasm -c` (labels) output.
  sass_loops.py FILE.sass            (or - for stdin)"""
import collections
import re
import sys

text = (sys.stdin if sys.argv[1:] in ([], ["-"]) else open(sys.argv[1])).read()
funcs = collections.OrderedDict()
cur = None
labels = {}
pending = []
for line in text.split("\n"):
    m = re.match(r"\s*(?:Function : |\.text\.)(\S+?):?\s*$", line)
    if m and not line.strip().startswith("/*"):
        cur = m.group(1)
        funcs.setdefault(cur, [])
        continue
    m = re.match(r"^(\.L_x_\d+):", line.strip())
    if m:
        pending.append(m.group(1))
        continue
    m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
    if m and cur is not None:
        addr = int(m.group(1), 16)
        for p in pending:
            labels[(cur, p)] = addr
        pending = []
        funcs[cur].append((addr, m.group(2)))
for f, ins in funcs.items():
    index = {a: i for i, (a, _) in enumerate(ins)}
    best = None
    for i, (a, t) in enumerate(ins):
        if "BRA" not in t:
            continue
        m = re.search(r"0x([0-9a-f]+)", t)
        target = int(m.group(1), 16) if m else labels.get((f, (re.search(r"(\.L_x_\d+)", t) or [None, None])[1]))
        if target is None or target >= a or target not in index:
            continue
        body = ins[index[target]:i + 1]
        if any(re.search(r"\bH[G]?MMA", x) for _, x in body) and (best is None or len(body) < len(best)):
            best = body
    if best:
        ops = collections.Counter(re.match(r"(@!?U?P\w+\s+)?([A-Z0-9_]+)", t).group(2) for _, t in best)
        mma = sum(v for k, v in ops.items() if "MMA" in k)
        print("%-44s loop %4d instructions, %3d matrix (%.1f per matrix): %s" % (
            f[:44], len(best), mma, len(best) / mma, " ".join("%s %d" % kv for kv in ops.most_common(12))))
