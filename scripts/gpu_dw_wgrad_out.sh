#!/usr/bin/env bash
# The GPU machine (device tool): the depthwise backward-weight kernels after their output stage
# changed (one launch for every tap, 8 split loads in flight) against the same kernels of the build
# before it (carried in .device/old: its convbwd-driver.xz), each forced by name on the depthwise
# layers of MobileNet-v2 and EfficientNet-b0, split_blocks 528 (the default) and 2112 for the new
# one; conformance and memcheck of the new kernels first. Prints the table last
# (scripts/kernel_table.py: cuDNN / kernel, and the old default's own time over each).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh
conformance 'bwdw_f32_*_cuda_dw*' 300
echo "== memcheck: $(memcheck 'bwdw_f32_nhwc_s1_k3_cuda_dw*' 300)"
grep -h -- ' -g ' shapes/mobilenet_v2.txt shapes/efficientnet_b0.txt > "$root/dw.txt"
ks="bwdw_f32_nhwc_s1_k3_cuda_dwc1k1tc4tk16ft3 bwdw_f32_nchw_s1_k3_cuda_dwc1k1tc4tk16fst3r3u4
    bwdw_f32_nhwc_any_any_cuda_dwc1k1tc4tk16ft3r3u4 bwdw_f32_nchw_any_any_cuda_dwc1k1tc4tk16fst3"
new="" old="" bases=""
for k in $ks; do new="$new $k $k:split_blocks=2112"; old="$old $k"; done
OUT=$root/new KERNELS="$new" DIRECTION=4 SHAPES=$root/dw.txt bash scripts/gpu_kernels.sh > "$root/new.log" 2>&1
mkdir -p "$root/old"
# The old build's driver; its rows' files named old:<kernel> (kernel_table.py names kernels by file).
BIN_DIR=/tmp/convbwd-old CARRIED=.device/old OUT=$root/old source scripts/gpu_env.sh
for k in $old; do
  l=$(echo "$k" | cut -d_ -f3 | tr a-z A-Z)
  timeout 240 /tmp/convbwd-old/convbwd-driver --shapes "$root/dw.txt" -I "$l" -F 4 --target cuda --compare cudnn \
      --kernel "$k" -t 1 -V 0 -i 10 --json > "$root/old/old:$k.json" 2> "$root/old/$k.err"
done
d=$(mktemp -d); tar xzf "$root/new/kernels.tgz" -C "$d"; cp "$root"/old/old:*.json "$d/rows/"
python3 scripts/kernel_table.py "$d"/rows/*.json --base "old:bwdw_f32_nchw_s1_k3_cuda_dwc1k1tc4tk16fst3r3u4,old:bwdw_f32_nhwc_s1_k3_cuda_dwc1k1tc4tk16ft3" > "$root/table_s1k3.txt"
python3 scripts/kernel_table.py "$d"/rows/*.json --base "old:bwdw_f32_nchw_any_any_cuda_dwc1k1tc4tk16fst3,old:bwdw_f32_nhwc_any_any_cuda_dwc1k1tc4tk16ft3r3u4" > "$root/table_any.txt"
(cd "$d" && tar czf "$root/rows.tgz" rows)
rm -rf "$root/new" "$root/old"
for t in s1k3 any; do
  echo "== $t: kernel, cuDNN / kernel (same layout, faster layout), own time of the old default / kernel's"
  awk '/^own time/{sec=2} /^(old:)?bwd/{if (sec == 2) own[$1] = $NF; else { same[$1] = $(NF-1); best[$1] = $NF; n[++k] = $1 }}
       END {for (i = 1; i <= k; i++) printf "%-70s %6s %6s %6s\n", n[i], same[n[i]], best[n[i]], own[n[i]]}' "$root/table_$t.txt"
done
