#!/usr/bin/env bash
# The GPU machine (device tool): Nsight Compute per launch (scripts/gpu_ncu.sh) of the library's
# choice on shapes/classes.txt's layers that stay under 0.5 of cuDNN (grouped and dilated backward-
# weight, 7x1 backward-data), both layouts: where each kernel's time goes. CARRIED / BIN_DIR: which
# carried build (scripts/gpu_env.sh). Prints one table per layer.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
for spec in "ResNeXt:4" "DeepLab:4" "7x1:2" "MobileNet-v2:4"; do
  name=${spec%%:*} F=${spec##*:}
  line=$(grep -v "^#" shapes/classes.txt | grep -m1 -- "$name" | cut -d"#" -f1)
  for l in NCHW NHWC; do
    echo "== $name $l -F $F"
    LAYER="$line" LAYOUT=$l DIRECTION=$F OUT=$root/$name-$l bash scripts/gpu_ncu.sh 2>&1 | cut -c1-190 | tail -n +2
  done
done
