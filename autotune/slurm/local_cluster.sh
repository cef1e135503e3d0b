#!/bin/bash
# A single-node Slurm cluster on this machine (as root, no systemd): munged, slurmctld and slurmd
# on localhost, configured in a folder of their own. For testing autotune/slurm/ here.
#   autotune/slurm/local_cluster.sh start DIR    (then: export SLURM_CONF=DIR/slurm.conf)
#   autotune/slurm/local_cluster.sh stop DIR
# Needs Debian's slurm-wlm and munge (autotune/slurm/test_local.sh installs them, pinned).
set -euo pipefail
CMD=$1 D=$2
mkdir -p "$D"
D=$(cd "$D" && pwd)
if [ "$CMD" = stop ]; then
    for p in slurmd slurmctld munged; do
        [ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null || true
    done
    exit 0
fi
[ "$CMD" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
mkdir -p "$D/state" "$D/spool" "$D/munge"
# munge: a key of our own, a socket in DIR (the system's may be absent or another's).
[ -f "$D/munge/munge.key" ] || dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$D/munge"
chmod 400 "$D/munge/munge.key"
SOCK=$D/munge/munge.socket
munged --force --key-file="$D/munge/munge.key" --socket="$SOCK" --pid-file="$D/munged.pid" \
    --log-file="$D/munged.log" --seed-file="$D/munge/seed"
HOST=$(hostname -s)
CPUS=$(nproc)
cat > "$D/slurm.conf" <<EOC
ClusterName=convbwd
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SlurmctldPort=16817
SlurmdPort=16818
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOC
export SLURM_CONF=$D/slurm.conf
slurmctld -f "$D/slurm.conf"
slurmd -f "$D/slurm.conf"
for _ in $(seq 60); do
    if sinfo -h -o %T 2>/dev/null | grep -q idle; then
        echo "slurm: $(sinfo -h -o '%P %D %T %c')  (export SLURM_CONF=$D/slurm.conf)"
        exit 0
    fi
    sleep 1
done
echo "slurm did not come up; logs in $D" >&2
tail -5 "$D/slurmctld.log" "$D/slurmd.log" >&2 || true
exit 1
