# Sourced by the GPU machine's scripts (gpu_run.sh, gpu_suites.sh, gpu_kernels.sh): unpacks the
# binaries carried in .device/bin (xz, scripts/gpu_build.sh) into $bin, makes $out ($OUT), puts
# the cuDNN of the machine's PyTorch on LD_LIBRARY_PATH, and defines conformance().
bin=/tmp/convbwd-bin
mkdir -p "$bin"
# Each binary once per carried file (a second script sourcing this while the first one's programs
# run must not rewrite them: "Text file busy").
for f in .device/bin/*.xz; do
  t="$bin/$(basename "$f" .xz)"
  [ "$t" -nt "$f" ] && continue
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' "$f" "$t"
  chmod +x "$t"
done
out=${OUT:-/tmp/convbwd-gpu}
# conformance CASES [TIMEOUT]: the doctest cases (kernel names) against the double reference on
# this GPU, log in $out/test_cuda.log, its status and summary printed.
conformance() {
  echo "== conformance: $1"
  timeout "${2:-240}" "$bin/convbwd_tests" --test-suite=kernels "--test-case=$1" > "$out/test_cuda.log" 2>&1
  echo "rc=$?"; tail -3 "$out/test_cuda.log"
}
# memcheck CASES [TIMEOUT]: the same cases under compute-sanitizer memcheck, log in
# $out/test_memcheck.log; prints one line: status, doctest summary, error summary.
memcheck() {
  timeout "${2:-300}" compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/convbwd_tests" \
      --test-suite=kernels "--test-case=$1" > "$out/test_memcheck.log" 2>&1
  echo "rc=$? $(grep -E '^\[doctest\] (test cases|assertions)|ERROR SUMMARY' "$out/test_memcheck.log" | tr '\n' ' ')"
}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(os.path.dirname(nvidia.cudnn.__file__), "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH="${cudnn:+$cudnn:}${LD_LIBRARY_PATH:-}"
