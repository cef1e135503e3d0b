#!/usr/bin/env bash
# Every network suite of shapes/ on the host CPU against oneDNN in the same run, both layouts, at
# a small batch (BATCH, default 1), with progress and an ETA; the per-suite table last
# (scripts/suites.py). Rows go to OUT (default /tmp/convbwd-host-suites).
#   SUITES: shape files under shapes/ (default: every network suite)   ITERS: timed calls (2)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
drv=${DRIVER:-build/apps/convbwd-driver}
out=${OUT:-/tmp/convbwd-host-suites}
mkdir -p "$out"
suites=${SUITES:-$(ls shapes/*.txt | xargs -n1 basename | sed 's/\.txt$//' | grep -vE '^(edge|iree_strided)$')}
total=$(echo $suites | wc -w); i=0; t0=$(date +%s)
for s in $suites; do
  i=$((i + 1))
  for layout in NCHW NHWC; do
    "$drv" --shapes "shapes/$s.txt" -n "${BATCH:-1}" -I $layout -F 6 --compare onednn -t 1 -i "${ITERS:-2}" --warmup 1 -V 0 \
        --json > "$out/${s}_$layout.json" 2> "$out/${s}_$layout.err"
    echo "$s $layout rc=$? rows=$(grep -c '^{' "$out/${s}_$layout.json")"
  done
  el=$(( $(date +%s) - t0 )); echo "[$i/$total suites, ${el}s, ETA $(( el * (total - i) / i ))s]"
done
python3 scripts/suites.py "$out"/*_NCHW.json "$out"/*_NHWC.json --md > "$out/suites.md"
python3 scripts/suites.py "$out"/*_NCHW.json "$out"/*_NHWC.json
