#!/usr/bin/env bash
# The GPU machine (device tool): NHWC grouped backward-weight candidates (blocks of 4-8 input
# channels; schedules/kernels.manifest, "Grouped NHWC backward-weight") against the NHWC s1 k3 / s2 k3
# defaults, each forced by name on ResNeXt-50's grouped 3x3 layers (shapes/resnext50.txt, 4-32
# channels a group), at their launch defaults and split_blocks=4224 max_splits=4096; the NCHW
# record's kernel and the NCHW s2 k3 default run too (cuDNN's NCHW times: its faster layout).
# Conformance of the candidates against the double reference and memcheck of one first. Prints
# the table last (cuDNN / kernel, same layout and faster layout; own time of the NHWC default / kernel's).
# NEW: the candidates (default: the two kept; the 10:31 UTC run of 2026-11-27 had four more, since
# removed from the manifest: docs/PERFORMANCE.md "Grouped NHWC backward-weight").
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh
new="${NEW:-bwdw_f32_nhwc_s1_k3_cuda_c2k4tc4tk16fst3u2 bwdw_f32_nhwc_s2_k3_cuda_c2k4tc4tk16ft3u2}"
conformance "$(echo $new | tr ' ' ',')" 300
echo "== memcheck: $(memcheck "${new%% *}" 300)"
grep -h -- ' -g ' shapes/resnext50.txt > "$root/grouped.txt"
ks="bwdw_f32_nchw_s1_k3_cuda_c1k2tc4tk16fst2u7:split_blocks=4224:max_splits=4096 bwdw_f32_nchw_s2_k3_cuda_c4k4fst3u2
    bwdw_f32_nhwc_s1_k3_cuda_c4k4ft3u2 bwdw_f32_nhwc_s2_k3_cuda_c4k4ft3u2"
for k in $new; do ks="$ks $k $k:split_blocks=4224:max_splits=4096"; done
OUT=$root/run KERNELS="$ks" DIRECTION=4 SHAPES=$root/grouped.txt bash scripts/gpu_kernels.sh > "$root/run.log" 2>&1
tail -3 "$root/run.log"
echo "== kernel, cuDNN / kernel (same layout, faster layout), own time of the NHWC default (s1 or s2) / kernel's"
for b in bwdw_f32_nhwc_s1_k3_cuda_c4k4ft3u2 bwdw_f32_nhwc_s2_k3_cuda_c4k4ft3u2; do
  echo "-- base $b"; base_table "$root/run" "$b" | grep -E "$(echo $b | cut -d_ -f4)_k3|nchw"
done
