#!/usr/bin/env bash
# Kernels forced by name on the same layers, oneDNN in each run (the host's per-kernel comparison):
# per layer and round, each kernel in turn ("-": the library's choice), so drift hits all alike. The
# table last (scripts/kernel_table.py, as scripts/gpu_kernels.sh): per layer, oneDNN / kernel of each
# kernel's median-time round, in its layout and against oneDNN's faster layout, and geomeans.
#   SHAPES: a shapes file (MIOpenDriver lines)   LAYOUT: NCHW | NHWC   F: 2 data, 4 weight (default 2)
#   KERNELS: kernel names ("-" for the library's choice; default "-")   OUT: rows folder (one file a kernel)
#   DRIVER (build-host/apps/convbwd-driver)   REPS: rounds (2)   ITERS: timed calls (20)   BATCH (1)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
shapes=${SHAPES:?a shapes file}; layout=${LAYOUT:-NCHW}; F=${F:-2}; out=${OUT:-/tmp/convbwd-host-kernels}
driver=${DRIVER:-build-host/apps/convbwd-driver}
read -r -a kernels <<< "${KERNELS:--}"
mkdir -p "$out"; for k in "${kernels[@]}"; do : > "$out/$k.json"; done
mapfile -t lines < <(grep '^conv' "$shapes" | sed 's/#.*//')
total=$(( ${#lines[@]} * ${REPS:-2} )); i=0; t0=$(date +%s)
for rep in $(seq 1 "${REPS:-2}"); do
  for line in "${lines[@]}"; do
    i=$((i + 1))
    for k in "${kernels[@]}"; do
      ka=(); [ "$k" != "-" ] && ka=(--kernel "$k")
      $driver $line -n "${BATCH:-1}" -F "$F" -I "$layout" --compare onednn -t 1 -i "${ITERS:-20}" --warmup 3 -V 0 \
          --json "${ka[@]}" >> "$out/$k.json" 2>> "$out/errors.txt"
    done
    el=$(( $(date +%s) - t0 )); echo "[$i/$total, ${el}s, ETA $(( el * (total - i) / i ))s]" >&2
  done
done
files=(); for k in "${kernels[@]}"; do files+=("$out/$k.json"); done
python3 scripts/kernel_table.py "${files[@]}"
