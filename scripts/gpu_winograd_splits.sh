#!/usr/bin/env bash
# The GPU machine (device tool): the Winograd backward-weight defaults (class s1 k3) with the
# launch-time knob split_blocks at 132, 264, 528 (the default) and 1056, on the stride-1 3x3 layers
# of VGG-16 and U-Net with pad 1 (scripts/gpu_versus.sh: conformance of the two kernels first, rows,
# a short table last). Fewer splits mean a smaller workspace of transform points to write and re-read.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
s1=$root/s1k3.txt
grep -h -- '-y 3 -x 3 -p 1 -q 1 -u 1 -v 1' shapes/vgg16.txt shapes/unet.txt | grep -v -- ' -g ' > "$s1"
k="" bases=""
for l in nchw nhwc; do
  n=bwdw_f32_${l}_s1_k3_cuda_stc4k4w4
  bases="$bases${bases:+,}$n"
  k="$k $n $n:split_blocks=132 $n:split_blocks=264 $n:split_blocks=1056"
done
CASES="wsplits 4 $s1 $bases$k" CONFORMANCE="${CONFORMANCE:-bwdw_f32_n*_s1_k3_cuda_stc4k4w4}" OUT=$root bash scripts/gpu_versus.sh
