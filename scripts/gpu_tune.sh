#!/usr/bin/env bash
# convbwd-tune on the GPU machine, which has no compiler: candidates are built here, run there in
# slices of under 10 minutes (resuming from the results database), and promoted here.
#   here:  bash scripts/gpu_tune.sh build     candidates' modules (build-gpu's convbwd-tune, --build-only)
#   there: bash scripts/gpu_tune.sh run       one slice: --resume --time-budget, rows copied to $OUT/tune
#   here:  bash scripts/gpu_tune.sh promote DIR   DIR = the run's files_at: rows carried back, then
#          --promote-only writes each job's tuning database (and its module) into .device/tune/JOB
# Jobs: TUNE_JOBS="suite:layout ..." (default below), TUNE_BUDGET candidates per class (8),
# TUNE_SLICE seconds per job in a slice (default: 480 / jobs), TUNE_SEED (1).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${TUNE_JOBS:-"vgg16:NCHW unet:NCHW mobilenet_v2:NHWC inception_v3:NHWC"}
budget=${TUNE_BUDGET:-8} seed=${TUNE_SEED:-1}
flags() { echo "--shapes shapes/$1.txt --layout $2 --target cuda --budget $budget --seed $seed --refine 0 --iters 10"; }
case "${1:-}" in
build)
  for j in $jobs; do
    s=${j%%:*} l=${j##*:}
    # shellcheck disable=SC2046
    build-gpu/autotune/convbwd-tune $(flags "$s" "$l") --build-only --resume --results ".device/tune/$s-$l" || exit 1
  done
  du -sh .device/tune ;;
run)
  source scripts/gpu_env.sh  # $bin, $out, cuDNN on LD_LIBRARY_PATH
  n=$(echo $jobs | wc -w)
  slice=${TUNE_SLICE:-$((480 / n))}
  i=0
  for j in $jobs; do
    i=$((i + 1)); s=${j%%:*} l=${j##*:}
    echo "== [$i/$n] $s $l (slice ${slice}s)"
    # shellcheck disable=SC2046
    timeout $((slice + 60)) "$bin/convbwd-tune" $(flags "$s" "$l") --resume --no-promote --time-budget "$slice" \
        --results ".device/tune/$s-$l" 2> "$out/tune-$s-$l.err" | tail -n 12
    mkdir -p "$out/tune/$s-$l" && cp ".device/tune/$s-$l/results.jsonl" "$out/tune/$s-$l/"
  done ;;
promote)
  from=${2:?the run's files_at folder}
  for j in $jobs; do
    s=${j%%:*} l=${j##*:}
    f=$(find "$from" -path "*tune/$s-$l/results.jsonl" | head -1)
    [ -n "$f" ] || { echo "no rows for $s-$l in $from"; continue; }
    cp "$f" ".device/tune/$s-$l/results.jsonl"
    # shellcheck disable=SC2046
    build-gpu/autotune/convbwd-tune $(flags "$s" "$l") --promote-only --results ".device/tune/$s-$l" | tail -n 14
  done ;;
*) echo "usage: $0 build | run | promote DIR" >&2; exit 2 ;;
esac
