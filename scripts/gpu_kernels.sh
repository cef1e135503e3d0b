#!/usr/bin/env bash
# The GPU machine: named kernels (candidates of the manifest, say) forced one at a time on every
# line of a suite, each row checked against cuDNN's output and timed against it (TF32 off) in the
# same process. Prints per kernel and layer the ratio to cuDNN in the kernel's layout and to
# cuDNN's faster layout, and the geomeans (scripts/kernel_table.py); rows in $OUT/kernels.tgz.
#   KERNELS: kernel names (--list-kernels), each with launch-time knobs after colons if wanted
#   (NAME:split_blocks=1056)   SHAPES: the suite (shapes/classes.txt)
#   ITERS: timed calls (10)   CUDA_TESTS: doctest cases of a conformance run first (none)
#   DIRECTION: -F value (2 = backward-data, 4 = backward-weight)   TARGET: cuda (default) or opencl
#   (NVIDIA's OpenCL)   DTYPE: bf16 or f16 runs the suite's lines in that type (default: as written)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin, $out, cuDNN on LD_LIBRARY_PATH
shapes=${SHAPES:-shapes/classes.txt} F=${DIRECTION:-2}
case "${DTYPE:-}" in  # the lines in that type
  bf16|f16) dtype_lines "$DTYPE" "$shapes" "$out/shapes_$DTYPE.txt"; shapes=$out/shapes_$DTYPE.txt ;;
esac
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
kernels=${KERNELS:?KERNELS: the kernel names to run}
[ -z "${CUDA_TESTS:-}" ] || conformance "$CUDA_TESTS" 300
mkdir -p "$out/rows"
total=$(echo $kernels | wc -w); i=0; t0=$(date +%s)
for k in $kernels; do
  i=$((i + 1))
  layout=$(kernel_layout "$k")
  # Every line: those the kernel cannot implement give an error row (the driver's reason), skipped
  # by the table. -V 0: the rows are checked against cuDNN's output in the same process (the
  # conformance run, CUDA_TESTS, checks the kernels against the double reference first).
  timeout 240 "$bin/convbwd-driver" --shapes "$shapes" -I "$layout" -F "$F" --target "${TARGET:-cuda}" --compare cudnn \
      --kernel "${k//:/ }" -t 1 -V 0 -i "${ITERS:-10}" --json > "$out/rows/$k.json" 2> "$out/rows/$k.err"
  rc=$?
  el=$(( $(date +%s) - t0 ))
  echo "[$i/$total] $k rc=$rc rows=$(grep -c '^{' "$out/rows/$k.json") ${el}s ETA $(( el * (total - i) / i ))s"
done
python3 scripts/kernel_table.py "$out"/rows/*.json | tee "$out/table.txt"
(cd "$out" && tar czf kernels.tgz rows device.txt $(ls test_cuda.log 2>/dev/null) && rm -rf rows test_cuda.log)
