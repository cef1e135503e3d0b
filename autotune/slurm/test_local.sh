#!/bin/bash
# The Slurm route tested on one machine: installs Debian's slurm-wlm and munge (pinned), starts a
# single-node cluster (local_cluster.sh), runs a 2-task array of convbwd-tune on the host target
# (autotune/slurm/run.sh) and a single process over the same seed, and checks that the merged
# shards hold the same units with the same statuses.
#   autotune/slurm/test_local.sh [BUILD_DIR]        (as root; default build/)
set -euo pipefail
S=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$S/build}" && pwd)
if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        slurm-wlm=22.05.8-4+deb12u3 munge=0.5.15-2+deb12u1
fi
T=$(mktemp -d /tmp/convbwd_slurm.XXXXXX)
chmod 755 "$T"
bash "$S/autotune/slurm/local_cluster.sh" start "$T/cluster"
trap 'bash "$S/autotune/slurm/local_cluster.sh" stop "$T/cluster"' EXIT
export SLURM_CONF=$T/cluster/slurm.conf CONVBWD_TUNE=$B/autotune/convbwd-tune
FLAGS=(--shapes "$S/test/autotune/tiny.txt" --target host --budget 6 --iters 3 --seed 11 --refine 0)
echo "== a 2-task Slurm array"
bash "$S/autotune/slurm/run.sh" 2 "$T/array" "${FLAGS[@]}"
ls "$T/array"
echo "== one process, same seed"
"$CONVBWD_TUNE" "${FLAGS[@]}" --results "$T/one" --jobs 2 > /dev/null
python3 "$S/test/autotune/check.py" complete "$T/array/merged" 6 2
python3 "$S/test/autotune/check.py" same "$T/array/merged" "$T/one"
echo "slurm: the merged 2-task array equals one process ($T)"
