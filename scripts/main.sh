#!/usr/bin/env bash
# Quick start, command 1: set up, build, and run the main job on the host CPU: backward-data and
# backward-weight of ResNet-50's res2 3x3 layer (batch 8, NHWC), verified against the naive
# reference, timed, and compared with oneDNN in the same run.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$here/scripts/build.sh"
build=${BUILD_DIR:-$here/build}
for layout in NHWC NCHW; do
  "$build/apps/convbwd-driver" conv -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 \
      -F 6 -I $layout -t 1 -i 10 -V 1 --compare onednn
done
