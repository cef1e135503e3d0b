#!/usr/bin/env bash
# The GPU machine's whole session in one call (device tool, NVIDIA H100): conformance of the cuda
# and opencl kernels, compute-sanitizer on a subset, and benchmarks against cuDNN (TF32 off).
# Binaries are built here by scripts/gpu_build.sh and carried in .device/bin.
#   run: bash scripts/gpu_run.sh   (writes logs and JSON rows to $OUT, prints a table last)
#   MODE=iree: cuda conformance, then only the iree_strided shapes against cuDNN and scatter
#   MODE=opencl: cuda and opencl conformance and the ncu profiles only (NCU=0: none)
#   CUDA_TESTS: the cuda conformance's doctest test cases (default: every cuda kernel, flat*, vec:*, xvec:*, stage3:*, wvec:*)
#   SKIP_CONFORMANCE=1, SKIP_CHECKS=1, OPENCL_TIMEOUT=1: leave out the cuda conformance, the host
#               suites and memcheck, the opencl conformance (a 600 s call fits the benchmarks)
#   MODE=sweep: cuda conformance (SKIP_CONFORMANCE=1: none), the f32 kernels matching $SWEEP
#               forced by name on resnet50 vs cuDNN; with IREE_TILES=1 also the f16/bf16
#               stride-2 tile candidates and defaults vs scatter on iree_strided
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin (the unpacked binaries), $out, cuDNN on LD_LIBRARY_PATH
mkdir -p /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"

step() { echo "== $*"; }
if [ "${SKIP_CONFORMANCE:-0}" != 1 ]; then  # a second sweep in the same session may skip it
  step "conformance: cuda kernels vs reference"
  timeout ${CUDA_TIMEOUT:-360} "$bin/convbwd_tests" --test-suite=kernels "--test-case=${CUDA_TESTS:-*_cuda_*,flat*,vec:*,xvec:*,stage3:*,wvec:*}" > "$out/test_cuda.log" 2>&1; echo "rc=$?"; tail -3 "$out/test_cuda.log"
fi
if [ "${MODE:-all}" = iree ]; then  # a short session: the strided shapes only
  for peer in cudnn scatter; do
    timeout 90 "$bin/convbwd-driver" --shapes shapes/iree_strided.txt -I NHWC --target cuda --compare $peer -t 1 -i 20 -V 0 \
        --json > "$out/iree_$peer.json" 2> "$out/iree_$peer.err"; echo "iree $peer rc=$?"
  done
  python3 scripts/sweep_summary.py "$out/iree_cudnn.json" "$out/iree_scatter.json" | tee "$out/iree.md"
  exit 0
fi
if [ "${MODE:-all}" = sweep ]; then  # schedule candidates: dispatch defaults and forced variants
  # SWEEP: an extended regex choosing the f32 kernels to force (default: all of them)
  for k in $("$bin/convbwd-driver" --list-kernels 2>/dev/null | grep -oE "bwd[dw]_f32_n[a-z]+_[a-z0-9]+_[a-z0-9]+_cuda_[a-z0-9]+\b" | grep -v scatter | grep -E "${SWEEP:-.}" | sort -u); do
    timeout 40 "$bin/convbwd-driver" --shapes shapes/resnet50.txt -I $(echo $k | grep -q nhwc && echo NHWC || echo NCHW) \
        -F $(echo $k | grep -q bwdw && echo 4 || echo 2) --target cuda --kernel $k --compare cudnn -t 1 -i 10 -V 0 --json 2>/dev/null
  done > "$out/sweep.json"; echo "sweep rc=$?"
  python3 scripts/sweep_summary.py "$out/sweep.json" | tee "$out/sweep.md"
  if [ "${IREE_TILES:-0}" != 1 ]; then
    tar czf "$out/all.tgz" -C "$out" $(cd "$out" && ls | grep -v all.tgz) && (cd "$out" && ls | grep -v all.tgz | xargs rm -f)
    exit 0
  fi
  timeout 60 "$bin/convbwd-driver" --shapes shapes/iree_strided.txt -I NHWC --target cuda --compare scatter -t 1 -i 10 -V 0 --json \
      > "$out/iree_scatter.json" 2> "$out/iree_scatter.err"; echo "iree scatter rc=$?"
  for k in $("$bin/convbwd-driver" --list-kernels 2>/dev/null | grep -oE "bwdd_b?f16_nhwc_s2_k[13]_cuda_c[0-9]x[0-9]\b" | grep -v c4x4 | sort -u); do
    timeout 40 "$bin/convbwd-driver" --shapes shapes/iree_strided.txt -I NHWC --target cuda --kernel $k --compare scatter \
        -t 1 -i 10 -V 0 --json 2>/dev/null
  done > "$out/iree_scatter_tiles.json"; echo "iree scatter tiles rc=$?"
  python3 scripts/sweep_summary.py "$out/iree_scatter.json" "$out/iree_scatter_tiles.json" | tee "$out/scatter.md"
  tar czf "$out/all.tgz" -C "$out" $(cd "$out" && ls | grep -v all.tgz) && (cd "$out" && ls | grep -v all.tgz | xargs rm -f)
  exit 0
