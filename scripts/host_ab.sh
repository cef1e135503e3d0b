#!/usr/bin/env bash
# A/B of two host builds on the same layers, oneDNN in each run: the driver of OLD and of NEW
# (build dirs) alternate per layer and layout, so drift hits both alike. The table last: per
# layer, each build's time and its ratio to oneDNN (oneDNN / convbwd), and NEW's own speed-up.
#   OLD, NEW: build dirs (their apps/convbwd-driver)    SHAPES: a shapes file (MIOpenDriver lines)
#   OLD_ENV, NEW_ENV: environment settings for each (e.g. "HL_NUM_THREADS=1 OMP_NUM_THREADS=1": one thread)
#   F: 2 data, 4 weight (default 4)   LAYOUTS (NCHW NHWC)   BATCH (1)   ITERS (20)   OUT (rows)
#   REPS: rounds of the whole A/B (default 1); the table gives per-layer medians over the rounds and
#   the spread of new/old (this VM's timings drift 2x within minutes: take REPS=3 or more)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-/tmp/convbwd-host-ab}; mkdir -p "$out"
shapes=${SHAPES:?a shapes file}; F=${F:-4}
mapfile -t lines < <(grep '^conv' "$shapes")
layouts=(${LAYOUTS:-NCHW NHWC})
reps=${REPS:-1}
total=$(( ${#lines[@]} * ${#layouts[@]} * reps )); i=0; t0=$(date +%s)
for layout in "${layouts[@]}"; do for which in old new; do : > "$out/$which-$layout.json"; done; done
for rep in $(seq 1 "$reps"); do
for layout in "${layouts[@]}"; do
  for line in "${lines[@]}"; do
    i=$((i + 1))
    for which in old new; do
      dir=$([ $which = old ] && echo "${OLD:?}" || echo "${NEW:?}")
      envs=$([ $which = old ] && echo "${OLD_ENV:-}" || echo "${NEW_ENV:-}")
      env $envs "$dir/apps/convbwd-driver" ${line%%#*} -n "${BATCH:-1}" -F "$F" -I "$layout" --compare onednn -t 1 \
          -i "${ITERS:-20}" --warmup 3 -V 0 --json >> "$out/$which-$layout.json" 2>> "$out/$which-$layout.err"
    done
    el=$(( $(date +%s) - t0 )); echo "[$i/$total, ${el}s, ETA $(( el * (total - i) / i ))s]" >&2
  done
done
done
PYTHONPATH=scripts python3 - "$out" ${LAYOUTS:-NCHW NHWC} <<'PY'
import json, sys, statistics
from collections import defaultdict
from suites import geomean
out, layouts = sys.argv[1], sys.argv[2:]
print(f"{'layout':6} {'layer':52} {'old ms':>8} {'old/dnn':>7} {'new ms':>8} {'new/dnn':>7} {'new/old':>7} {'min':>5} {'max':>5}  new kernel")
for L in layouts:
    # Per layer, every round's rows of each build (in order: the k-th old row pairs the k-th new one).
    runs = {w: defaultdict(list) for w in ("old", "new")}
    order = []
    for w in ("old", "new"):
        for l in open(f"{out}/{w}-{L}.json"):
            if l.startswith('{'):
                r = json.loads(l)
                if w == "old" and r["problem"] not in runs["old"]:
                    order.append(r["problem"])
                runs[w][r["problem"]].append(r)
    g = []
    med = statistics.median
    for prob in order:  # a layer either build failed on is left out
        o, n = runs["old"][prob], runs["new"].get(prob, [])
        if not n:
            continue
        speed = [a["time_ms"] / b["time_ms"] for a, b in zip(o, n)]
        ro, rn = med(r["peer_time_ms"] / r["time_ms"] for r in o), med(r["peer_time_ms"] / r["time_ms"] for r in n)
        g.append((ro, rn, med(speed)))
        print(f"{L:6} {prob[5:57]:52} {med(r['time_ms'] for r in o):8.3f} {ro:7.2f} {med(r['time_ms'] for r in n):8.3f} "
              f"{rn:7.2f} {med(speed):7.2f} {min(speed):5.2f} {max(speed):5.2f}  {n[-1]['kernel']}")
    if g:
        gm = [geomean([t[j] for t in g]) for j in range(3)]
        print(f"{L:6} {'geomean':52} {'':8} {gm[0]:7.2f} {'':8} {gm[1]:7.2f} {gm[2]:7.2f}")
PY
