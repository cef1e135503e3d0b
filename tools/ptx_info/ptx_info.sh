#!/usr/bin/env bash
# Registers, stack and spills of one CUDA kernel's PTX as ptxas compiles it for the H100 (sm_90),
# with no GPU: runs the GPU generator with Halide's codegen debug output, cuts the PTX out of it
# and runs `ptxas -v`. Needs a configured GPU build (scripts/gpu_build.sh) and the CUDA toolkit's
# ptxas (its version is printed first: register counts move between versions).
#   tools/ptx_info/ptx_info.sh bwdw_f32_nchw_s1_k3_cuda_c4k4fst3u7v4    (a cuda kernel name)
#   tools/ptx_info/ptx_info.sh <generator -g name> <key=value ...>      (any parameters)
# MAX_REGS: the register cap (default: the build's CONVBWD_CUDA_MAX_REGISTERS, else 128, the
# value libconvbwd gives Halide's JIT). Matrix-fragment kernels: their calls become mma.sync first, as
# the runtime does at load (the build's convbwd_ptx_fragments), and their entries get the runtime's
# `.maxnreg` (FRAGMENT_MAXNREG replaces it, as CONVBWD_FRAGMENT_MAXNREG does the runtime's), which
# takes precedence over the cap. ALIGNED_LOAD_BYTES (the kernel's input_channel_vector() x 2, which the
# runtime passes; default 0) and COPIES_AHEAD (copies_ahead(), 0 or 1) with CONVBWD_FRAGMENT_COPIES: the
# runtime's rewrite of staged copies. Prints one line per entry point (`_kernel_<func>_...`) and leaves the PTX in $PTX_DIR
# (default /tmp/convbwd-ptx).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$here/build-gpu}
out=${PTX_DIR:-/tmp/convbwd-ptx}
target=host-cuda-cuda_capability_80-user_context-c_plus_plus_name_mangling-no_runtime
generator=$build/convbwd_gpu.generator
[ -x "$generator" ] || { echo "no $generator: configure a GPU build first (scripts/gpu_build.sh)" >&2; exit 2; }
command -v ptxas >/dev/null || { echo "ptxas not found (CUDA toolkit)" >&2; exit 2; }
mkdir -p "$out"
if [ $# -eq 1 ]; then  # a kernel-list name: its generator and parameters from the build's commands
  case "$1" in *_cuda_*) ;; *) echo "$1: not a cuda kernel (PTX exists only for those)" >&2; exit 2 ;; esac
  cmd=$(cd "$build" && ninja -t commands | grep -- "-n $1 " | head -1 || true)
  [ -n "$cmd" ] || { echo "no kernel $1 in $build" >&2; exit 2; }
  gen=$(echo "$cmd" | grep -oE -- "-g [a-z_]+" | cut -d' ' -f2)
  # The generator's key=value parameters after target=... (up to the command's end or next &&).
  read -r -a params <<< "$(echo "$cmd" | grep -oE "target=[^&]*" | cut -d' ' -f2-)"
  name=$1
else
  gen=$1; shift; params=("$@")
  name=custom
fi
regs=${MAX_REGS:-$(grep -oE "^CONVBWD_CUDA_MAX_REGISTERS:[A-Z]+=[0-9]+" "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || true)}
[ -n "$regs" ] && [ "$regs" != 0 ] || regs=128
gdir=$(mktemp -d)
trap 'rm -rf "$gdir"' EXIT
HL_DEBUG_CODEGEN=2 "$generator" -n "$name" -d 0 -g "$gen" -f "$name" -e object -o "$gdir" "target=$target" \
    "${params[@]}" > "$gdir/log.txt" 2>&1 || { tail -5 "$gdir/log.txt" >&2; exit 1; }
python3 - "$gdir/log.txt" "$out/$name.ptx" <<'PY'
import sys
s = open(sys.argv[1], errors="replace").read()
mark = "compile_to_srcPTX kernel:"  # Halide's debug(2) line before the PTX
i = s.find(mark)
j = s.find("Compiling PTX to SASS", i) if i >= 0 else -1
if i < 0 or j < 0:
    sys.exit("no PTX in the generator's debug output (has Halide's message changed?)")
open(sys.argv[2], "w").write(s[i + len(mark):j])
PY
if grep -q convbwd_mma "$out/$name.ptx"; then
  [ -x "$build/convbwd_ptx_fragments" ] || (cd "$build" && ninja convbwd_ptx_fragments >/dev/null)
  "$build/convbwd_ptx_fragments" "$out/$name.ptx" "$out/$name.ptx" "${FRAGMENT_MAXNREG:--}" "${ALIGNED_LOAD_BYTES:-0}" "${COPIES_AHEAD:-0}"
  echo "matrix fragments: mma.sync inlined, $(grep -m1 -oE '\.maxnreg [0-9]+' "$out/$name.ptx" || echo 'no .maxnreg')"
fi
echo "ptxas $(ptxas --version | grep -oE "V[0-9.]+" | head -1)"
ptxas -arch=sm_90 -v --maxrregcount="$regs" "$out/$name.ptx" -o /dev/null > "$gdir/ptxas.txt" 2>&1 ||
    { cat "$gdir/ptxas.txt" >&2; exit 1; }
echo "cap: $regs registers"
python3 - "$gdir/ptxas.txt" <<'PY'
import re, sys
cur, stack = None, None
for line in open(sys.argv[1]):
    m = re.search(r"Compiling entry function .(\w+).", line)
    if m:
        cur = m.group(1)
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and cur:
        stack = m.groups()
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and cur and stack:
        print(f"{cur:48s} regs {m.group(1):>3s}  stack {stack[0]:>4s}  spill st {stack[1]:>5s}  ld {stack[2]:>5s}")
        cur, stack = None, None
PY
echo "ptx: $out/$name.ptx"
