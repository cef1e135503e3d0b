#!/usr/bin/env bash
# convbwd-tune on the GPU machine, which has no compiler: candidates are built here, run there in
# slices of under 10 minutes (resuming from the results database), and promoted here.
#   here:  bash scripts/gpu_tune.sh build     candidates' modules ($TUNE_BUILD's convbwd-tune, --build-only)
#          into $TUNE_DIR/<suite>-<layout>, then the rows and modules (.so only) packed into
#          .device/tune.tar.xz (what the device tool carries: the objects stay here)
#   there: bash scripts/gpu_tune.sh run       one slice: --resume --no-promote --time-budget per job,
#          rows and logs packed into $OUT/tune.tgz (tune/<job>/results.jsonl, tune-<job>.err)
#   here:  bash scripts/gpu_tune.sh promote DIR   DIR = the run's files_at: rows carried back, then
#          --promote-only writes each job's tuning database, its module and search.png in $TUNE_DIR/<job>
#   here:  bash scripts/gpu_tune.sh pack      the rows promoted so far (and modules) into .device/tune.tar.xz:
#          the next slice resumes from them (jobs of the library's kernels alone need no build step)
# Jobs: TUNE_JOBS="suite:layout[:direction[:dtype]] ..." (default below; a job's direction overrides
# TUNE_DIRECTION, its dtype (f32, f16, bf16) the suite's lines), TUNE_BUDGET candidates per class (6),
# TUNE_SLICE seconds per job in a slice (default: 480 / jobs), TUNE_SEED (1), TUNE_REFINE (0:
# random sampling; 1 once a run's rows came back: the next build mutates the best measured),
# TUNE_DIR (build-gpu/tune), TUNE_BASELINE (anderson2021: Halide's GPU autoscheduler per class,
# built here with the candidates, verified and timed there, a column of the final table),
# TUNE_DIRECTION (bwd_data | bwd_weight: one direction of the suites' lines; default both),
# TUNE_BUILD (the build whose convbwd-tune builds and promotes here: build-gpu).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${TUNE_JOBS:-"resnet50:NCHW vgg16:NCHW mobilenet_v2:NCHW inception_v3:NCHW"}
budget=${TUNE_BUDGET:-6} seed=${TUNE_SEED:-1} refine=${TUNE_REFINE:-0}
tb=${TUNE_BUILD:-build-gpu}
dir=${TUNE_DIR:-$tb/tune}
flags() {
  local d=${3:-${TUNE_DIRECTION:-}} t=${4:-}
  echo "--shapes shapes/$1.txt --layout $2 --target cuda --budget $budget --seed $seed --refine $refine --iters 10${TUNE_BASELINE:+ --baseline $TUNE_BASELINE}${d:+ --direction $d}${t:+ --dtype $t}"
}
# A job "suite:layout[:direction[:dtype]]": its suite, layout, direction (empty: TUNE_DIRECTION),
# dtype (empty: the suite's) and results folder name.
job() { IFS=: read -r s l d t <<< "$1"; name=$s-$l${d:+-$d}${t:+-$t}; }
# The rows and modules of $dir packed into .device/tune.tar.xz (what the device tool carries).
pack() {
  mkdir -p .device "$dir"
  (cd "$dir" && find . -name results.jsonl -o -name '*.so' -path './*/modules/*' | sort | tar -cf - -T - | xz -T2 -6) \
      > .device/tune.tar.xz || exit 1
  ls -la .device/tune.tar.xz
}
case "${1:-}" in
build)
  for j in $jobs; do
    job "$j"
    # shellcheck disable=SC2046
    $tb/autotune/convbwd-tune $(flags "$s" "$l" "$d" "$t") --build-only --resume --results "$dir/$name" || exit 1
  done
  pack ;;
pack) pack ;;
run)
  source scripts/gpu_env.sh  # $bin, $out, cuDNN on LD_LIBRARY_PATH
  work=/tmp/convbwd-tune
  mkdir -p "$work" && python3 -c 'import lzma, sys, tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])' \
      .device/tune.tar.xz "$work"
  n=$(echo $jobs | wc -w)
  slice=${TUNE_SLICE:-$((480 / n))}
  # TUNE_DEADLINE: seconds the whole slice may take (the device tool's limit less the start): a job
  # gets at most what is left less 90 s (its start: the defaults, cuDNN and the references).
  deadline=$(( $(date +%s) + ${TUNE_DEADLINE:-540} ))
  i=0
  mkdir -p "$out/tune"
  for j in $jobs; do
    i=$((i + 1)); job "$j"
    s_left=$(( deadline - $(date +%s) - 90 )); js=$(( slice < s_left ? slice : s_left ))
    [ "$js" -ge 20 ] || { echo "== [$i/$n] $s $l $d $t: no time left"; continue; }
    echo "== [$i/$n] $s $l $d $t (slice ${js}s)"
    # shellcheck disable=SC2046
    timeout $((js + 75)) "$bin/convbwd-tune" $(flags "$s" "$l" "$d" "$t") --resume --no-promote --time-budget "$js" \
        --results "$work/$name" 2> "$out/tune-$name.err" | tail -n 12
    mkdir -p "$out/tune/$name" && cp "$work/$name/results.jsonl" "$out/tune/$name/"
    # One file back (the device tool returns at most 8): the rows and the jobs' logs, after every job.
    (cd "$out" && tar -czf tune.tgz tune tune-*.err)
  done
  (cd "$out" && rm -rf tune tune-*.err) ;;
promote)
  from=${2:?the files_at folder of the run}
  if [ -f "$from/tune.tgz" ]; then x=$(mktemp -d) && tar -xzf "$from/tune.tgz" -C "$x" && from=$x; fi
  for j in $jobs; do
    job "$j"
    f=$(find "$from" -path "*tune/$name/results.jsonl" | head -1)
    [ -n "$f" ] || { echo "no rows for $name in $from"; continue; }
    mkdir -p "$dir/$name" && cp "$f" "$dir/$name/results.jsonl"
    # shellcheck disable=SC2046
    $tb/autotune/convbwd-tune $(flags "$s" "$l" "$d" "$t") --promote-only --results "$dir/$name" | tail -n 16
  done ;;
*) echo "usage: $0 build | pack | run | promote DIR" >&2; exit 2 ;;
esac
