#!/usr/bin/env bash
# Set up (scripts/setup.sh), configure and build convbwd.
#   BUILD_DIR        build folder (default: build)
#   CONVBWD_KERNELS  glob over kernel names to build (default: all); generic kernels always build
#   CONVBWD_TARGETS  kernel targets (default: host;opencl;amdgpu, or host with CONVBWD_GPU=0;
#                    add cuda where the CUDA toolkit is installed)
#   CMAKE_ARGS       extra configure arguments
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$here/scripts/setup.sh"
venv=${CONVBWD_VENV:-$here/.venv}
export PATH="$venv/bin:$PATH"
hl=$("$venv/bin/python" -c 'import halide, os; print(os.path.dirname(halide.__file__))')
build=${BUILD_DIR:-$here/build}
default_targets="host;opencl;amdgpu"
[ "${CONVBWD_GPU:-1}" != 0 ] || default_targets=host
targets=${CONVBWD_TARGETS:-$default_targets}
cmake -G Ninja -S "$here" -B "$build" \
      -DHalide_DIR="$hl/lib64/cmake/Halide" -DHalideHelpers_DIR="$hl/lib64/cmake/HalideHelpers" \
      -DCONVBWD_KERNELS="${CONVBWD_KERNELS:-*}" -DCONVBWD_TARGETS="$targets" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -- -j "$(nproc)"
