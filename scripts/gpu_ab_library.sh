#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the library of this build (carried in .device/bin) against
# the library of the build before a change (carried in .device/old: its convbwd-driver.xz), each
# choosing its own kernels, on the same shape files, cuDNN in every process (TF32 off). The two
# drivers alternate per (shape file, dtype, layout), so drift hits both alike. Conformance of this
# build's kernels (TEST_CASES) and memcheck (SANITIZE_CASES) first. Prints the table last: per layer,
# old and new time, new's speed-up (old / new) and cuDNN / new in the same layout; a geomean per
# shape file and dtype. $OUT keeps rows.tgz, table.md and the logs (the device tool brings back
# few files: the rows and the dtype-substituted shape files live in a scratch folder).
#   SHAPES: shape files (default shapes/first_layers.txt)   DTYPES (f32)   LAYOUTS (NHWC NCHW)
#   F: 2 data, 4 weight (default 4)   ITERS (10)   VERIFY: -V of the new build's runs (default 1)
#   TEST_CASES (default: every cuda backward-weight kernel)   SANITIZE_CASES (default: none)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
OUT=$root source scripts/gpu_env.sh  # the new build in $bin
new_bin=$bin old_bin=/tmp/convbwd-old
BIN_DIR=$old_bin CARRIED=.device/old OUT=$root source scripts/gpu_env.sh  # unpacks the old build
bin=$new_bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$root/device.txt"
date -u | tee -a "$root/device.txt"
conformance "${TEST_CASES:-bwdw_*_cuda_*}" "${TEST_TIMEOUT:-300}" | tee "$root/conformance.txt"
[ -n "${SANITIZE_CASES:-}" ] && echo "memcheck $SANITIZE_CASES: $(memcheck "$SANITIZE_CASES" 240)" | tee -a "$root/conformance.txt"
work=$(mktemp -d) rows=$work/rows && mkdir -p "$rows"
files=(${SHAPES:-shapes/first_layers.txt})
total=$(( ${#files[@]} * $(echo ${DTYPES:-f32} | wc -w) * $(echo ${LAYOUTS:-NHWC NCHW} | wc -w) )); i=0; t0=$(date +%s)
for f in "${files[@]}"; do
  for dt in ${DTYPES:-f32}; do
    s=$work/$(basename "$f" .txt)_$dt.txt
    dtype_lines "$dt" "$f" "$s"
    for lay in ${LAYOUTS:-NHWC NCHW}; do
      for which in old new; do
        d=$([ $which = old ] && echo "$old_bin" || echo "$new_bin")
        v=$([ $which = new ] && echo "${VERIFY:-1}" || echo 0)
        timeout 240 "$d/convbwd-driver" --shapes "$s" -I "$lay" -F "${F:-4}" --target cuda --compare cudnn -t 1 \
            -i "${ITERS:-10}" -V "$v" --json > "$rows/${which}_$(basename "$s" .txt)_$lay.json" 2>> "$rows/errors.txt"
      done
      i=$((i + 1)); el=$(( $(date +%s) - t0 )); echo "[$i/$total, ${el}s, ETA $(( el * (total - i) / i ))s]"
    done
  done
done
cp "$root/device.txt" "$root/conformance.txt" "$work/" && (cd "$work" && tar czf "$root/rows.tgz" rows device.txt conformance.txt)
python3 - "$rows" <<'EOF' | tee "$root/table.md"
import glob, json, math, os, sys
def load(path):
    out = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        out[(r["problem"], r["direction"])] = r
    return out
print("| set | layout | layer | old kernel | old ms | new kernel | new ms | old / new | cuDNN / new | verified |")
print("|---|---|---|---|---:|---|---:|---:|---:|---|")
summary = []
for new_path in sorted(glob.glob(os.path.join(sys.argv[1], "new_*.json"))):
    name = os.path.basename(new_path)[4:-5]
    old = load(os.path.join(sys.argv[1], "old_" + name + ".json"))
    sp, rat = [], []
    for key, r in load(new_path).items():
        o = old.get(key)
        t, p = r.get("time_ms"), r.get("peer_time_ms")
        if not o or not t or not o.get("time_ms"):
            continue
        speed = o["time_ms"] / t
        sp.append(speed)
        if p:
            rat.append(p / t)
        layer = key[0].split(" -F")[0].split(" ", 1)[1]
        print(f"| {name.rsplit('_', 1)[0]} | {name.rsplit('_', 1)[1]} | {layer} | {o['kernel']} | {o['time_ms']:.4f} | "
              f"{r['kernel']} | {t:.4f} | {speed:.2f} | {p / t if p else float('nan'):.2f} | {r.get('verified')} |")
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    summary.append(f"{name}: {len(sp)} layers, old / new geomean {g(sp):.3f} (min {min(sp, default=float('nan')):.2f}, "
                   f"max {max(sp, default=float('nan')):.2f}), cuDNN / new geomean {g(rat):.3f}")
print()
print("\n".join(summary))
EOF
