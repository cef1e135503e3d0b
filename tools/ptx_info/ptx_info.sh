#!/usr/bin/env bash
# Registers, stack and spills of one CUDA kernel's PTX as ptxas compiles it for the H100 (sm_90,
# at libconvbwd's 128-register JIT cap), with no GPU: runs the GPU generator with Halide's codegen
# debug output, cuts the PTX out of it and runs `ptxas -v`. Needs a configured GPU build
# (scripts/gpu_build.sh) and the CUDA toolkit's ptxas.
#   tools/ptx_info/ptx_info.sh bwdw_f32_nchw_s1_k3_cuda_c4k4fst3u7      (a kernel-list name)
#   tools/ptx_info/ptx_info.sh <generator -g name> <key=value ...>      (any parameters)
# Prints one line per entry point (`_kernel_<func>_...`) and leaves the PTX in $PTX_DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$here/build-gpu}
out=${PTX_DIR:-/tmp/convbwd-ptx}
mkdir -p "$out"
if [ $# -eq 1 ]; then  # a kernel-list name: take its generator command from the build
  cmd=$(cd "$build" && ninja -t commands | grep -- "-n $1 " | head -1 || true)
  [ -n "$cmd" ] || { echo "no kernel $1 in $build" >&2; exit 2; }
  gen=$(echo "$cmd" | grep -oE -- "-g [a-z_]+" | cut -d' ' -f2)
  params=$(echo "$cmd" | grep -oE "target=.*")
  name=$1
else
  gen=$1; shift; params="target=host-cuda-cuda_capability_80-user_context-c_plus_plus_name_mangling-no_runtime $*"
  name=custom
fi
gdir=$(mktemp -d)
# shellcheck disable=SC2086
HL_DEBUG_CODEGEN=2 "$build/$(ls "$build" | grep -m1 'gpu.generator$')" -n "$name" -d 0 -g "$gen" -f "$name" -e object \
    -o "$gdir" $params > "$gdir/log.txt" 2>&1 || { tail -5 "$gdir/log.txt" >&2; exit 1; }
python3 - "$gdir/log.txt" "$out/$name.ptx" <<'PY'
import sys
s = open(sys.argv[1], errors="replace").read()
mark = "compile_to_srcPTX kernel:"
i = s.find(mark)
j = s.find("Compiling PTX to SASS", i)
open(sys.argv[2], "w").write(s[i + len(mark):j])
PY
rm -rf "$gdir"
ptxas -arch=sm_90 -v --maxrregcount=${MAX_REGS:-128} "$out/$name.ptx" -o /dev/null 2>&1 | python3 -c '
import re, sys
cur = None
for line in sys.stdin:
    m = re.search(r"Compiling entry function .(\w+).", line)
    if m: cur = m.group(1); continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and cur: stack, st, ld = m.groups(); continue
    m = re.search(r"Used (\d+) registers", line)
    if m and cur:
        print(f"{cur:48s} regs {m.group(1):>3s}  stack {stack:>4s}  spill st {st:>5s}  ld {ld:>5s}"); cur = None
'
echo "ptx: $out/$name.ptx"
