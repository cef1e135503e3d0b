#!/bin/sh
# Builds tools/gpu_smoke/gpu_smoke (see README.md). Run from anywhere; output: $1 or ./gpu_smoke.
# Both backends: CUDA runtime static, cuDNN dynamic, libstdc++/libgcc static, OpenCL opened at
# run time (no -lOpenCL). CUDA=/path overrides /usr/local/cuda.
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUDA=${CUDA:-/usr/local/cuda}
OUT=${1:-gpu_smoke}
CUDNN_LIB=$(dirname "$(ls "$CUDA"/lib64/libcudnn.so /usr/local/cuda-13.0/lib/libcudnn.so /usr/lib/x86_64-linux-gnu/libcudnn.so 2>/dev/null | head -1)")
${CXX:-g++} -std=c++17 -Wall -Wextra -O2 -I"$ROOT" -I"$ROOT/runtime/include" -I"$CUDA/include" \
    -DCONVBWD_WITH_CUDA -DCONVBWD_WITH_OPENCL \
    "$ROOT/tools/gpu_smoke/gpu_smoke.cpp" "$ROOT/common/device.cpp" "$ROOT/common/device_cuda.cpp" "$ROOT/common/device_opencl.cpp" "$ROOT/common/cudnn_peer.cpp" \
    "$ROOT/common/tensor.cpp" "$ROOT/common/reference.cpp" \
    -o "$OUT" -static-libstdc++ -static-libgcc \
    "$CUDA/lib64/libcudart_static.a" -ldl -lrt -lpthread -L"$CUDNN_LIB" -lcudnn
