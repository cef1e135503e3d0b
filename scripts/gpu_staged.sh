#!/usr/bin/env bash
# The GPU machine (device tool): the staged backward-data kernels (conv_bwd_data_staged_gpu)
# against the defaults and the tuned candidates, each forced by name on its suites and checked
# against cuDNN's output in the same process (scripts/gpu_kernels.sh, one run per suite into
# $OUT/<suite>/): the any-filter layers (shapes/any_filter.txt), VGG-16 (3x3), ResNet-50 (1x1, 3x3).
# First the staged kernels against the double reference, then one of them under memcheck.
# Prints last, per suite, each kernel's geomean of its own time against the suite's default in its
# layout (scripts/kernel_table.py --base).
#   SUITES: any vgg resnet d2 (default: the first three; d2: the stride-2 layers of
#   shapes/any_filter.txt, the staged kernels STAGED_D2, default "stc4x4 stc4x4f")
#   ITERS: timed calls (10)   MEMCHECK: the memcheck's test cases   SKIP_CHECKS=1: the suites only
#   STAGED_ANY, STAGED_K3, STAGED_K1: the staged kernels' tags per filter class
#   LIBRARY=1: instead, every backward-data f32 cuda kernel of the build against the double
#   reference and the staged dispatcher test, memcheck of the staged default, then the library's own
#   choices (tuning database included) on shapes/any_filter.txt in both layouts against cuDNN
#   (rows $OUT/library_<layout>.json, the dispatch log beside them; scripts/suites.py --layers).
#   SKIP_CHECKS=1: the library's choices only
#   WEIGHT=1: instead, the staged backward-weight kernels (conv_bwd_weight_staged_gpu): against the
#   double reference, memcheck, then forced by name on shapes/any_filter.txt's stride-1 layers (suite
#   w1) and its stride-2 layers (w2): the stride's staged default, the any-stride candidates (tags
#   STAGED_W, default "stc4k4 stc4k4tc16tk8") and the stride's register-tile default, the base
#   (SKIP_CHECKS=1: the suites only); with LIBRARY=1, the library's own backward-weight choices on
#   shapes/any_filter.txt in both layouts against cuDNN (rows $OUT/library_w_<layout>.json)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh
library() {  # library F PREFIX: the library's own choices (-F F) on shapes/any_filter.txt, both layouts, against cuDNN
  for l in NCHW NHWC; do
    CONVBWD_VERBOSE=dispatch timeout 240 "$bin/convbwd-driver" --shapes shapes/any_filter.txt -I $l -F "$1" --target cuda \
        --compare cudnn -t 1 -V 0 -i 10 --json > "$out/$2_$l.json" 2> "$out/$2_$l.err"
    echo "library $l rc=$? rows=$(grep -c '^{' "$out/$2_$l.json")"
  done
  python3 scripts/suites.py "$out/$2_NCHW.json" "$out/$2_NHWC.json" --layers
}
if [ "${WEIGHT:-0}" = 1 ] && [ "${LIBRARY:-0}" = 1 ]; then library 4 library_w; exit 0; fi
if [ "${LIBRARY:-0}" = 1 ]; then
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"; date -u | tee -a "$out/device.txt"
  [ "${SKIP_CHECKS:-0}" = 1 ] || {
  conformance 'bwdd_f32_*_cuda_*' 400
  timeout 120 "$bin/convbwd_tests" "--test-case=staged backward-data*" > "$out/test_dispatch.log" 2>&1
  echo "dispatch tests rc=$? $(grep -E 'staged backward-data kernels checked|^\[doctest\] assertions' "$out/test_dispatch.log" | tr '\n' ' ')"
  memcheck 'bwdd_f32_nchw_s1_any_cuda_stc4x4' 200; }
  library 2 library
  exit 0
