#!/usr/bin/env bash
# A/B of two host builds on the same layers, oneDNN in each run: the driver of OLD and of NEW
# (build dirs) alternate per layer and layout, so drift hits both alike. The table last: per
# layer, each build's time and its ratio to oneDNN (oneDNN / convbwd), and NEW's own speed-up.
#   OLD, NEW: build dirs (their apps/convbwd-driver)    SHAPES: a shapes file (MIOpenDriver lines)
#   OLD_ENV, NEW_ENV: environment settings for each (e.g. "HL_NUM_THREADS=1 OMP_NUM_THREADS=1": one thread)
#   F: 2 data, 4 weight (default 4)   LAYOUTS (NCHW NHWC)   BATCH (1)   ITERS (20)   OUT (rows)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-/tmp/convbwd-host-ab}; mkdir -p "$out"
shapes=${SHAPES:?a shapes file}; F=${F:-4}
mapfile -t lines < <(grep '^conv' "$shapes")
layouts=(${LAYOUTS:-NCHW NHWC})
total=$(( ${#lines[@]} * ${#layouts[@]} )); i=0; t0=$(date +%s)
for layout in "${layouts[@]}"; do
  for which in old new; do : > "$out/$which-$layout.json"; done
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
PYTHONPATH=scripts python3 - "$out" ${LAYOUTS:-NCHW NHWC} <<'PY'
import json, sys
from suites import geomean
out, layouts = sys.argv[1], sys.argv[2:]
print(f"{'layout':6} {'layer':52} {'old ms':>8} {'old/dnn':>7} {'new ms':>8} {'new/dnn':>7} {'new/old':>7}  new kernel")
for L in layouts:
    rows = {w: [json.loads(l) for l in open(f"{out}/{w}-{L}.json") if l.startswith('{')] for w in ("old", "new")}
    g = []
    new_of = {r["problem"]: r for r in rows["new"]}  # a layer either build failed on is left out
    for o in rows["old"]:
        n = new_of.get(o["problem"])
        if n is None:
            continue
        ro, rn = o["peer_time_ms"] / o["time_ms"], n["peer_time_ms"] / n["time_ms"]
        g.append((ro, rn, o["time_ms"] / n["time_ms"]))
        print(f"{L:6} {o['problem'][5:57]:52} {o['time_ms']:8.3f} {ro:7.2f} {n['time_ms']:8.3f} {rn:7.2f} {o['time_ms']/n['time_ms']:7.2f}  {n['kernel']}")
    if g:
        gm = [geomean([t[j] for t in g]) for j in range(3)]
        print(f"{L:6} {'geomean':52} {'':8} {gm[0]:7.2f} {'':8} {gm[1]:7.2f} {gm[2]:7.2f}")
PY
