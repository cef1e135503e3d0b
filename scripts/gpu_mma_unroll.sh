#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the one-warp fragment kernels with u k-blocks a step of
# their k-block loop (unroll=u: every operand of the step loaded before its first fragment) against the
# same kernels at u = 1, per class on the suites that have its layers (backward-data's classes; w:
# backward-weight's any-filter NHWC class).
# First conformance of the unroll kernels against the double reference and a memcheck of one; then,
# per class, scripts/gpu_mma_warps.sh (each kernel forced on every layer, cuDNN in the same process).
# Prints the own-time table per class and suite last; everything in $OUT/unroll.tgz.
#   DTYPE (bf16)   LAYOUT (nhwc; nchw)   CLASSES (the classes run: k3 k1 any s2k3 s2k1 w)   CHECK (1)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
dt=${DTYPE:-bf16} lay=${LAYOUT:-nhwc}
s1=bwdd_${dt}_${lay}_s1 s2=bwdd_${dt}_${lay}_s2 w=bwdw_${dt}_${lay}_any_any_cuda_mmaf1
# class: suites, then the kernels (the class default first: own time = default / kernel)
declare -A suites=([k3]="vgg16 unet resnet50 inception_v3" [k1]="resnet50 inception_v3 mobilenet_v2"
                   [any]="inception_v3 any_filter" [s2k3]="resnet50 iree_strided" [s2k1]="resnet50 iree_strided" [w]="vgg16 unet resnet50")
declare -A kernels=(
  [k3]="${s1}_k3_cuda_mmaf1m2n8v4 ${s1}_k3_cuda_mmaf1m2n8v4u2 ${s1}_k3_cuda_mmaf1m2n8v4u4 ${s1}_k3_cuda_mmaf1m1n8v4 ${s1}_k3_cuda_mmaf1m1n8v4u2"
  [k1]="${s1}_k1_cuda_mmaf1m2n4v4 ${s1}_k1_cuda_mmaf1m2n4v4u2"
  [any]="${s1}_any_cuda_mmaf1m2n8v4 ${s1}_any_cuda_mmaf1m2n8v4u2"
  [s2k3]="${s2}_k3_cuda_mmaf1m1n8v4 ${s2}_k3_cuda_mmaf1m1n8v4u2"
  [s2k1]="${s2}_k1_cuda_mmaf1m2n4v4 ${s2}_k1_cuda_mmaf1m2n4v4u2"
  [w]="${w}m2n8v4 ${w}m2n8v4u2 $([ "$dt" = bf16 ] && echo "${w}m2n8v4u4")")  # u4: bf16 only
if [ "${CHECK:-1}" = 1 ]; then
  OUT=$root/check SUITES=" " CONFORMANCE_CASES="${CONFORMANCE_CASES:-*_cuda_mmaf1*v4u2*,*_cuda_mmaf1*v4u4*}" \
      SANITIZE_CASES="${SANITIZE_CASES:-$([ "${CLASSES:-}" = w ] && echo "*${w}m2n8v4u2*" || echo "*${s1}_k3_cuda_mmaf1m2n8v4u2*")}" DTYPE=$dt AB=0 bash scripts/gpu_mma_warps.sh > "$root/check.log" 2>&1
fi
for c in ${CLASSES:-k3 k1 any s2k3 s2k1 w}; do
  echo "== class $c"
  OUT=$root/$c CHECK=0 AB=0 FDIRS=$([ $c = w ] && echo 4 || echo 2) WKERNELS="${kernels[$c]}" SUITES="${suites[$c]}" DKERNELS="${kernels[$c]}" DTYPE=$dt \
      bash scripts/gpu_mma_warps.sh 2>&1 | grep -v "^  *$"
done | tee "$root/table.txt"
(cd "$root" && tar czf /tmp/unroll.tgz . 2>/dev/null && mv /tmp/unroll.tgz "$root/unroll.tgz")
[ "${CHECK:-1}" = 1 ] && echo "== conformance" && grep -E "rc=|test cases|assertions|memcheck" "$root/check/conformance.txt"
