#!/usr/bin/env bash
# On a machine with another CPU (the GPU machine's host, typically with AVX-512): the host
# kernels' multi-target variants and backward-weight's error bound, from binaries built here
# (CONVBWD_GPU=0 CONVBWD_KERNELS=none, static libstdc++) and carried in .device-isa/:
#   BUILD_DIR=build-isa CONVBWD_GPU=0 CONVBWD_KERNELS=none \
#     CMAKE_ARGS="-DCONVBWD_WITH_ONEDNN=OFF -DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++" bash scripts/build.sh
#   mkdir -p .device-isa && cp build-isa/test/convbwd_tests build-isa/apps/convbwd-accuracy .device-isa/
# Prints the CPU, the isa suite and the generic host kernels' conformance uncapped and capped at
# AVX2 and SSE4.1, then convbwd-accuracy at 1e6, 1e8 and 5e8 terms.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${ISA_BIN:-$here/.device-isa}
export CONVBWD_SHAPES_DIR=$here/shapes
out=${OUT:-/tmp/isa-check}
mkdir -p "$out"
echo "== cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "== avx512 flags: $(grep -m1 -o 'avx512[a-z_]*' /proc/cpuinfo | sort -u | tr '\n' ' ')$(grep -m1 -c avx512f /proc/cpuinfo)"
rows=()
for cap in "" avx2 sse41; do
    log="$out/tests-${cap:-uncapped}.log"
    CONVBWD_MAX_CPU_ISA=$cap "$bin/convbwd_tests" --test-suite=kernels,isa "--test-case=*_host_*,isa:*" \
        --force-colors=0 >"$log" 2>&1
    rc=$?
    isa=$(grep -o 'host ISA: [a-z0-9]*' "$log" | head -1)
    rows+=("$(printf '%-10s rc=%d  %-18s %s' "${cap:-none}" "$rc" "$isa" "$(grep 'test cases:' "$log" | tr -s ' ')")")
done
"$bin/convbwd-accuracy" --terms 1e6,1e8,5e8 --channels 1 | tee "$out/accuracy-c1.txt"
"$bin/convbwd-accuracy" --terms 1e6,5e7 --channels 8 | tee "$out/accuracy-c8.txt"
echo
echo "cap        result"
printf '%s\n' "${rows[@]}"
