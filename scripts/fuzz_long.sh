#!/usr/bin/env bash
# The longer fuzzing run of docs/HARDENING.md: each libFuzzer target of test/fuzz for at least
# RUNS executions in all (default 10 million), split over JOBS processes (default: every core),
# from the ASan + UBSan binaries scripts/sanitize.sh builds. Prints, per target, the executions
# summed over the jobs, the coverage reached and whether any job failed.
#   FUZZ_BIN  folder of fuzz_<name> binaries (default build-san/test/fuzz); FUZZ_LIB: extra
#   shared libraries (LD_LIBRARY_PATH) where they run on another machine.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${FUZZ_BIN:-$here/build-san/test/fuzz}
runs=${RUNS:-10000000}
jobs=${JOBS:-$(nproc)}
out=${OUT:-/tmp/fuzz-long}
[ -n "${FUZZ_LIB:-}" ] && export LD_LIBRARY_PATH="$FUZZ_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$out"
rows=()
for corpus in "$here"/test/fuzz/corpus/*/; do
    name=$(basename "$corpus")
    work="$out/$name"
    mkdir -p "$work/corpus"
    t0=$(date +%s)
    (cd "$work" && "$bin/fuzz_$name" -jobs="$jobs" -workers="$jobs" -runs=$(( (runs + jobs - 1) / jobs )) \
        -max_len=4096 -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$work/" corpus "$corpus" >/dev/null 2>&1)
    total=$(cat "$work"/fuzz-*.log 2>/dev/null | grep -o 'Done [0-9]* runs' | awk '{s += $2} END {print s + 0}')
    cov=$(cat "$work"/fuzz-*.log 2>/dev/null | grep -o 'cov: [0-9]*' | awk '{if ($2 > m) m = $2} END {print m + 0}')
    crashes=$(ls "$work" | grep -c -E '^(crash|timeout|leak|oom)-' || true)
    rows+=("$(printf '%-12s %12s %8s %8s %6ss' "$name" "$total" "$cov" "$crashes" "$(( $(date +%s) - t0 ))")")
    echo "fuzz_long: $name done ($total executions)" >&2
done
echo
printf '%-12s %12s %8s %8s %7s\n' target executions cov failed time
printf '%s\n' "${rows[@]}"
