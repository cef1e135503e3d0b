#!/usr/bin/env bash
# The GPU machine (device tool): where matrix-fragment kernels' time goes, on several layers. For each
# layer, scripts/gpu_ncu.sh's table of the named kernels (ncu's counters per launch: occupancy, issue
# slots, the tensor pipe, caches, the largest stall reasons); then the PTX files carried in $SASS_PTX
# (tools/ptx_info/ptx_info.sh writes them here) through the machine's ptxas and cuobjdump, and each
# kernel's k-block loop counted by opcode (tools/ptx_info/sass_loops.py).
#   LAYERS   a file of MIOpenDriver lines (default: three layers of ResNet-50 and VGG-16)
#   KERNELS  backward-data kernel names, WKERNELS backward-weight ones (each run in its own layout)
#   DTYPE    bf16 (default) or f16: the layers' driver command (convbfp16, convfp16)
# Everything in one archive, $OUT/profile.tgz (gpu_ncu.sh's rows per layer and direction, sass/); the
# table is printed last and kept as $OUT/table.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root/profile" "$root/sass"
layers=${LAYERS:-}
if [ -z "$layers" ]; then
  layers=$root/profile/layers.txt
  { grep -m1 -- "-c 64   -H 56  -W 56  -k 64   -y 3" shapes/resnet50.txt
    grep -m1 -- "-c 512  -H 7 " shapes/resnet50.txt
    grep -m1 -- "-c 512 -H 28" shapes/vgg16.txt; } | cut -d'#' -f1 > "$layers"
fi
{
i=0
while read -r layer; do
  [ -n "$layer" ] || continue
  i=$((i + 1))
  echo "== L$i $layer"
  for spec in "2:${KERNELS:-}" "4:${WKERNELS:-}"; do
    [ -n "${spec#*:}" ] || continue
    LAYER="$layer" DTYPE=${DTYPE:-bf16} DIRECTION=${spec%%:*} KERNELS="${spec#*:}" OUT=$root/profile/L$i-F${spec%%:*} \
        bash scripts/gpu_ncu.sh 2>&1
  done
done < "$layers"
echo "SASS: the k-block loop of each kernel entry with matrix instructions"
for p in ${SASS_PTX:-}/*.ptx; do
  [ -f "$p" ] || continue
  b=$(basename "$p" .ptx)
  ptxas -arch=sm_90 -v "$p" -o "$root/sass/$b.cubin" > "$root/sass/$b.ptxas.txt" 2>&1 &&
    cuobjdump --dump-sass "$root/sass/$b.cubin" > "$root/sass/$b.sass" 2>&1 &&
    echo "  $b:" && python3 tools/ptx_info/sass_loops.py "$root/sass/$b.sass" | sed 's/^/    /'
done
} | tee "$root/table.txt"
tar czf "$root/profile.tgz" -C "$root" profile sass && rm -rf "$root/profile" "$root/sass"
