#!/usr/bin/env bash
# The GPU machine (device tool): Nsight Compute metrics of named kernels on one layer, one line per
# launch (each Halide stage is its own launch): time, grid, registers, achieved occupancy, DRAM, L1
# and L2 throughput, global load sectors, L2 and L1 hit rates, the warps' long-scoreboard and
# LG-throttle stalls, issue slots and the tensor pipe busy and, last, the three largest stall reasons
# per issued instruction. ncu's clocks and cache flushes are its own: compare the kernels within one
# run, not with the driver's times.
#   LAYER: an MIOpenDriver line (default: shapes/classes.txt's depthwise layer)
#   DTYPE: bf16 or f16 runs the line in that type (convbfp16, convfp16; default: as written)
#   DIRECTION: -F value (4 = backward-weight)   KERNELS: names, ':knob=v' allowed, each run in its own
#   layout (none: the library's choice in LAYOUT, NCHW | NHWC, labelled lib:<kernel> from the driver's
#   output)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh
layer=${LAYER:-$(grep -m1 -- ' -g 144 ' shapes/classes.txt | cut -d'#' -f1)}
case "${DTYPE:-}" in bf16|f16) layer=$(driver_op "$DTYPE")${layer#conv} ;; esac
m=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
m=$m,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
m=$m,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct
m=$m,lts__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,regex:^sm__pipe_tensor.*cycles_active\.avg\.pct_of_peak_sustained_active$
m=$m,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$
for k in ${KERNELS:-lib}; do
  # A named kernel runs in its own layout (the name's third field); the library's choice in LAYOUT.
  force=(--kernel ${k//:/ }) layout=$(kernel_layout "$k")
  [ "$k" != lib ] || force=() layout=${LAYOUT:-NHWC}
  ncu --csv --metrics "$m" "$bin/convbwd-driver" $layer -I "$layout" -F "${DIRECTION:-4}" --target cuda \
      "${force[@]}" -t 1 -i 1 --warmup 0 -V 0 > "$root/ncu_$k.csv" 2> "$root/ncu_$k.err"
  if [ "$k" = lib ]; then  # named by the kernel the library chose
    chosen=$(grep -m1 -oE "kernel [a-z0-9_]+" "$root/ncu_lib.csv" | cut -d' ' -f2)
    mv "$root/ncu_lib.csv" "$root/ncu_lib:${chosen:-unknown}.csv"
  fi
done
python3 - "$root" <<'PY'
import csv, glob, io, os, sys
short = {"gpu__time_duration.sum": "us", "launch__grid_size": "grid", "launch__block_size": "blk",
         "launch__registers_per_thread": "regs", "sm__warps_active.avg.pct_of_peak_sustained_active": "occ%",
         "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%", "l1tex__throughput.avg.pct_of_peak_sustained_active": "l1%",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "ld_sect", "lts__t_sector_hit_rate.pct": "l2hit%",
         "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "st_lsb",
         "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio": "st_lgt", "smsp__inst_executed.sum": "inst",
         "l1tex__t_sector_hit_rate.pct": "l1hit%", "lts__throughput.avg.pct_of_peak_sustained_elapsed": "l2%",
         "smsp__issue_active.avg.pct_of_peak_sustained_active": "iss%"}
cols = list(short.values()) + ["tc%"]
stall = "smsp__average_warps_issue_stalled_"
print("%-58s %-22s " % ("kernel", "launch") + " ".join("%8s" % c for c in cols) + "  stalls per issue (top 3)")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.csv"))):
    text = open(path).read()
    text = text[text.find('"ID"'):] if '"ID"' in text else ""
    launches = {}
    for r in csv.DictReader(io.StringIO(text)):
        key = (r["ID"], r["Kernel Name"][:22])
        v = r["Metric Value"].replace(",", "")
        if r["Metric Name"] == "gpu__time_duration.sum":  # to microseconds
            v = str(float(v) * {"ns": 1e-3, "nsecond": 1e-3, "ms": 1e3, "msecond": 1e3}.get(r["Metric Unit"], 1))
        name = r["Metric Name"]
        vals = launches.setdefault(key, {})
        vals[short.get(name, "tc%" if name.startswith("sm__pipe_tensor") else name)] = v
        if name.startswith(stall):  # every stall reason, by its short name
            vals.setdefault("stalls", {})[name[len(stall):].replace("_per_issue_active.ratio", "")] = float(v)
    for (i, name), vals in launches.items():
        def f(c):
            try: x = float(vals.get(c, "nan")); return "%8.3g" % x
            except ValueError: return "%8s" % vals.get(c, "")[:8]
        top = sorted(vals.get("stalls", {}).items(), key=lambda kv: -kv[1])[:3]
        print("%-58s %-22s " % (os.path.basename(path)[4:-4][-58:], name) + " ".join(f(c) for c in cols) + "  " +
              " ".join("%s %.1f" % kv for kv in top))
PY
