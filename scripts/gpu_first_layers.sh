#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the first layers (shapes/first_layers.txt, c = 3,
# backward-weight) in f32, bf16 and f16, both layouts: the narrow family's kernels against the double
# reference (doctest cases TEST_CASES, default every cuda narrow kernel; SANITIZE_CASES under
# compute-sanitizer memcheck), then the library's own choice against cuDNN in each layout (one
# driver process per dtype and layout, -V 1: every row verified), and for f16 / bf16 the kernels
# the first layers took before the narrow family (NHWC: the matrix-fragment default; NCHW: the
# register-tile default), forced by name in the same process as cuDNN. Carry .device/bin
# (scripts/gpu_build.sh). Rows in $OUT/first_layers.tgz; the table is printed last.
#   DTYPES (f32 bf16 f16), ITERS (10)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin, $out, conformance(), memcheck()
rows=$out/rows && mkdir -p "$rows"
conformance "${TEST_CASES:-*_cuda_nr*}" "${TEST_TIMEOUT:-240}" | tee "$out/conformance.txt"
if [ -n "${SANITIZE_CASES:-}" ]; then
  echo "memcheck $SANITIZE_CASES: $(memcheck "$SANITIZE_CASES" "${SANITIZE_TIMEOUT:-300}")" | tee -a "$out/conformance.txt"
fi
drive() {  # drive NAME SHAPES LAYOUT [--kernel K]: one driver process, rows in $rows/NAME.json
  local name=$1 f=$2 lay=$3; shift 3
  CONVBWD_VERBOSE=dispatch timeout 200 "$bin/convbwd-driver" --shapes "$f" -I "$lay" --target cuda --compare cudnn \
      -t 1 -i "${ITERS:-10}" -V 1 --json "$@" > "$rows/$name.json" 2> "$rows/$name.err"
  echo "$name: rc=$?"
}
for dt in ${DTYPES:-f32 bf16 f16}; do
  f=/tmp/first_layers_$dt.txt
  dtype_lines "$dt" shapes/first_layers.txt "$f"
  for lay in NHWC NCHW; do
    drive "library_${dt}_$lay" "$f" $lay
    [ "$dt" = f32 ] && continue
    l=$(echo $lay | tr A-Z a-z)
    before=$("$bin/convbwd-driver" --list-kernels 2>/dev/null | grep -oE "bwdw_${dt}_${l}_any_any_cuda_(mmaf1m2n8v4|c2k2s?)\b" | head -1)
    [ -n "$before" ] && drive "before_${dt}_$lay" "$f" $lay --kernel "$before"
  done
done
python3 - "$rows" <<'EOF' | tee "$out/table.md"
import glob, json, os, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = os.path.basename(path)[:-5]
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        rows.setdefault(name, []).append(r)
def by_line(name):
    return {r["line"]: r for r in rows.get(name, [])}
print("| layer | dtype | layout | kernel | ms | cuDNN ms | vs cuDNN same layout | vs cuDNN best layout | before: kernel, vs cuDNN same layout |")
print("|---|---|---|---|---:|---:|---:|---:|---|")
# The rows' "line" is the line number in the shapes file (comments counted).
labels = {i + 1: l.split("#", 1)[1].strip() for i, l in enumerate(open("shapes/first_layers.txt")) if l.startswith("conv")}
for dt in ("f32", "bf16", "f16"):
    for lay in ("NHWC", "NCHW"):
        lib, other = by_line(f"library_{dt}_{lay}"), by_line(f"library_{dt}_{'NCHW' if lay == 'NHWC' else 'NHWC'}")
        before = by_line(f"before_{dt}_{lay}")
        for line, r in sorted(lib.items()):
            t, p = r.get("time_ms"), r.get("peer_time_ms")
            if not t or not p:
                print(f"| {labels[line]} | {dt} | {lay} | {r.get('kernel')} | error | | | | |")
                continue
            best = min(p, other[line]["peer_time_ms"]) if line in other and other[line].get("peer_time_ms") else p
            b = before.get(line)
            bt = f"{b['kernel'].split('_cuda_')[1]} {b['peer_time_ms'] / b['time_ms']:.3f}" if b and b.get("time_ms") and b.get("peer_time_ms") else ""
            ok = "" if r.get("verified") in (True, None) else " (NOT verified)"
            print(f"| {labels[line]} | {dt} | {lay} | {r['kernel'].split('_cuda_')[1]}{ok} | {t:.4f} | {p:.4f} | {p / t:.3f} | {best / t:.3f} | {bt} |")
EOF
tar czf "$out/first_layers.tgz" -C "$out" rows conformance.txt table.md && rm -rf "$rows"
