#!/bin/bash
# Runs a convbwd-tune job as a Slurm job array of N shards over a shared results folder, waits,
# merges the shards' rows into RESULTS/merged/results.jsonl, and writes the tuning database (a last
# --resume run, which finds every unit done and only promotes).
#   autotune/slurm/run.sh N RESULTS_DIR <convbwd-tune flags...>     (e.g. --shapes F --target host)
# Environment: CONVBWD_TUNE (the binary), SBATCH_ARGS (extra sbatch flags: partition, --gres=gpu:1).
set -euo pipefail
N=$1 RESULTS=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
: "${CONVBWD_TUNE:=convbwd-tune}"
export CONVBWD_TUNE
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
# shellcheck disable=SC2086
sbatch --wait --array=0-$((N - 1)) --chdir="$RESULTS" ${SBATCH_ARGS:-} "$HERE/tune_array.sbatch" "$RESULTS" "$@"
mkdir -p "$RESULTS/merged"
"$CONVBWD_TUNE" --merge "$RESULTS/merged/results.jsonl" "$RESULTS"
"$CONVBWD_TUNE" "$@" --results "$RESULTS" --resume
