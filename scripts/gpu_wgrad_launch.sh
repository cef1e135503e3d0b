#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the one-warp fragment backward-weight kernel's per-call
# copies (dy and x with the columns innermost) on large planes, and its launch knob split_blocks.
# Parts (PARTS, in order):
#   check    conformance of the copy_groups kernels (g: the copies read 8-channel groups in place)
#            against the double reference, and a memcheck of one
#   profile  ncu per launch (the copies, the kernel, the sum over the splits) of the kernel and its
#            copy_groups twin on VGG-16's and U-Net's layers of 64-512 channels (gpu_mma_profile.sh)
#   copies   the twin against the kernel on every layer of VGG-16, U-Net and ResNet-50, bf16 and f16
#            (gpu_mma_warps.sh: cuDNN in the same process; own time = the kernel's time / the twin's)
#   splits   the kernel with split_blocks = 2112, 4224, 8448 against its default 1056 (own time)
#   warps    blocks of warps at stage 0 (warps_m, warps_n: each warp loads its own operands, its
#            neighbours the same k-blocks at once) against the one-warp copy_groups kernel (own time
#            = the one-warp kernel's time / the candidate's), every layer of the suites
# Prints the per-launch table, then per suite the own times last; everything in $OUT.
#   DTYPES (bf16 f16)   LAYOUT (nhwc)   PARTS (check profile copies)   SUITES (vgg16 unet resnet50)
#   PROFILE_KERNELS (the f16 kernel and its twin)   PROFILE_DTYPE (f16)   CHECK_CASES (the copy_groups
#   kernels' cases)   WARPS (the warps part's tags after mmaf1: m2n8v4wm2u2g ...)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
lay=${LAYOUT:-nhwc}
kern() { echo "bwdw_$1_${lay}_any_any_cuda_mmaf1m2n8v4u2"; }
parts=" ${PARTS:-check profile copies} "
if [[ $parts == *" check "* ]]; then
  (OUT=$root source scripts/gpu_env.sh
   conformance "${CHECK_CASES:-*bwdw_*16_${lay}_any_any_cuda_mmaf1m2n8v4u2g*}" 400
   echo "memcheck: $(memcheck "${MEMCHECK_CASES:-*$(kern f16)g*}" 300)") > "$root/check.log" 2>&1
fi
if [[ $parts == *" profile "* ]]; then
  layers=$root/layers.txt
  { grep -m1 -- "-c 64 -H 224" shapes/vgg16.txt; grep -m1 -- "-c 256 -H 56 -W 56 -k 256" shapes/vgg16.txt
    grep -m1 -- "-c 512 -H 28" shapes/vgg16.txt; grep -m1 -- "-c 64 -H 256 -W 256 -k 64" shapes/unet.txt; } |
      cut -d'#' -f1 > "$layers"
  OUT=$root/profile LAYERS=$layers WKERNELS="${PROFILE_KERNELS:-$(kern f16) $(kern f16)g}" DTYPE=${PROFILE_DTYPE:-f16} bash scripts/gpu_mma_profile.sh > "$root/profile.log" 2>&1
fi
# A part's kernels, each forced on every layer of the suites (gpu_mma_warps.sh; own time = the first
# kernel's time / each one's): $root/$1-$dt.
run_part() {
  OUT=$root/$1-$dt CHECK=0 AB=0 FDIRS=4 SUITES="${SUITES:-vgg16 unet resnet50}" DTYPE=$dt WKERNELS="$2" \
      bash scripts/gpu_mma_warps.sh > "$root/$1-$dt.log" 2>&1
}
for dt in ${DTYPES:-bf16 f16}; do
  k=$(kern "$dt")
  [[ $parts == *" copies "* ]] && run_part copies "$k ${k}g"
  if [[ $parts == *" warps "* ]]; then
    ks=${k}g; for t in ${WARPS:-m2n8v4wm2u2g m2n8v4wm2wn2u2g}; do ks="$ks bwdw_${dt}_${lay}_any_any_cuda_mmaf1$t"; done
    run_part warps "$ks"
  fi
  if [[ $parts == *" splits "* ]]; then
    ks=$k; for b in 2112 4224 8448; do ks="$ks $k:split_blocks=$b"; done
    run_part splits "$ks"
  fi
done
[ -f "$root/check.log" ] && echo "== check" && grep -E "rc=|test cases|assertions|memcheck" "$root/check.log"
[ -f "$root/profile.log" ] && echo "== per launch (ncu)" && grep -vE "^SASS|^ *$" "$root/profile.log" | cut -c1-180
for f in "$root"/copies-*.log "$root"/warps-*.log "$root"/splits-*.log; do [ -f "$f" ] && echo "== $(basename "$f" .log)" && cat "$f"; done
# One archive back (the device tool returns a limited number of files): the logs stay beside it.
(cd "$root" && tar czf /tmp/wgrad_launch.tgz . && find . -mindepth 1 -maxdepth 1 ! -name '*.log' -exec rm -rf {} + &&
   mv /tmp/wgrad_launch.tgz wgrad_launch.tgz)
exit 0
