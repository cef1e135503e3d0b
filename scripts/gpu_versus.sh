#!/usr/bin/env bash
# The GPU machine (device tool): kernels forced by name against base kernels on suites, in one call.
# First CONFORMANCE's kernels against the double reference (doctest cases; default the staged ones),
# then per case scripts/gpu_kernels.sh (each row checked against cuDNN's output in the same process)
# and a short table last: per kernel, cuDNN / kernel in its layout and against cuDNN's faster layout,
# and the own time of its layout's base over the kernel's (geomeans, scripts/kernel_table.py --base).
#   CASES: one case a line, "NAME DIRECTION SHAPES BASES KERNEL...": DIRECTION 2 (backward-data) or
#   4 (backward-weight); SHAPES shape files joined by + (lines a kernel cannot take are skipped);
#   BASES the layouts' base kernels, comma-separated; KERNEL... the kernels (bases included)
#   Rows: $OUT/rows.tgz (per case its kernels.tgz, log and tables).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh  # $bin, $out, conformance(), base_table()
conformance "${CONFORMANCE:-bwd?_f32_*_cuda_st*}" 400
mv "$out/test_cuda.log" "$root/test_conformance.log"
names=()
while read -r name dir shapes bases kernels; do
  [ -n "$name" ] || continue
  names+=("$name:$bases")
  cat ${shapes//+/ } > "$root/$name.txt"
  echo "== $name"
  OUT=$root/$name KERNELS="$kernels" SHAPES=$root/$name.txt DIRECTION=$dir bash scripts/gpu_kernels.sh > "$root/$name.log" 2>&1
  tail -1 "$root/$name.log"
done <<< "${CASES:?CASES: lines NAME DIRECTION SHAPES BASES KERNEL...}"
for nb in "${names[@]}"; do
  name=${nb%%:*}
  echo "== $name: cuDNN / kernel (same layout, faster layout), own time of the layout's base / kernel's"
  base_table "$root/$name" "${nb#*:}"
done
(cd "$root" && tar czf rows.tgz --exclude=rows.tgz ./* && find . -mindepth 1 ! -name rows.tgz -delete)
