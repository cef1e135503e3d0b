# Sourced by the GPU machine's scripts (gpu_run.sh, gpu_suites.sh, gpu_kernels.sh): unpacks the
# binaries carried in .device/bin (xz, scripts/gpu_build.sh) into $bin, makes $out ($OUT), puts
# the cuDNN of the machine's PyTorch on LD_LIBRARY_PATH, and defines conformance().
# CARRIED / BIN_DIR: another carried build and where to unpack it (an A/B of two builds in one call:
# scripts/gpu_dw_wgrad_out.sh).
bin=${BIN_DIR:-/tmp/convbwd-bin}
mkdir -p "$bin"
# Each binary once per carried file (a second script sourcing this while the first one's programs
# run must not rewrite them: "Text file busy").
for f in "${CARRIED:-.device/bin}"/*.xz; do
  t="$bin/$(basename "$f" .xz)"
  [ "$t" -nt "$f" ] && continue
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' "$f" "$t"
  chmod +x "$t"
done
out=${OUT:-/tmp/convbwd-gpu}
# The shape suites of this copy of the repository: a test binary built in another folder (a worktree)
# has that folder's path compiled in (common/shapes.cpp reads CONVBWD_SHAPES_DIR first).
export CONVBWD_SHAPES_DIR=${CONVBWD_SHAPES_DIR:-$PWD/shapes}
# conformance CASES [TIMEOUT]: the doctest cases (kernel names) against the double reference on
# this GPU, log in $out/test_cuda.log, its status and summary printed.
conformance() {
  echo "== conformance: $1"
  timeout "${2:-240}" "$bin/convbwd_tests" --test-suite=kernels "--test-case=$1" > "$out/test_cuda.log" 2>&1
  echo "rc=$?"; tail -3 "$out/test_cuda.log"
}
# sanitize TOOL CASES [TIMEOUT]: the cases under compute-sanitizer's TOOL (memcheck, racecheck,
# synccheck, initcheck), log in $out/test_TOOL.log; prints one line: status, doctest summary, error
# summary. memcheck CASES [TIMEOUT]: sanitize memcheck.
sanitize() {
  timeout "${3:-300}" compute-sanitizer --tool "$1" --error-exitcode 9 "$bin/convbwd_tests" \
      --test-suite=kernels "--test-case=$2" > "$out/test_$1.log" 2>&1
  echo "rc=$? $(grep -E '^\[doctest\] (test cases|assertions)|ERROR SUMMARY|RACECHECK SUMMARY' "$out/test_$1.log" | tr '\n' ' ')"
}
memcheck() { sanitize memcheck "$@"; }
# driver_op DTYPE: the driver's command for lines of that type (bf16: convbfp16, f16: convfp16, else
# conv); dtype_lines DTYPE FILE OUT: FILE's lines so, into OUT (every line, whatever its type as written:
# shapes/iree_strided.txt has bf16 and f16 lines).
driver_op() { case "$1" in bf16) echo convbfp16 ;; f16) echo convfp16 ;; *) echo conv ;; esac; }
dtype_lines() { sed -E "s/^conv(bfp16|fp16)? /$(driver_op "$1") /" "$2" > "$3"; }
# kernel_layout NAME: a kernel's layout, NCHW | NHWC (its name's third field; launch knobs after a colon).
kernel_layout() { echo "$1" | cut -d_ -f3 | tr a-z A-Z; }
# base_table DIR BASES [TABLE]: the rows of DIR/rows/ (else of DIR/kernels.tgz: scripts/gpu_kernels.sh)
# as one line per kernel: geomeans of cuDNN / kernel in its layout and against cuDNN's faster layout,
# and of the own time of its layout's base (BASES: the layouts' base kernels, comma-separated) over the
# kernel's; the full table in TABLE (default DIR/table_base.txt; scripts/kernel_table.py --base).
# Kernels may carry a label before a colon (old:<kernel>: another build's rows).
base_table() {
  local d="$1" table=${3:-$1/table_base.txt}
  if [ ! -d "$1/rows" ]; then d=$(mktemp -d); tar xzf "$1/kernels.tgz" -C "$d"; fi
  python3 scripts/kernel_table.py "$d"/rows/*.json --base "$2" > "$table"
  awk '/^own time/{sec=2} /^([a-z]+:)?bwd[dw]/{if (sec == 2) own[$1] = $NF; else { same[$1] = $(NF-1); best[$1] = $NF; n[++k] = $1; w = length($1) > w ? length($1) : w }}
       END {for (i = 1; i <= k; i++) printf "%-*s %6s %6s %6s\n", w, n[i], same[n[i]], best[n[i]], own[n[i]]}' "$table"
}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(os.path.dirname(nvidia.cudnn.__file__), "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH="${cudnn:+$cudnn:}${LD_LIBRARY_PATH:-}"
