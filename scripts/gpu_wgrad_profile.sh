#!/usr/bin/env bash
# One device-tool call (NVIDIA H100 machine): where a backward-weight fragment kernel's time goes.
# Nsight Compute over one call of each layer (every kernel of the call: the copies, the main
# kernel, the sum over the splits; duration, registers, grid, occupancy, the top warp stalls), and
# the driver's own median beside it. LAYERS: driver lines (default two ResNet-50 layers);
# KERNELS: the kernels to profile. Carry .device/bin (scripts/gpu_build.sh). Output in $OUT.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh
KERNELS=${KERNELS:-bwdw_bf16_nhwc_any_any_cuda_mmaf1m4n8v4}
LAYERS=${LAYERS:-"convbfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4
convbfp16 -n 32 -c 512 -H 7 -W 7 -k 2048 -y 1 -x 1 -F 4"}
i=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  for k in $KERNELS; do
    i=$((i + 1))
    echo "== $line  [$k]"
    timeout 60 "$bin/convbwd-driver" $line -I NHWC --target cuda --kernel "$k" -t 1 -i 10 -V 0 2>&1 | tail -2
    timeout 120 ncu --clock-control none --section LaunchStats --section Occupancy --section WarpStateStats \
        --section SpeedOfLight "$bin/convbwd-driver" $line -I NHWC --target cuda --kernel "$k" -t 1 -i 1 \
        --warmup 0 -V 0 > "$out/ncu_$i.txt" 2>&1
    grep -E '^  [_a-zA-Z].*\(|Duration|Registers Per|Grid Size|Block Size|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Stall|stall' "$out/ncu_$i.txt" | cut -c1-150 | head -60
  done
done <<< "$LAYERS"
