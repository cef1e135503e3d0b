#!/usr/bin/env bash
# Set up (scripts/setup.sh), configure and build convbwd.
#   BUILD_DIR        build folder (default: build)
#   CONVBWD_KERNELS  glob over kernel names to build (default: all); generic kernels always build
#   CONVBWD_TARGETS  kernel targets (default: host;opencl;amdgpu, or host with CONVBWD_GPU=0;
#                    add cuda where the CUDA toolkit is installed)
#   CMAKE_ARGS       extra configure arguments
#   CONVBWD_TORCH=0  no PyTorch: ctest torch is skipped (else it runs in CONVBWD_TORCH_VENV, required)
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
# ctest torch (the Python package's tests) runs in the PyTorch environment scripts/setup.sh made,
# and fails there if PyTorch cannot be imported; without PyTorch it reports itself skipped.
if [ "${CONVBWD_TORCH:-1}" != 0 ]; then
  torch_args=(-DCONVBWD_TORCH_PYTHON="${CONVBWD_TORCH_VENV:-$here/.venv-torch}/bin/python" -DCONVBWD_TORCH_REQUIRED=ON)
else
  torch_args=(-DCONVBWD_TORCH_PYTHON=/usr/bin/python3 -DCONVBWD_TORCH_REQUIRED=OFF)
fi
cmake -G Ninja -S "$here" -B "$build" \
      -DHalide_DIR="$hl/lib64/cmake/Halide" -DHalideHelpers_DIR="$hl/lib64/cmake/HalideHelpers" \
      -DCONVBWD_KERNELS="${CONVBWD_KERNELS:-*}" -DCONVBWD_TARGETS="$targets" "${torch_args[@]}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -- -j "$(nproc)"
