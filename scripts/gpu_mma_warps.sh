#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the staged fragment kernels (stage > 0: blocks of
# warps_m x warps_n warps sharing each staged chunk, each warp's accumulators in its registers over
# the whole reduction) against the one-warp defaults and cuDNN, both directions. First conformance of
# every fragment kernel of the build against the double reference (and the fragment tail cases),
# memcheck of staged ones; then each named kernel forced on every layer of each suite
# (scripts/gpu_kernels.sh: cuDNN in the same process, in the kernel's layout and cuDNN's faster one);
# then the library of this build against the one before (.device/old, scripts/gpu_ab_library.sh)
# where a staged kernel is a default (NCHW 1x1 backward-weight). Prints per suite and direction the
# geomeans last; everything in $OUT/warps.tgz.
#   SUITES (vgg16 unet resnet50 inception_v3)   DTYPE (bf16)   DKERNELS, WKERNELS: backward-data and
#   backward-weight kernels (default: the one-warp defaults first, then the staged candidates)
#   FDIRS (2 4: the -F values run)   CHECK (1: the conformance and memcheck first)   AB (1: the
#   library A/B)   AB_SHAPES (shapes/resnet50.txt shapes/mobilenet_v2.txt)   SANITIZE_CASES (the
#   memcheck's test cases: three staged kernels)   RACECHECK (test cases also run under racecheck and
#   synccheck; none by default)   CONFORMANCE_CASES (default: every fragment kernel and the tail cases)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
dt=${DTYPE:-bf16}
d=bwdd_${dt}_nhwc_s1 w=bwdw_${dt}_nhwc_any_any_cuda_mmaf1
dk=${DKERNELS:-"${d}_k3_cuda_mmaf1m2n8v4 ${d}_k3_cuda_mmaf1m1n8v4 ${d}_k3_cuda_mmaf1m2n4v4s2wm2wn2
  ${d}_k3_cuda_mmaf1m4n4v4s2wm2wn2 ${d}_k3_cuda_mmaf1m2n8v4s2wm2wn2 ${d}_k3_cuda_mmaf1m2n4v4s4wm2wn2
  ${d}_k3_cuda_mmaf1m4n4v4s4wm2"}
wk=${WKERNELS:-"${w}m2n8v4 ${w}m2n4v4s4wm2wn2 ${w}m2n8v4s2wm2wn2 ${w}m4n4v4s2wm2wn2 ${w}m4n8v4s2wn2"}
OUT=$root source scripts/gpu_env.sh
[ "${CHECK:-1}" = 1 ] && {
conformance "${CONFORMANCE_CASES:-*bwd?_*16_*_cuda_mma*,*matrix fragments*}" 500
echo "memcheck: $(memcheck "${SANITIZE_CASES:-*${w}m2n4v4s4wm2wn2*,*bwdw_bf16_nchw_any_k1_cuda_mmaf1m2n4v4s4wm2wn2*,*${d}_k3_cuda_mmaf1m2n4v4s2wm2wn2*}" 300)"
if [ -n "${RACECHECK:-}" ]; then
  echo "racecheck: $(sanitize racecheck "$RACECHECK" 300)"
  echo "synccheck: $(sanitize synccheck "$RACECHECK" 300)"
fi
} 2>&1 | tee "$root/conformance.txt"
for s in ${SUITES:-vgg16 unet resnet50 inception_v3}; do
  for F in ${FDIRS:-2 4}; do
    kernels=$dk; [ $F = 4 ] && kernels=$wk
    echo "== $s ($dt, -F $F)"
    OUT=$root/$s-F$F SHAPES=shapes/$s.txt DTYPE=$dt DIRECTION=$F ITERS=${ITERS:-10} KERNELS="$kernels" \
        bash scripts/gpu_kernels.sh > "$root/$s-F$F.log" 2>&1
    # Per kernel: cuDNN / kernel geomeans (its layout, cuDNN's faster one) and the own time of the
    # first kernel (the default) over each kernel's, geomean over the layers both ran.
    t=$(mktemp -d) && tar xzf "$root/$s-F$F/kernels.tgz" -C "$t" &&
      python3 scripts/kernel_table.py "$t"/rows/*.json --base "${kernels%% *}" > "$root/$s-F$F/table_base.txt"
    awk '/^own time/ {own=1} /^bwd/ && !own {c[$1]=$(NF-1) " / " $NF} own && /^bwd/ {o[$1]=$NF}
         END {for (k in c) printf "  %-44s cuDNN/kernel %-11s own time default/kernel %s\n", k, c[k], o[k]}' \
        "$root/$s-F$F/table_base.txt" | sort
    rm -rf "$t"
  done
done 2>&1 | tee "$root/kernels.txt"
if [ -d .device/old ] && [ "${AB:-1}" = 1 ]; then
  echo "== library A/B (old = .device/old), NCHW backward-weight, $dt"
  OUT=$root/ab SHAPES="${AB_SHAPES:-shapes/resnet50.txt shapes/mobilenet_v2.txt}" DTYPES=$dt LAYOUTS=NCHW F=4 VERIFY=0 \
      TEST_CASES='^$' bash scripts/gpu_ab_library.sh > "$root/ab.log" 2>&1
  grep -iE "geomean" "$root/ab.log" | tail -8
fi
(cd "$root" && tar czf /tmp/warps.tgz . 2>/dev/null && mv /tmp/warps.tgz "$root/warps.tgz")
[ "${CHECK:-1}" = 1 ] && echo "== conformance" && grep -E "rc=|test cases|assertions|memcheck|racecheck|synccheck" "$root/conformance.txt"
