#!/usr/bin/env bash
# The GPU machine (device tool): where a matrix-fragment kernel's time goes. For each layer and each
# named kernel, one ncu run (its own clocks left alone) with the raw counters of the tensor pipe,
# issue slots, occupancy, caches and every stall reason per issued instruction; then a table, one
# line per launch, with the three largest stall reasons. Also disassembles the PTX files carried in
# $SASS_PTX (tools/ptx_info/ptx_info.sh writes them here) with the machine's ptxas and cuobjdump,
# and counts each kernel's instructions by opcode (HMMA, LDG, LDS, ISETP, ...).
#   LAYERS   a file of MIOpenDriver lines (default: three 3x3 layers of ResNet-50 and VGG-16)
#   KERNELS  backward-data kernel names, WKERNELS backward-weight ones (each run in its own layout)
#   DTYPE    bf16 (default) or f16: the layers' driver command (convbfp16, convfp16)
# Everything in one archive, $OUT/profile.tgz (profile/*.csv and .err, sass/); the table is printed last
# and kept as $OUT/table.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
OUT=$root source scripts/gpu_env.sh
mkdir -p "$root/profile" "$root/sass"
layers=${LAYERS:-}
if [ -z "$layers" ]; then
  layers=$root/profile/layers.txt
  { grep -m1 -- "-c 64   -H 56  -W 56  -k 64   -y 3" shapes/resnet50.txt
    grep -m1 -- "-c 512  -H 7 " shapes/resnet50.txt
    grep -m1 -- "-c 512 -H 28" shapes/vgg16.txt; } | cut -d'#' -f1 > "$layers"
fi
m="regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$"
m=$m",regex:^sm__pipe_tensor.*cycles_active\.avg\.pct_of_peak_sustained_active$"
m=$m",gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread"
m=$m",sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active"
m=$m",l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_active"
m=$m",lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed"
m=$m",smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
cmd=convbfp16; [ "${DTYPE:-bf16}" = f16 ] && cmd=convfp16
i=0
while read -r layer; do
  [ -n "$layer" ] || continue
  i=$((i + 1))
  layer=$cmd${layer#conv}
  for k in ${KERNELS:-} ${WKERNELS:-}; do
    dir=2; [[ $k == bwdw_* ]] && dir=4
    timeout 120 ncu --clock-control none --csv --page raw --metrics "$m" "$bin/convbwd-driver" $layer \
        -I "$(kernel_layout "$k")" -F $dir --target cuda --kernel "$k" -t 1 -i 1 --warmup 0 -V 0 \
        > "$root/profile/L${i}_$k.csv" 2> "$root/profile/L${i}_$k.err"
    echo "L$i $k rc=$?"
  done
done < "$layers"
for p in ${SASS_PTX:-}/*.ptx; do
  [ -f "$p" ] || continue
  b=$(basename "$p" .ptx)
  ptxas -arch=sm_90 -v "$p" -o "$root/sass/$b.cubin" > "$root/sass/$b.ptxas.txt" 2>&1 &&
    cuobjdump --dump-sass "$root/sass/$b.cubin" > "$root/sass/$b.sass" 2>&1
  echo "sass $b rc=$?"
done
python3 - "$root" "$layers" <<'PY' | tee "$root/profile/table.txt"
import csv, glob, io, os, re, sys, collections
root = sys.argv[1]
layers = [l.strip() for l in open(sys.argv[2]) if l.strip()]
print("layers:"); [print("  L%d %s" % (i + 1, l)) for i, l in enumerate(layers)]
hdr = "%-4s %-40s %-14s %7s %5s %5s %5s %5s %5s %5s %5s  %s"
print(hdr % ("L", "kernel", "launch", "us", "regs", "occ%", "iss%", "tc%", "l1hit", "l1%", "l2%", "stalls per issue (top 3)"))
for path in sorted(glob.glob(os.path.join(root, "profile", "L*_*.csv"))):
    text = open(path).read()
    if '"ID"' not in text: continue
    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
    names, units, data = rows[0], rows[1], rows[2:]
    tag = os.path.basename(path)[:-4]
    L, kern = tag.split("_", 1)
    for r in data:
        v = dict(zip(names, r))
        def num(key):
            try: return float(v.get(key, "nan").replace(",", ""))
            except ValueError: return float("nan")
        us = num("gpu__time_duration.sum")
        unit = units[names.index("gpu__time_duration.sum")] if "gpu__time_duration.sum" in names else "ns"
        us *= {"ns": 1e-3, "nsecond": 1e-3, "usecond": 1, "us": 1, "ms": 1e3, "msecond": 1e3}.get(unit, 1)
        tc = [num(n) for n in names if n.startswith("sm__pipe_tensor")]
        st = {re.sub(r"^smsp__average_warps_issue_stalled_|_per_issue_active\.ratio$", "", n): num(n)
              for n in names if n.startswith("smsp__average_warps_issue_stalled_")}
        top = sorted(st.items(), key=lambda kv: -kv[1] if kv[1] == kv[1] else 0)[:3]
        print(hdr % (L, kern[-40:], v.get("Kernel Name", "")[:14], "%.1f" % us, "%.0f" % num("launch__registers_per_thread"),
                     "%.0f" % num("sm__warps_active.avg.pct_of_peak_sustained_active"),
                     "%.0f" % num("smsp__issue_active.avg.pct_of_peak_sustained_active"),
                     "%.0f" % (max(tc) if tc else float("nan")), "%.0f" % num("l1tex__t_sector_hit_rate.pct"),
                     "%.0f" % num("l1tex__throughput.avg.pct_of_peak_sustained_active"),
                     "%.0f" % num("lts__throughput.avg.pct_of_peak_sustained_elapsed"),
                     " ".join("%s %.1f" % kv for kv in top)))
print("SASS, instructions by opcode (the 10 most frequent; static counts):")
for s in sorted(glob.glob(os.path.join(root, "sass", "*.sass"))):
    ops = collections.Counter()
    for line in open(s):
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?", line)
        if m: ops[m.group(2)] += 1
    print("  %s: %s" % (os.path.basename(s)[:-5], " ".join("%s %d" % kv for kv in ops.most_common(10))))
PY
cp "$root/profile/table.txt" "$root/table.txt"
tar czf "$root/profile.tgz" -C "$root" profile sass && rm -rf "$root/profile" "$root/sass"
