#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the library as built dispatches each line of a suite
# (no kernel forced), checked against cuDNN's output and timed against it in the same process; prints
# per run the kernels the dispatcher chose (how many layers each), the layers whose output agrees with
# cuDNN's, and the geomean of cuDNN / convbwd. Shows that new defaults are the ones dispatched, with their library-level ratio.
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
  python3 - "$r" "$f.json" <<'PY'
import json, math, sys, collections
rows = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
ok = [r for r in rows if r.get("time_ms") and r.get("peer_time_ms")]
kern = collections.Counter(r.get("kernel") or "error" for r in rows)
g = math.exp(sum(math.log(r["peer_time_ms"] / r["time_ms"]) for r in ok) / len(ok)) if ok else float("nan")
agree = sum(1 for r in rows if r.get("peer_verified"))  # convbwd's output agrees with cuDNN's
print(f"{sys.argv[1]:28s} layers {len(rows):2d} agree with cuDNN {agree:2d} cuDNN/convbwd {g:.2f}  " +
      ", ".join(f"{k} x{n}" for k, n in kern.most_common()))
PY
done | tee "$out/dispatch.txt"