fi
step "conformance: opencl kernels (NVIDIA OpenCL, which compiles each kernel at first use) vs reference"
timeout ${OPENCL_TIMEOUT:-400} "$bin/convbwd_tests" --test-suite=kernels "--test-case=*_opencl_*" > "$out/test_opencl.log" 2>&1
echo "rc=$?"; tail -3 "$out/test_opencl.log"
if [ "${MODE:-all}" = opencl ]; then  # the opencl conformance (and ncu) alone: a second call's worth
  SKIP_BENCH=1
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
if [ "${SKIP_CHECKS:-0}" != 1 ]; then  # a second call of a session may skip the host suites and memcheck
step "dispatch + regressions on the host build in the same binary"
timeout 180 "$bin/convbwd_tests" --test-suite=reference,api,regressions > "$out/test_host.log" 2>&1; echo "rc=$?"; tail -2 "$out/test_host.log"
step "compute-sanitizer memcheck on a subset"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/convbwd_tests" --test-suite=kernels \
    "--test-case=bwdd_f32_nhwc_s1_k3_cuda_c4x?u,bwdd_f32_nchw_s1_k3_cuda_c4x7s1u,bwdd_f32_nchw_s2_k1_cuda_c8x7,bwdd_f32_n*_s1_k1_cuda_c4x4*,bwdd_f32_nchw_s2_k3_cuda*,bwdw_f32_nhwc_s1_k3_cuda*,bwdw_f32_nhwc_s2_k3_cuda_c4k4ft3,bwdw_f32_n*_s2_any_cuda*,bwdw_bf16_nchw_any_any_cuda*,bwdd_f32_nchw_s1_k3_cuda_c4x7s1uv4,bwdd_f32_nchw_s2_k1_cuda_c16x4,bwdd_f32_nchw_s2_k1_cuda_c4x4s1v4,bwdd_f32_nchw_s1_k1_cuda_c*xv4,bwdd_f32_nchw_s*_cuda_c4x4s3*,bwdw_f32_n*_cuda_*v4,vec:*,xvec:*,stage3:*,wvec:*" \
    > "$out/memcheck.log" 2>&1; echo "rc=$?"; grep -E "ERROR SUMMARY|test cases" "$out/memcheck.log"
fi  # SKIP_CHECKS

step "benchmarks: resnet50 (batch 32) and iree_strided vs cuDNN, f32 and as listed"
for layout in NCHW NHWC; do
  timeout 100 "$bin/convbwd-driver" --shapes shapes/resnet50.txt -I $layout -F 6 --target cuda --compare cudnn -t 1 -i 20 -V 0 --json \
      > "$out/resnet50_${layout}.json" 2> "$out/resnet50_${layout}.err"; echo "resnet50 $layout rc=$?"
done
timeout 60 "$bin/convbwd-driver" --shapes shapes/iree_strided.txt -I NHWC --target cuda --compare cudnn -t 1 -i 20 -V 0 --json \
    > "$out/iree_strided.json" 2> "$out/iree_strided.err"; echo "iree rc=$?"
timeout ${OPENCL_BENCH_TIMEOUT:-240} "$bin/convbwd-driver" --shapes shapes/resnet50.txt -I NHWC -F 6 --target opencl -t 1 -i 10 -V 0 --json \
    > "$out/resnet50_opencl.json" 2> "$out/resnet50_opencl.err"; echo "opencl rc=$?"
step "phase decomposition vs scatter-then-conv (same Funcs) on iree_strided"
timeout 60 "$bin/convbwd-driver" --shapes shapes/iree_strided.txt -I NHWC --target cuda --compare scatter -t 1 -i 10 -V 0 --json \
    > "$out/iree_scatter.json" 2> "$out/iree_scatter.err"; echo "iree scatter rc=$?"
step "wgrad split vs unsplit (large N*P*Q, small K*C*R*S)"
for k in "bwdw_bf16_nchw_any_any_cuda_c2k2s" "bwdw_bf16_nchw_any_any_cuda_c2k2s max_splits=1"; do
  timeout 60 "$bin/convbwd-driver" convbfp16 -n 16 -c 16 -H 225 -W 225 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4 --target cuda \
      --kernel "$k" -t 1 -i 10 -V 0 --json
done > "$out/wgrad_split.json" 2>&1; echo "split rc=$?"
python3 scripts/sweep_summary.py "$out/iree_scatter.json" | tee "$out/scatter.md"
grep -o '"kernel": "[^"]*", "time_ms": [0-9.]*' "$out/wgrad_split.json"
fi  # SKIP_BENCH
if [ "${NCU:-1}" = 1 ] && command -v ncu >/dev/null; then
  step "ncu: the 7x7 stem's backward-weight and a 1x1 backward-weight (NHWC)"
  for prob in "-c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2" "-c 256 -H 56 -W 56 -k 64 -y 1 -x 1"; do
    timeout 120 ncu --kernel-name regex:_ws_ --launch-count 1 --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section WarpStateStats --section InstructionStats \
        "$bin/convbwd-driver" conv -n 32 $prob -I NHWC -F 4 --target cuda -t 1 -i 1 -V 0 2>&1 \
        | grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Compute \(SM\) Throughput|Memory Throughput|Warp Cycles Per Issued|Stall|Executed Ipc|Grid Size|Block Size|Issue Slots" \
        | head -30
  done > "$out/ncu.txt" 2>&1; echo "ncu rc=$?"; cat "$out/ncu.txt"
fi
[ "${SKIP_BENCH:-0}" != 1 ] || { tar czf "$out/all.tgz" -C "$out" $(cd "$out" && ls | grep -v all.tgz); exit 0; }
step "table"
python3 scripts/report.py --peak-tflops 51.5 --peak-gbps 2971 "$out"/resnet50_NCHW.json "$out"/resnet50_NHWC.json \
    "$out"/iree_strided.json "$out"/resnet50_opencl.json 2>&1 > "$out/report.md"
grep -E "^###|geomean" "$out/report.md"
mkdir -p "$out/all" && mv "$out"/*.json "$out"/*.log "$out"/*.err "$out"/*.txt "$out/all/" 2>/dev/null
tar czf "$out/all.tgz" -C "$out" all && rm -rf "$out/all"