fi
table() {  # table SUITE BASES: per kernel, cuDNN / kernel (same layout, best layout) and the base's own time / kernel's
  echo "== $1: geomeans over the layers each kernel ran: cuDNN / kernel (same layout, cuDNN's best layout);"
  echo "   own time of the layout's default / kernel's"
  base_table "$root/$1" "$2"
}
if [ "${WEIGHT:-0}" = 1 ]; then
  [ "${SKIP_CHECKS:-0}" = 1 ] || {
  conformance 'bwdw_f32_*_cuda_st*' 400
  mv "$out/test_cuda.log" "$out/test_staged_weight.log"
  memcheck 'bwdw_f32_nhwc_any_any_cuda_stc4k4' 300; }
  wst() {  # wst STRIDE: the stride's staged defaults and the any-stride candidates, both layouts
    for l in nhwc nchw; do
      echo "bwdw_f32_${l}_$1_any_cuda_stc4k4$([ $l = nchw ] && echo p0)"  # NCHW's defaults: skip_pad=0
      for t in ${STAGED_W:-stc4k4 stc4k4tc16tk8}; do echo "bwdw_f32_${l}_any_any_cuda_$t"; done
    done
  }
  grep -v -- '-u 2' shapes/any_filter.txt > "$root/w1.txt"; grep -e '^#' -e '-u 2' shapes/any_filter.txt > "$root/w2.txt"
  declare -A wk wb
  wb[w1]=bwdw_f32_nhwc_s1_any_cuda_c4k4ft3u2,bwdw_f32_nchw_s1_any_cuda_c4k4fst3u2
  wb[w2]=bwdw_f32_nhwc_s2_any_cuda_c4k4tc8tk16ft7,bwdw_f32_nchw_s2_any_cuda_c4k4tc8tk16fst7
  for s in ${SUITES:-w1 w2}; do
    echo "== suite $s"
    OUT=$root/$s KERNELS="${wb[$s]//,/ } $(wst s${s#w})" SHAPES=$root/$s.txt DIRECTION=4 bash scripts/gpu_kernels.sh > "$root/$s.log" 2>&1
    tail -2 "$root/$s.log"
  done
  for s in ${SUITES:-w1 w2}; do table $s "${wb[$s]}"; done
  exit 0
fi
[ "${SKIP_CHECKS:-0}" = 1 ] || {
conformance 'bwdd_f32_*_cuda_st*' 300
mv "$out/test_cuda.log" "$out/test_staged.log"
memcheck "${MEMCHECK:-bwdd_f32_nchw_s1_any_cuda_stc4x4}" 200; }

staged() {  # staged candidates of a class, both layouts
  for l in nhwc nchw; do for t in $2; do echo "bwdd_f32_${l}_s1_$1_cuda_$t"; done; done
}
declare -A kernels base
kernels[any]="bwdd_f32_nhwc_s1_any_cuda_c4x4n0y bwdd_f32_nchw_s1_any_cuda_c4x4s1n0y
  bwdd_f32_nhwc_s1_any_cuda_c8x4tc8s1j4n0yv4 bwdd_f32_nchw_s1_any_cuda_c8x4tc8s1j4n0yv4
  bwdd_f32_nhwc_s1_any_cuda_c8x8tc8s1n0yv4 bwdd_f32_nchw_s1_any_cuda_c8x8tc8s1n0yv4
  $(staged any "${STAGED_ANY:-stc4x4 stc4x4tc16tx8}")"
base[any]=bwdd_f32_nhwc_s1_any_cuda_c4x4n0y,bwdd_f32_nchw_s1_any_cuda_c4x4s1n0y
kernels[vgg]="bwdd_f32_nhwc_s1_k3_cuda_c4x7u bwdd_f32_nchw_s1_k3_cuda_c4x7s1uv4 $(staged k3 "${STAGED_K3:-stc4x4}")"
base[vgg]=bwdd_f32_nhwc_s1_k3_cuda_c4x7u,bwdd_f32_nchw_s1_k3_cuda_c4x7s1uv4
kernels[resnet]="${kernels[vgg]} bwdd_f32_nhwc_s1_k1_cuda_c4x4 bwdd_f32_nchw_s1_k1_cuda_c4x4 $(staged k1 "${STAGED_K1:-stc4x4}")"
base[resnet]=bwdd_f32_nhwc_s1_k3_cuda_c4x7u,bwdd_f32_nchw_s1_k3_cuda_c4x7s1uv4
# d2: shapes/any_filter.txt's stride-2 layers (DCGAN), the staged stride-2 kernels (phases) against
# the register-tile defaults of the class.
kernels[d2]="bwdd_f32_nhwc_s2_any_cuda_c4x4n0y bwdd_f32_nchw_s2_any_cuda_c4x4s1n0yv4 bwdd_f32_nchw_s2_any_cuda_c4x4n0y
  $(for l in nhwc nchw; do for t in ${STAGED_D2:-stc4x4 stc4x4f}; do echo "bwdd_f32_${l}_s2_any_cuda_$t"; done; done)"
base[d2]=bwdd_f32_nhwc_s2_any_cuda_c4x4n0y,bwdd_f32_nchw_s2_any_cuda_c4x4s1n0yv4
grep -e '^#' -e '-u 2' shapes/any_filter.txt > "$root/d2.txt"
declare -A shapes=([any]=shapes/any_filter.txt [vgg]=shapes/vgg16.txt [resnet]=shapes/resnet50.txt [d2]=$root/d2.txt)
for s in ${SUITES:-any vgg resnet}; do
  echo "== suite $s"
  OUT=$root/$s KERNELS="${kernels[$s]}" SHAPES=${shapes[$s]} DIRECTION=2 bash scripts/gpu_kernels.sh > "$root/$s.log" 2>&1
  tail -2 "$root/$s.log"
done
for s in ${SUITES:-any vgg resnet}; do table $s "${base[$s]}"; done
