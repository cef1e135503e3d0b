#!/usr/bin/env bash
# One device-tool call (NVIDIA H100 machine) for the checks that need its GPU or its cores:
#   1. the longer libFuzzer run of docs/HARDENING.md on the machine's CPU cores, in the background
#      (scripts/fuzz_long.sh over the ASan + UBSan fuzz binaries built here by scripts/sanitize.sh,
#      with the shared libraries they need), while the GPU works;
#   2. cuDNN as a peer under the peer tolerance (common/verify.h, ErrorModel) on the rows that
#      failed it before: Inception-v3's 5x5 backward-weight (winograd_nonfused) and bf16 / f16
#      1x1 backward-weight over 1e5-term reductions;
#   3. the Python package's tests on CUDA and on the machine's CPU (scripts/gpu_torch.sh), or with
#      TRAIN=1 the training example instead of 2 and 3 (a second call).
# A fuzzer's failing inputs (and their job logs) come back in fuzz-artifacts.tgz.
# Carry .device/bin: convbwd-driver, libconvbwd.so (scripts/gpu_build.sh), fuzz_* (build-san),
# libdnnl.so.2, libgomp.so.1, each xz-compressed. A table is printed last.
#   FUZZ=0: no fuzzing; FUZZ_JOBS (12); TRAIN=1: training runs (STEPS, default 200).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin, $out, cuDNN on LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
nproc | sed 's/^/cpu cores: /' | tee -a "$out/device.txt"
date -u | tee -a "$out/device.txt"
rows=()

fuzz_pid=
if [ "${FUZZ:-1}" = 1 ] && [ -x "$bin/fuzz_problem" ]; then
  (FUZZ_BIN="$bin" FUZZ_LIB="$bin" JOBS=${FUZZ_JOBS:-12} OUT=/tmp/fuzz-long bash scripts/fuzz_long.sh \
      > "$out/fuzz_long.txt" 2>&1) &
  fuzz_pid=$!
fi
finish_fuzz() {
  [ -n "$fuzz_pid" ] || return 0
  echo "== waiting for the fuzzers"
  wait "$fuzz_pid"
  rows+=("fuzz_long: rc=$?")
  tail -6 "$out/fuzz_long.txt"
  # What a failing job left, its input and the jobs' logs, for a regression test here.
  local failed
  failed=$(cd /tmp/fuzz-long && ls -d */crash-* */leak-* */timeout-* */oom-* 2>/dev/null)
  [ -z "$failed" ] || tar czf "$out/fuzz-artifacts.tgz" -C /tmp/fuzz-long $failed \
      $(cd /tmp/fuzz-long && for d in $(dirname $failed | sort -u); do ls "$d"/fuzz-*.log; done)
}

if [ "${TRAIN:-0}" = 1 ]; then
  SKIP_TESTS=1 STEPS=${STEPS:-200} TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-240} bash scripts/gpu_torch.sh
  rows+=("gpu_torch training: rc=$?")
  finish_fuzz
  printf '%s\n' "${rows[@]}"
  exit 0
fi

echo "== cuDNN under the peer tolerance"
peer() {  # name, driver arguments
  local name=$1; shift
  timeout 120 "$bin/convbwd-driver" "$@" --target cuda --compare cudnn -t 0 -V 1 --json > "$out/peer_$name.json" \
      2> "$out/peer_$name.err"
  local rc=$?
  local note
  note=$(python3 -c 'import json,sys; [print(r.get("kernel"), "verified" if r.get("verified") else "NOT verified", "| cudnn:", r.get("peer_note","")) for r in map(json.loads, open(sys.argv[1]))]' "$out/peer_$name.json" 2>/dev/null)
  echo "$name rc=$rc $note"
  rows+=("peer $name: rc=$rc")
}
peer inception5x5_nchw conv -n 32 -c 48 -H 35 -W 35 -k 64 -y 5 -x 5 -p 2 -q 2 -F 4 -I NCHW
peer inception5x5_nhwc conv -n 32 -c 48 -H 35 -W 35 -k 64 -y 5 -x 5 -p 2 -q 2 -F 4 -I NHWC
peer bf16_1x1_nhwc convbfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4 -I NHWC
peer bf16_1x1_nchw convbfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4 -I NCHW
peer f16_1x1_nhwc convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4 -I NHWC

echo "== the Python package on CUDA and the CPU (scripts/gpu_torch.sh, tests only)"
CHANNELS_LAST=0 STEPS=0 SKIP_TRAIN=1 bash scripts/gpu_torch.sh > "$out/torch.txt" 2>&1
rows+=("gpu_torch tests: rc=$?")
grep -E "^== |rc=|^(FAIL|ERROR):|^tests run|^Ran|^OK|FAILED" "$out/torch.txt" | head -30

finish_fuzz
echo
echo "== summary"
printf '%s\n' "${rows[@]}"
