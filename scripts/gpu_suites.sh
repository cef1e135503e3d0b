#!/usr/bin/env bash
# The GPU machine (device tool, H100): the depthwise kernels and every kernel a suite dispatches,
# checked against the reference, then every suite of shapes/ timed against cuDNN (TF32 off) in
# both layouts, in one call. Prints the per-suite table last (scripts/suites.py).
# Binaries: built here with the cuda kernels (README, "GPU machine"), carried in .device/bin.
#   SUITES: shape files under shapes/ (default: every network suite)   ITERS: timed calls (10)
#   CUDA_TESTS: doctest cases of the conformance run (default: the depthwise cuda kernels)
#   OPENCL_TESTS: doctest cases of an OpenCL conformance run on NVIDIA's OpenCL (default: none)
#   SUITES=none: the conformance runs (and gpu_smoke, when carried) only   LAYERS=1: a per-layer table too
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin (the unpacked binaries), $out, cuDNN on LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
conformance "${CUDA_TESTS:-*_cuda_dw*}"
if [ -n "${OPENCL_TESTS:-}" ]; then  # NVIDIA's OpenCL compiles each kernel at first use: minutes
  echo "== conformance: $OPENCL_TESTS"
  timeout "${OPENCL_TIMEOUT:-420}" "$bin/convbwd_tests" --test-suite=kernels "--test-case=$OPENCL_TESTS" > "$out/test_opencl.log" 2>&1
  echo "rc=$?"; tail -3 "$out/test_opencl.log"
fi
if [ -x "$bin/gpu_smoke" ]; then  # tools/gpu_smoke: device buffers, timers and the cuDNN peer
  timeout 120 "$bin/gpu_smoke" --quick > "$out/gpu_smoke.log" 2>&1; echo "gpu_smoke rc=$?"; tail -1 "$out/gpu_smoke.log"
fi
[ "${SUITES:-}" = none ] && exit 0
suites=${SUITES:-$(ls shapes/*.txt | xargs -n1 basename | sed 's/\.txt$//' | grep -vE '^(edge|iree_strided)$')}
total=$(echo $suites | wc -w); i=0; t0=$(date +%s)
for s in $suites; do
  i=$((i + 1))
  for layout in NCHW NHWC; do
    timeout 150 "$bin/convbwd-driver" --shapes "shapes/$s.txt" -I $layout -F 6 --target cuda --compare cudnn -t 1 \
        -i "${ITERS:-10}" -V 0 --json > "$out/${s}_$layout.json" 2> "$out/${s}_$layout.err"
    echo "$s $layout rc=$? rows=$(grep -c '^{' "$out/${s}_$layout.json")"
  done
  el=$(( $(date +%s) - t0 )); echo "[$i/$total suites, ${el}s, ETA $(( el * (total - i) / i ))s]"
done
python3 scripts/suites.py "$out"/*_NCHW.json "$out"/*_NHWC.json --md > "$out/suites.md"
# LAYERS=1: the per-layer table too (shapes/classes.txt: one layer per class)
[ -z "${LAYERS:-}" ] || python3 scripts/suites.py "$out"/*_NCHW.json "$out"/*_NHWC.json --layers | tee "$out/layers.txt"
# Everything in one archive (the device tool brings back a limited number of files).
(cd "$out" && tar czf rows.tgz *.json *.err test_*.log && rm -f *.json *.err test_*.log)
python3 - "$out/rows.tgz" <<'PY'
import sys, tarfile, json
with tarfile.open(sys.argv[1]) as t:
    for m in t.getmembers():
        if m.name.endswith(".json"):
            for line in t.extractfile(m).read().decode().splitlines():
                if line.startswith("{") and json.loads(line).get("error"):
                    print("error row:", m.name, json.loads(line)["problem"], json.loads(line)["error"][:200])
PY
cat "$out/suites.md" | cut -c1-250
