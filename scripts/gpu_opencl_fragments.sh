#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the OpenCL matrix-fragment kernels of the build on
# NVIDIA's OpenCL against the double reference, the emulated fragments forced
# (CONVBWD_FRAGMENTS=emulated: the local-memory exchange PoCL runs in CI, here on a real GPU's
# warps) and as shipped (16x8x16 inline mma.sync, 32x32x8 emulated), each with the fragment tail
# cases; then, unless CLASSES is empty, scripts/gpu_mma_unroll.sh for CLASSES (default w) in
# DTYPE (default f16). Prints a table last; logs in $OUT.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh
rows=()
for mode in emulated native; do
  log=$root/opencl_$mode.log
  s=$(date +%s)
  env $([ $mode = emulated ] && echo CONVBWD_FRAGMENTS=emulated) timeout 400 "$bin/convbwd_tests" --test-suite=kernels \
      "--test-case=*_opencl_mma*,matrix fragments*" -s > "$log" 2>&1
  rc=$?
  rows+=("$(printf '%-9s rc=%-3s %4ss  %s  %s' $mode $rc $(( $(date +%s) - s )) \
      "$(grep -E '^\[doctest\] assertions' "$log" | tr -s ' ')" \
      "$(grep -oE '[0-9]+ OpenCL fragment sources, [0-9]+ with one operand exchange a k-block' "$log" | tail -1)")")
done
if [ -n "${CLASSES-w}" ]; then
  OUT=$root/unroll CLASSES="${CLASSES-w}" DTYPE=${DTYPE:-f16} bash scripts/gpu_mma_unroll.sh 2>&1 | tail -30
fi
(cd "$root" && tar czf /tmp/ocl.tgz --exclude='*.tgz' . 2>/dev/null && mv /tmp/ocl.tgz "$root/opencl_fragments.tgz")
echo "== OpenCL fragment kernels on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F)"
printf '%s\n' "${rows[@]}"
