#!/usr/bin/env bash
# One device-tool call (NVIDIA GPU machine): the load-time rewrite of the fragment kernels' staged
# copies (CONVBWD_FRAGMENT_COPIES; runtime/src/cuda_fragments.cpp, rewrite_fragment_copies) compared
# in its three forms: split (Halide's two 8-byte halves per 16-byte group), joined (one 16-byte load)
# and async (cp.async from global to shared memory). For each form, scripts/gpu_mma_warps.sh runs the
# one-warp defaults (whose 8-byte loads no form changes: the same-process anchor) and the staged
# kernels on each suite against cuDNN; the conformance run (every fragment kernel against the double
# reference, memcheck) goes first for the forms in CHECK_COPIES, and racecheck/synccheck of staged
# kernels for async. Prints last, per suite, direction and kernel, the own time default/kernel under
# each form. Everything in $OUT/copies.tgz.
#   COPIES (split joined async)   CHECK_COPIES (joined async)   SUITES (vgg16 unet resnet50)
#   DTYPE (bf16)   FDIRS (2 4)   ITERS (5)   DKERNELS, WKERNELS (gpu_mma_warps.sh's, default: below)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
dt=${DTYPE:-bf16}
d=bwdd_${dt}_nhwc_s1_k3_cuda_mmaf1 w=bwdw_${dt}_nhwc_any_any_cuda_mmaf1
export DKERNELS=${DKERNELS:-"${d}m2n8v4 ${d}m2n4v4s2wm2wn2 ${d}m4n4v4s2wm2wn2"}
export WKERNELS=${WKERNELS:-"${w}m2n8v4 ${w}m2n8v4s2wm2wn2 ${w}m4n4v4s2wm2wn2"}
copies=${COPIES:-split joined async}
n=$(echo $copies | wc -w); i=0; t0=$(date +%s)
for c in $copies; do
  i=$((i + 1))
  check=0
  case " ${CHECK_COPIES:-joined async} " in *" $c "*) check=1 ;; esac
  echo "== [$i/$n] CONVBWD_FRAGMENT_COPIES=$c (conformance: $check) $(date -u +%T)"
  CONVBWD_FRAGMENT_COPIES=$c OUT=$root/$c CHECK=$check AB=0 DTYPE=$dt SUITES="${SUITES:-vgg16 unet resnet50}" \
      FDIRS="${FDIRS:-2 4}" ITERS=${ITERS:-5} bash scripts/gpu_mma_warps.sh > "$root/$c.log" 2>&1
  grep -E "rc=|test cases|assertions|memcheck" "$root/$c.log" | sed 's/^/  /'
  if [ "$c" = async ]; then  # the waits: shared memory read before its cp.async landed would show here
    OUT=$root/$c source scripts/gpu_env.sh
    for tool in racecheck synccheck; do
      echo "  $tool: $(CONVBWD_FRAGMENT_COPIES=async sanitize "$tool" "*${d}m2n4v4s2wm2wn2*,*${w}m2n8v4s2wm2wn2*" 300)"
    done
  fi
  el=$(( $(date +%s) - t0 )); echo "  elapsed ${el}s, ETA $(( el * (n - i) / i ))s"
done 2>&1 | tee "$root/copies.txt"
# The table: own time default/kernel per form (> 1: the kernel is faster than the one-warp default).
python3 - "$root" $copies <<'PY' | tee -a "$root/copies.txt"
import glob, os, re, sys
root, forms = sys.argv[1], sys.argv[2:]
own = {}  # (suite-F, kernel) -> {form: ratio}
for f in forms:
    for t in glob.glob(os.path.join(root, f, "*-F*", "table_base.txt")):
        run = os.path.basename(os.path.dirname(t))
        inside = False
        for line in open(t):
            if line.startswith("own time"): inside = True
            m = re.match(r"(bwd\S+)\s.*\s(\S+)\s*$", line)
            if inside and m: own.setdefault((run, m.group(1)), {})[f] = m.group(2)
print("own time, default / kernel (geomean over the suite's layers)")
print(f"{'suite':<16}{'kernel':<48}" + "".join(f"{f:>9}" for f in forms))
for (run, k), v in sorted(own.items()):
    print(f"{run:<16}{k:<48}" + "".join(f"{v.get(f, '-'):>9}" for f in forms))
PY
(cd "$root" && tar czf /tmp/copies.tgz --exclude='*.tgz' . 2>/dev/null; mv /tmp/copies.tgz "$root/copies.tgz")
