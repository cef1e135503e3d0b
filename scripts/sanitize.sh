#!/usr/bin/env bash
# CI's sanitizer and fuzz jobs, on the host target (clang-15; the f32 host kernels the
# dispatcher and the tests name, and the generic ones; one Halide target, so the multi-target
# checks, isa and kernels-host-<isa>, are left to scripts/test.sh):
#   1. ASan + UBSan: the library, tests and driver instrumented; the test suite's host entries
#      (the tuner's tests left out: they compile and load kernel modules, minutes under ASan).
#   2. libFuzzer: each target of test/fuzz over its seed corpus, FUZZ_RUNS executions (default
#      20000) from a fixed seed (-seed=1: CI explores the same inputs each run; the longer runs of
#      scripts/fuzz_long.sh explore freely), then a table of executions and new coverage per target.
#   3. ThreadSanitizer: the library instrumented, the threads test (test/test_threads.cpp).
# Builds go to SAN_DIR (default build-san) and TSAN_DIR (default build-tsan).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$here/scripts/setup.sh"
for tool in clang-15 clang++-15; do
    command -v "$tool" >/dev/null || { echo "sanitize: $tool is missing (scripts/setup.sh installs it unless CONVBWD_GPU=0)"; exit 1; }
done
venv=${CONVBWD_VENV:-$here/.venv}
export PATH="$venv/bin:$PATH"
hl=$("$venv/bin/python" -c 'import halide, os; print(os.path.dirname(halide.__file__))')
san=${SAN_DIR:-$here/build-san}
tsan=${TSAN_DIR:-$here/build-tsan}
runs=${FUZZ_RUNS:-20000}
configure() {  # build dir, sanitizers, kernel glob, extra args
    cmake -G Ninja -S "$here" -B "$1" -DHalide_DIR="$hl/lib64/cmake/Halide" \
          -DHalideHelpers_DIR="$hl/lib64/cmake/HalideHelpers" -DCMAKE_C_COMPILER=clang-15 \
          -DCMAKE_CXX_COMPILER=clang++-15 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVBWD_TARGETS=host \
          -DCONVBWD_HOST_TARGETS=host -DCONVBWD_WITH_AMDGPU=OFF -DCONVBWD_KERNELS="$3" \
          -DCONVBWD_ROLES='default;baseline' -DCONVBWD_SANITIZE="$2" "${@:4}" >/dev/null
}
t0=$(date +%s)

echo "== sanitize: ASan + UBSan build ($san)"
configure "$san" address,undefined '*_f32_*' -DCONVBWD_FUZZ=ON
cmake --build "$san" -- -j "$(nproc)"
echo "== sanitize: ASan + UBSan tests"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$san" && ctest --output-on-failure -j "$(nproc)" -E 'autotune|slurm|amdgpu|isa|kernels-host-')

echo "== sanitize: libFuzzer, $runs executions per target"
table=()
for corpus in "$here"/test/fuzz/corpus/*/; do
    name=$(basename "$corpus")
    work="$san/fuzz-corpus/$name"
    mkdir -p "$work"
    log="$san/fuzz-$name.log"
    if ! "$san/test/fuzz/fuzz_$name" -seed=1 -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
            -artifact_prefix="$san/fuzz-$name-" "$work" "$corpus" >"$log" 2>&1; then
        tail -40 "$log"
        echo "sanitize: fuzz_$name failed (crash input under $san/fuzz-$name-*)"
        exit 1
    fi
    done_line=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    table+=("$(printf '%-14s %-32s %s' "$name" "$done_line" "$cov")")
done

echo "== sanitize: ThreadSanitizer build ($tsan)"
configure "$tsan" thread none  # the generic kernels: the test dispatches
cmake --build "$tsan" --target convbwd_threads_test -- -j "$(nproc)"
echo "== sanitize: ThreadSanitizer run"
# ASLR off: TSan's shadow memory needs the classic address layout on recent kernels.
(cd "$tsan/test" && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$here/test/tsan.supp \
    setarch "$(uname -m)" -R ./convbwd_threads_test --force-colors=0)

echo
echo "sanitize: ASan+UBSan tests passed; ThreadSanitizer threads test passed; fuzz targets:"
printf '%s\n' "${table[@]}"
echo "sanitize: done in $(( $(date +%s) - t0 )) s"
