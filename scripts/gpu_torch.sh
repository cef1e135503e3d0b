#!/usr/bin/env bash
# The GPU machine (device tool, NVIDIA H100; its python3 has PyTorch with CUDA): the Python
# package's tests on CUDA (and on its CPU, the AVX-512 host kernels), then the training example on
# CUDA with the override on and off, and a table last: time per step on/off, final losses, the
# largest difference of the curves. libconvbwd.so comes built here by scripts/gpu_build.sh, carried
# in .device/bin (run with carry [".device/bin"]); the package and the example from the tree.
#   run: bash scripts/gpu_torch.sh      (logs, curves.json/png per run to $OUT)
#   STEPS (default 300), BATCH (default 64), SKIP_TESTS=1, SKIP_CPU_TESTS=1, SKIP_TRAIN=1, CHANNELS_LAST=0 (no
#   channels_last training run), TRAIN_TIMEOUT (seconds per training run, default 200)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/gpu_env.sh  # $bin (the unpacked binaries), $out, cuDNN on LD_LIBRARY_PATH
[ -f "$bin/libconvbwd.so" ] || { echo "no $bin/libconvbwd.so: run scripts/gpu_build.sh here and carry .device/bin"; exit 1; }
export CONVBWD_LIBRARY="$bin/libconvbwd.so"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
python3 -c 'import torch, convbwd; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0)); print("convbwd", convbwd.library_path(), len(convbwd.kernels()), "kernels, host ISA", convbwd.host_isa())' \
    | tee -a "$out/device.txt"

step() { echo "== $*"; }
rcs=()
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  step "python/tests on CUDA (convbwd.torch vs PyTorch's float64 gradients, fallbacks, errors, example)"
  CONVBWD_TEST_DEVICE=cuda timeout 300 python3 python/tests/run.py --require-torch > "$out/tests_cuda.log" 2>&1
  rc=$?; echo "rc=$rc"; rcs+=("tests cuda: rc=$rc"); grep -E "^(FAIL|ERROR):|^tests run" "$out/tests_cuda.log"
  if [ "${SKIP_CPU_TESTS:-0}" != 1 ]; then
    step "python/tests on the CPU (host kernels at $(python3 -c 'import convbwd; print(convbwd.host_isa())'))"
    timeout 300 python3 python/tests/run.py --require-torch > "$out/tests_cpu.log" 2>&1
    rc=$?; echo "rc=$rc"; rcs+=("tests cpu: rc=$rc"); grep -E "^(FAIL|ERROR):|^tests run" "$out/tests_cpu.log"
  fi
fi

runs=(nchw)
[ "${CHANNELS_LAST:-1}" = 0 ] || runs+=(channels_last)
[ "${SKIP_TRAIN:-0}" != 1 ] || runs=()
for r in "${runs[@]}"; do
  step "training on CUDA ($r): override off, then on, from one seed"
  extra=()
  [ "$r" = channels_last ] && extra=(--channels-last)
  timeout "${TRAIN_TIMEOUT:-200}" python3 apps/examples/torch/train_cnn.py --device cuda --steps "${STEPS:-300}" \
      --batch "${BATCH:-64}" "${extra[@]}" --out "$out/train-cuda-$r" --verbose > "$out/train_cuda_$r.log" 2>&1
  rc=$?; echo "rc=$rc"; rcs+=("train $r: rc=$rc"); tail -12 "$out/train_cuda_$r.log"
done

step "table"
python3 - "$out" "${runs[@]}" <<'PY'
import json, os, sys
out, runs = sys.argv[1], sys.argv[2:]
print("| run | model | PyTorch ms/step | convbwd ms/step | PyTorch / convbwd (above 1: convbwd faster) | final loss PyTorch | final loss convbwd "
      "| max diff (smoothed) | noise floor (smoothed) | served / fallback |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in runs:
    path = os.path.join(out, f"train-cuda-{r}", "curves.json")
    if not os.path.exists(path):
        print(f"| {r} | (no curves.json: see train_cuda_{r}.log) ||||||||")
        continue
    j = json.load(open(path))
    on, off = j["convbwd"], j["pytorch"]
    print(f"| {r}, batch {j['batch']}, {j['steps']} steps | {j['model']} | {off['ms_per_step']:.2f} | "
          f"{on['ms_per_step']:.2f} | {off['ms_per_step'] / on['ms_per_step']:.2f} | {j['final_loss_pytorch']:.4f} | "
          f"{j['final_loss_convbwd']:.4f} | {j['max_loss_diff']:.4f} ({j['max_smoothed_loss_diff']:.4f}) | "
          + (f"{j['noise']['max_loss_diff']:.4f} ({j['noise']['max_smoothed_loss_diff']:.4f})" if j.get("noise") else "-")
          + f" | {on['stats']['served']} / {on['stats']['fallback']} |")
    for reason, n in on["stats"]["reasons"].items():
        print(f"  {r}: fallback {n}x: {reason}")
PY
printf '%s\n' "${rcs[@]}"
