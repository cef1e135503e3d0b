#!/usr/bin/env bash
# One device-tool call (NVIDIA H100 machine): the matrix-fragment kernels (generators/fragments.h)
# on CUDA (mma.sync put into Halide's PTX at load, runtime/src/cuda_fragments.cpp) and on NVIDIA's
# OpenCL.
#   1. conformance against the double reference: native (cuda and opencl frag=1: mma.sync; opencl
#      frag=0: the emulated 32x32x8 AMD layout), with CONVBWD_FRAGMENTS=emulated (the opencl ones,
#      both layouts emulated), and the cuda ones again under compute-sanitizer memcheck
#      (SKIP_TESTS=1: none of these; TEST_CASES: the doctest cases of the native run; EMULATED=0: not
#      the emulated run; SANITIZE=0: not the memcheck; SANITIZE_CASES: its cases, default every cuda one)
#   2. DIR=bwd_data (default): the suites' stride-1 layers (CLASS=pointwise: 1x1, with the s1 k1
#      kernels; CLASS=spatial: the others, with the s1 k3 / any kernels; STRIDE=s2: the stride-2
#      layers with the s2 k1 / k3 kernels); DIR=bwd_weight: every
#      ungrouped layer (any stride; pointwise: the k1 kernels, spatial: the any ones). bf16 (DTYPE=f16:
#      f16), NHWC (LAYOUT=NCHW: the nchw kernels, NCHW tensors),
#      against cuDNN in the same process (CUDA beside the OpenCL queue, TF32 off): the frag=1
#      kernels of both targets (MMA_KERNELS: a regex over their names), the library's cuda default (SIMT), and cuDNN in
#      NCHW for the peer's best layout. SUITES, ITERS, VERIFY as named; BUDGET_S: no suite starts
#      after this many seconds of timing (the table and the archive still come back).
# Carry .device/bin (scripts/gpu_build.sh). Rows and logs in $OUT; a table is printed last.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin, $out, cuDNN on LD_LIBRARY_PATH
mkdir -p /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
rows=()

if [ "${SKIP_TESTS:-0}" != 1 ]; then
echo "== conformance: matrix-fragment kernels on NVIDIA's OpenCL (native mma.sync for frag=1)"
timeout ${TEST_TIMEOUT:-240} "$bin/convbwd_tests" --test-suite=kernels "--test-case=${TEST_CASES:-*_opencl_mma*,*_cuda_mma*,matrix*}" \
    > "$out/test_native.log" 2>&1
rows+=("conformance native: rc=$? $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_native.log" | tr '\n' ' ')")
if [ "${EMULATED:-1}" = 1 ]; then
echo "== conformance: the same, both layouts emulated (CONVBWD_FRAGMENTS=emulated)"
CONVBWD_FRAGMENTS=emulated timeout ${TEST_TIMEOUT:-240} "$bin/convbwd_tests" --test-suite=kernels \
    "--test-case=*_opencl_mma*,matrix*" > "$out/test_emulated.log" 2>&1
rows+=("conformance emulated: rc=$? $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_emulated.log" | tr '\n' ' ')")
fi
if [ "${SANITIZE:-1}" = 1 ] && "$bin/convbwd-driver" --list-kernels 2>/dev/null | grep -q '_cuda_mma'; then
  echo "== compute-sanitizer memcheck: the cuda matrix-fragment kernels' conformance"
  rows+=("memcheck cuda: $(memcheck "${SANITIZE_CASES:-*_cuda_mma*}" "${SANITIZE_TIMEOUT:-300}")")
fi
fi

