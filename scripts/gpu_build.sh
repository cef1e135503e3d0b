#!/usr/bin/env bash
# Builds the binaries the GPU machine runs (host + cuda + opencl kernels, no oneDNN: that machine
# lacks it) and puts them in .device/bin for the device tool to carry (scripts/gpu_run.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$here/build-gpu} CONVBWD_TARGETS="host;cuda;opencl" \
    CMAKE_ARGS="-DCONVBWD_WITH_ONEDNN=OFF -DCONVBWD_WITH_AMDGPU=OFF ${CMAKE_ARGS:-}" bash "$here/scripts/build.sh"
# xz-compressed: the device tool carries at most 64 MiB (scripts/gpu_run.sh unpacks them).
rm -rf "$here/.device/bin" && mkdir -p "$here/.device/bin"
# libconvbwd.so: the Python package's (scripts/gpu_torch.sh). CARRY=torch carries only it.
b=${BUILD_DIR:-$here/build-gpu}
files=("$b/test/convbwd_tests" "$b/apps/convbwd-driver" "$b/autotune/convbwd-tune" "$b/libconvbwd.so")
[ "${CARRY:-all}" != torch ] || files=("$b/libconvbwd.so")
for f in "${files[@]}"; do
  strip -o "$here/.device/bin/$(basename "$f")" "$f"
  xz -T2 -3 -f "$here/.device/bin/$(basename "$f")"
done
ls -la "$here/.device/bin"
