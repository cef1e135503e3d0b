#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the library as built dispatches each line of a suite
# (no kernel forced), checked against cuDNN's output and timed against it in the same process; prints
# per run the geomean of cuDNN / convbwd, the kernels the dispatcher chose (how many layers each) and
# the layers whose output agrees with cuDNN's (scripts/suites.py --kernels): that new defaults are the
# ones dispatched, with their library-level ratio.
#   RUNS: "LAYOUT:DTYPE:F:SUITE ..." (default: the unroll defaults of 2026-12-03)   ITERS (5)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh
mkdir -p "$out"
for r in ${RUNS:-NCHW:bf16:2:resnet50 NCHW:bf16:2:vgg16 NCHW:f16:2:iree_strided NHWC:f16:4:unet NHWC:f16:4:vgg16}; do
  IFS=: read -r lay dt F suite <<< "$r"
  f=$out/$lay-$dt-F$F-$suite
  dtype_lines "$dt" "shapes/$suite.txt" "$f.txt"
  timeout 200 "$bin/convbwd-driver" --shapes "$f.txt" -I "$lay" -F "$F" --target cuda --compare cudnn \
      -t 1 -V 0 -i "${ITERS:-5}" --json > "$f.json" 2> "$f.err"
done
# The suite of a row is its shapes file: LAYOUT-DTYPE-FF-SUITE (scripts/suites.py).
python3 scripts/suites.py "$out"/*.json --kernels | tee "$out/dispatch.txt"
