#!/usr/bin/env bash
# The GPU machine (device tool): the cuda depthwise backward-weight defaults of this build (carried
# in .device/bin) against the same kernels of the build before a change (carried in .device/old: its
# convbwd-driver.xz), each forced by name on the depthwise layers of MobileNet-v2 and EfficientNet-b0
# (their launch defaults; SPLITS="2112 ..." adds split_blocks points of the new build; CANDIDATES: more
# kernels of the new build, compared with their class's default); conformance of every cuda depthwise
# backward-weight kernel and memcheck of the s1 k3 defaults first, then Nsight Compute's per-launch
# times of the s1 k3 defaults on shapes/classes.txt's depthwise layer (scripts/gpu_ncu.sh). Prints the
# tables last (scripts/kernel_table.py: cuDNN / kernel in its layout and in cuDNN's faster layout, and
# the old default's own time over each kernel's). Without .device/old, the bases are this build's
# defaults (CANDIDATES against their class's default); MEMCHECK: more kernels under memcheck; NCU: more
# kernels under Nsight Compute.
# First used for the output stage's one launch (2026-11-27 08:13), then its split lanes (10:21).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh
conformance 'bwdw_f32_*_cuda_dw*' 300
# Each build's cuda depthwise backward-weight defaults, from its own kernel list (a change may rename them).
dw_defaults() { "$1" --list-kernels --target cuda | awk '$1 ~ /^bwdw_f32_.*_cuda_dw/ && $8 == "default" {print $1}'; }
defaults=$(dw_defaults "$bin/convbwd-driver")
new_bin=$bin old_bin=/tmp/convbwd-old old_defaults=""
if [ -d .device/old ]; then
  BIN_DIR=$old_bin CARRIED=.device/old OUT=$root source scripts/gpu_env.sh  # unpacks the old build
  bin=$new_bin
  old_defaults=$(dw_defaults "$old_bin/convbwd-driver")
fi
s1=$(echo $defaults | tr ' ' '\n' | grep _s1_k3_)
for k in $s1 ${MEMCHECK:-}; do echo "== memcheck $k: $(memcheck "$k" 300)"; done
grep -h -- ' -g ' shapes/mobilenet_v2.txt shapes/efficientnet_b0.txt > "$root/dw.txt"
new=""
for k in $defaults ${CANDIDATES:-}; do new="$new $k"; for b in ${SPLITS:-}; do new="$new $k:split_blocks=$b"; done; done
OUT=$root/new KERNELS="$new" DIRECTION=4 SHAPES=$root/dw.txt bash scripts/gpu_kernels.sh > "$root/new.log" 2>&1
d=$(mktemp -d) o=$(mktemp -d)
tar xzf "$root/new/kernels.tgz" -C "$d"
if [ -n "$old_defaults" ]; then
  # The defaults with the old build's driver (gpu_kernels.sh with the other carried build); its rows'
  # files renamed old:<kernel> (kernel_table.py names kernels by file).
  BIN_DIR=$old_bin CARRIED=.device/old OUT=$root/old KERNELS="$old_defaults" DIRECTION=4 SHAPES=$root/dw.txt \
      bash scripts/gpu_kernels.sh > "$root/old.log" 2>&1
  tar xzf "$root/old/kernels.tgz" -C "$o"
  for f in "$o"/rows/*.json; do cp "$f" "$d/rows/old:$(basename "$f")"; done
fi
(cd "$d" && tar czf "$root/rows.tgz" rows)
KERNELS="$s1 ${NCU:-}" OUT=$root/ncu bash scripts/gpu_ncu.sh > "$root/ncu.txt" 2>&1
rm -rf "$root/new" "$root/old"
# A class without a default of its own (k5) against the any-filter defaults, which serve it.
for cls in s1_k3 s2_k3 s1_k5 s2_k5 any_any; do
  b=""
  for c in $cls any_any; do
    if [ -n "$old_defaults" ]; then for k in $old_defaults; do case $k in *_${c}_*) b="$b,old:$k" ;; esac; done
    else for k in $defaults; do case $k in *_${c}_*) b="$b,$k" ;; esac; done; fi
    [ -n "$b" ] && break
  done
  echo "== $cls: kernel, cuDNN / kernel (same layout, faster layout), own time of the ${old_defaults:+old }default / kernel's"
  base_table "$d" "${b#,}" "$root/table_$cls.txt" | grep -F "_${cls}_"
done
echo "== Nsight Compute, shapes/classes.txt's depthwise layer (us per launch)"
cut -c1-120 "$root/ncu.txt"
