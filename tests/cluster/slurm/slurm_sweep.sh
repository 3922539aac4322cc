#!/usr/bin/env bash
# A sweep through Slurm for real, on one host: this script starts munged (if none answers),
# slurmctld and slurmd with a config of its own in a temporary directory (SLURM_CONF), submits
# examples/slurm/sweep.sbatch's way of running (`sbatch --wait` of `srun --mpi=pmix -n 3 sweep run`),
# checks that trials ran on all three ranks, and stops exactly what it started.
# Skips (77) where Slurm, munge, root or an MPI build of sweep is missing.
#   slurm_sweep.sh SWEEP_BIN SOURCE_DIR
set -euo pipefail
SWEEP=$(readlink -f "$1")
for tool in slurmctld slurmd sbatch srun sinfo munge unmunge; do
  command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] ||
    { echo "SKIP: $tool not found (apt-get install slurm-wlm)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: starting slurmd needs root"; exit 77; }
"$SWEEP" version | grep -q "MPI: yes" || { echo "SKIP: this sweep was built without MPI"; exit 77; }
[ -f /etc/munge/munge.key ] || { echo "SKIP: no /etc/munge/munge.key"; exit 77; }
export PATH="$PATH:/usr/sbin"

WORK=$(mktemp -d /tmp/sweep-slurm-test.XXXXXX)
chmod 755 "$WORK"
started=()
cleanup() {
  for pidfile in "$WORK/slurmd.pid" "$WORK/slurmctld.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 1
  for pidfile in "$WORK/slurmd.pid" "$WORK/slurmctld.pid"; do
    [ -f "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "$WORK"/*.log; do echo "== $log"; tail -20 "$log"; done >&2
  exit 1
}

if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge
  # munged runs as its own user, so its pid file goes where that user may write.
  pidfile=/run/munge/sweep-test-munged.$$.pid
  runuser -u munge -- /usr/sbin/munged --pid-file="$pidfile" ||
    { echo "SKIP: munged (Slurm's authentication) does not start on this machine"; exit 77; }
  for _ in $(seq 50); do [ -s "$pidfile" ] && break; sleep 0.1; done
  started+=("$(cat "$pidfile")")
  munge -n | unmunge >/dev/null || fail "munge does not answer"
fi

host=$(hostname -s)
port=$((16800 + RANDOM % 1000))
mkdir -p "$WORK/state" "$WORK/spool"
cat > "$WORK/slurm.conf" <<CONF
ClusterName=sweeptest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
NodeName=$host CPUs=8 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$WORK/slurm.conf"
# Where Slurm itself cannot run (a container without the privileges slurmd wants), say why and
# skip: what is tested here is sweep under Slurm, not Slurm.
cannot_start() {
  echo "SKIP: $1 on this machine; its log:"
  tail -5 "$WORK/$2.log" 2>/dev/null || true
  exit 77
}
slurmctld -f "$SLURM_CONF" || cannot_start "slurmctld does not start" slurmctld
slurmd -f "$SLURM_CONF" || cannot_start "slurmd does not start" slurmd
end=$((SECONDS + 60))
until sinfo -h -o %t 2>/dev/null | grep -qx idle; do
  [ $SECONDS -lt $end ] || cannot_start "the Slurm node did not become idle within 60 s" slurmd
  sleep 0.5
done

cd "$WORK"
cat > tiny.yaml <<YAML
name: tiny
data: {dataset: synthetic, synthetic: {train_size: 512, test_size: 128, seed: 3}}
model: {preset: mlp, hidden: [16]}
training: {optimizer: sgdm, batch_size: 32, epochs: 2, seed: 1}
sweep:
  method: grid
  metric: {name: val_accuracy, goal: maximize}
  parameters:
    training.learning_rate: {values: [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]}
resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}
YAML
cat > sweep.sbatch <<JOB
#!/bin/bash
#SBATCH --ntasks=3
#SBATCH --output=$WORK/job.log
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
srun --mpi=pmix -n 3 $SWEEP run tiny.yaml --out $WORK/runs
JOB
timeout 300 sbatch --wait sweep.sbatch > sbatch.txt 2>&1 || { cat sbatch.txt job.log; fail "sbatch --wait"; }
db=$WORK/runs/tiny/sweep.db
[ -f "$db" ] || { cat job.log; fail "no sweep database"; }
states=$(sqlite3 "$db" "select group_concat(state) from (select distinct state from trials)")
[ "$states" = completed ] || fail "trial states: $states"
devices=$(sqlite3 "$db" "select group_concat(distinct device) from trials")
for d in rank1:cpu:0 rank2:cpu:0; do
  [[ ",$devices," == *",$d,"* ]] || { cat job.log; fail "no trial ran on $d (devices: $devices)"; }
done
echo "PASS: sbatch --wait / srun --mpi=pmix -n 3: 6 trials completed on $devices"