# The suites' ungrouped layers as bf16 lines of the direction (-F 2 / -F 4): backward-data's
# stride-1 ones only. CLASS=pointwise (default) the 1x1 ones, CLASS=spatial the others (3x3, 5x5,
# 1x7, dilated).
dir=${DIR:-bwd_data}
dtype=${DTYPE:-bf16}  # DTYPE=f16: f16 lines (convfp16) and kernels
drv_cmd=convbfp16; [ "$dtype" = f16 ] && drv_cmd=convfp16
only=.  # STRIDE=s2 (backward-data): the stride-2 layers, with the s2 kernels
if [ "$dir" = bwd_data ] && [ "${STRIDE:-s1}" = s2 ]; then F=2 prefix=bwdd strides=s2 not_strided='' only='-u 2 -v 2 '
elif [ "$dir" = bwd_data ]; then F=2 prefix=bwdd strides=s1 not_strided='-[uv] [2-9]|'
else F=4 prefix=bwdw strides=any not_strided=''; fi
suite_file() {
  grep -E -- '^conv[a-z0-9]* ' "shapes/$1.txt" | grep -vE -- "${not_strided}-g ([2-9]|[1-9][0-9])" | grep -E -- "$only" |
      if [ "${CLASS:-pointwise}" = pointwise ]; then grep -E -- '-y 1 -x 1 '; else grep -vE -- '-y 1 -x 1 '; fi |
      sed -e "s/^conv[a-z0-9]* /$drv_cmd /" -e "s/-F [0-9]/-F $F/"
}
filters=k1; [ "${CLASS:-pointwise}" = pointwise ] || filters='(k3|any)'
layout=${LAYOUT:-NHWC} lc=$(echo "${LAYOUT:-NHWC}" | tr A-Z a-z)
kernels=$("$bin/convbwd-driver" --list-kernels 2>/dev/null | grep -oE "${prefix}_${dtype}_${lc}_${strides}_${filters}_(opencl|cuda)_mmaf1[a-z0-9]*" |
          sort -u | grep -E "${MMA_KERNELS:-.}")
default_suites="resnet50 mobilenet_v2 efficientnet_b0 inception_v3 deeplab_v3"
[ "${CLASS:-pointwise}" = pointwise ] || default_suites="resnet50 vgg16 unet inception_v3 deeplab_v3"
t0=$SECONDS  # BUDGET_S counts from here (after the conformance tests)
for s in ${SUITES:-$default_suites}; do
  f=/tmp/mma_$s.txt
  suite_file $s > $f
  [ -s $f ] || continue
  echo "== $s: $(wc -l < $f) ${CLASS:-pointwise} $dir layers"
  if [ $((SECONDS - t0)) -gt "${BUDGET_S:-100000}" ]; then rows+=("$s: skipped (BUDGET_S=${BUDGET_S} s spent)"); continue; fi
  for k in $kernels; do
    target=opencl; [[ $k == *_cuda_* ]] && target=cuda
    timeout 120 "$bin/convbwd-driver" --shapes $f -I $layout --target $target --kernel $k --compare cudnn -t 1 \
        -i ${ITERS:-10} -V ${VERIFY:-1} --json > "$out/${s}_$k.json" 2> "$out/${s}_$k.err"
    rows+=("$s $k: rc=$?")
  done
  for lay in NHWC NCHW; do  # the library's cuda default, and cuDNN in each layout
    timeout 120 "$bin/convbwd-driver" --shapes $f -I $lay --target cuda --compare cudnn -t 1 -i ${ITERS:-10} \
        -V ${VERIFY:-1} --json > "$out/${s}_cuda_$lay.json" 2> "$out/${s}_cuda_$lay.err"
    rows+=("$s cuda $lay: rc=$?")
  done
done
printf '%s\n' "${rows[@]}" | tee "$out/rows.txt"
echo
python3 scripts/mma_summary.py --layout "$layout" "$out" | tee "$out/summary.md"
# Everything in one file (the device tool brings back a limited number of files).
tar czf "$out/mma.tgz" -C "$out" $(cd "$out" && ls | grep -v mma.tgz) && (cd "$out" && ls | grep -vE 'mma.tgz|summary.md' | xargs rm -f)
