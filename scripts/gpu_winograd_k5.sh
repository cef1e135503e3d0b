#!/usr/bin/env bash
# The GPU machine (device tool): the 5x5 Winograd candidates (class s1 k5) against the kernels the
# library gave 5x5 layers before them (the staged and register-tile s1 any defaults) and cuDNN, on
# GoogLeNet's and Inception-v3's dense 5x5 layers (scripts/gpu_versus.sh: conformance first, rows,
# a short table last); then memcheck of the F(4x4) ones. Build: CONVBWD_KERNELS matching
# 'bwd?_f32_n[ch][hw][cw]_s1_(k5|any)_cuda_.*' with roles default;candidate (scripts/gpu_build.sh).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
five=$root/five.txt
cat shapes/googlenet.txt > "$five"
grep -h -- '-y 5 -x 5' shapes/inception_v3.txt >> "$five"
dd=bwdd_f32 dw=bwdw_f32
CASES="k5d 2 $five ${dd}_nchw_s1_any_cuda_stc4x4,${dd}_nhwc_s1_any_cuda_stc4x4 ${dd}_nchw_s1_any_cuda_stc4x4 ${dd}_nhwc_s1_any_cuda_stc4x4 ${dd}_nchw_s1_any_cuda_c4x4s1n0y ${dd}_nhwc_s1_any_cuda_c4x4n0y ${dd}_nchw_s1_k5_cuda_stc4x4w2 ${dd}_nchw_s1_k5_cuda_stc4x4w4 ${dd}_nhwc_s1_k5_cuda_stc4x4w2 ${dd}_nhwc_s1_k5_cuda_stc4x4w4
k5w 4 $five ${dw}_nchw_s1_any_cuda_stc4k4p0,${dw}_nhwc_s1_any_cuda_stc4k4 ${dw}_nchw_s1_any_cuda_stc4k4p0 ${dw}_nhwc_s1_any_cuda_stc4k4 ${dw}_nchw_s1_any_cuda_c4k4fst3u2 ${dw}_nhwc_s1_any_cuda_c4k4ft3u2 ${dw}_nchw_s1_k5_cuda_stc4k4w2 ${dw}_nchw_s1_k5_cuda_stc4k4w4 ${dw}_nhwc_s1_k5_cuda_stc4k4w2 ${dw}_nhwc_s1_k5_cuda_stc4k4w4" \
  CONFORMANCE="${CONFORMANCE:-bwd?_f32_*_k5_cuda_st*}" OUT=$root bash scripts/gpu_versus.sh
OUT=$root source scripts/gpu_env.sh
echo "== memcheck F(4x4) k5: $(memcheck 'bwd?_f32_n*_s1_k5_cuda_st*w4' 300)"
