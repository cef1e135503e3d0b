#!/usr/bin/env bash
# One device-tool call (NVIDIA H100 machine): networks' backward-data layers on the
# matrix-fragment kernels, one scripts/gpu_mma.sh run per layer class (s1 pointwise, s1 spatial,
# s2 pointwise, s2 spatial; each against cuDNN in its own process), then scripts/mma_network.py
# over a network's runs (its geomean, the best kernel of each class serving it). First, with
# TEST_CASES set, those doctest cases against the double reference on this GPU, and with
# SANITIZE_CASES, those under compute-sanitizer memcheck.
#   DIR=bwd_weight: backward-weight's layers instead (every stride in one run per class: give
#   CLASSES="s1:pointwise s1:spatial").
#   SUITES (resnet50), DTYPES (bf16), CLASSES (all four, as "s1:pointwise s2:spatial"),
#   MMA_KERNELS (a regex over kernel names, default: the cuda ones), ITERS, VERIFY (0: the
#   conformance run is the check), STEP_TIMEOUT (s per class run, 150), LAYOUT (NHWC; NCHW: the nchw
#   kernels on NCHW tensors, the library's NCHW choice as the default).
# Carry .device/bin (scripts/gpu_build.sh). One archive in $OUT; the tables are printed last.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${OUT:-/tmp/convbwd-gpu}
mkdir -p "$root"
source scripts/gpu_env.sh
if [ -n "${TEST_CASES:-}" ]; then
  conformance "$TEST_CASES" "${TEST_TIMEOUT:-240}" | tee "$root/conformance.txt"
fi
if [ -n "${SANITIZE_CASES:-}" ]; then
  echo "memcheck $SANITIZE_CASES: $(memcheck "$SANITIZE_CASES" "${SANITIZE_TIMEOUT:-300}")" | tee -a "$root/conformance.txt"
fi
for suite in ${SUITES:-resnet50}; do
  for dt in ${DTYPES:-bf16}; do
    runs=()
    for cls in ${CLASSES:-s1:pointwise s1:spatial s2:pointwise s2:spatial}; do
      st=${cls%%:*} c=${cls##*:}
      d=$root/mma-$dt-$suite-$st-$c
      # Its own process group, killed whole at the step's limit (a plain timeout kills the script
      # only, and the driver it was running went on beside the next step's).
      OUT=$d SKIP_TESTS=1 STRIDE=$st CLASS=$c SUITES=$suite DTYPE=$dt MMA_KERNELS="${MMA_KERNELS:-_cuda_}" \
          VERIFY=${VERIFY:-0} setsid bash scripts/gpu_mma.sh > "$d.log" 2>&1 &
      pid=$!
      (sleep "${STEP_TIMEOUT:-150}"; kill -- -$pid 2>/dev/null) &
      watchdog=$!
      wait $pid
      rc=$?
      kill $watchdog 2>/dev/null
      echo "$suite $dt $st $c: rc=$rc" >> "$root/rows.txt"
      [ -f "$d/mma.tgz" ] && (cd "$d" && tar xzf mma.tgz && rm mma.tgz)
      [ -f "$d/summary.md" ] && { echo "## $suite $dt $st $c"; tail -n +3 "$d/summary.md"; } >> "$root/summaries.md"
      runs+=("$d")
    done
    { echo "## $suite $dt"; python3 scripts/mma_network.py --layout "${LAYOUT:-NHWC}" "$suite" "${runs[@]}"; } >> "$root/network.md"
  done
done
cat "$root/rows.txt" "$root/summaries.md" "$root/network.md" 2>/dev/null | cut -c1-220
tar czf "$root/network.tgz" -C "$root" $(cd "$root" && ls | grep -v '^network') &&
  (cd "$root" && ls | grep -vE '^network' | xargs rm -rf)
