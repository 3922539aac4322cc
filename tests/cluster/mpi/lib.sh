# lib.sh — shared by the tests that run `sweep` under a real `mpirun` on localhost.
#   source lib.sh SWEEP_BIN SOURCE_DIR   (then: tiny_config, wait_for, rank_pid, q, check_store)
# Each test works in its own temporary directory, removed at exit with every process it started.
# Exit 77 (ctest's SKIP_RETURN_CODE) when mpirun or an MPI build of sweep is not there.
set -euo pipefail
SWEEP=$(readlink -f "$1")
SRC=$(readlink -f "${2:-.}")
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (apt-get install openmpi-bin)"; exit 77; }
"$SWEEP" version | grep -q "MPI: yes" || { echo "SKIP: this sweep was built without MPI"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not found"; exit 77; }

# Open MPI as root on a 2-core machine, more ranks than cores, loopback only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export SWEEP_TEST_MARK="mpi-test-$$"  # inherited by every rank: how rank_pid finds ours

WORK=$(mktemp -d /tmp/sweep-mpi-test.XXXXXX)
cd "$WORK"
cleanup() {
  for pid in $(our_pids); do kill -9 "$pid" 2>/dev/null || true; done
  kill -9 $(jobs -p) 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The scans below use bash builtins only (a glob, `test -ef`, `mapfile`): no process is started
# per process looked at, so a scan takes about as long on a machine running thousands of
# processes as on an idle one, and never outlasts what it is looking for.

# has_vars FILE VAR=VALUE...: the environment file (/proc/PID/environ) holds every VAR=VALUE given.
has_vars() {
  local file=$1 want var found
  shift
  local -a vars
  mapfile -d '' -t vars 2>/dev/null < "$file" || return 1
  for want in "$@"; do
    found=0
    for var in "${vars[@]}"; do [ "$var" = "$want" ] && { found=1; break; }; done
    [ $found = 1 ] || return 1
  done
}

# Every process of this test (mpirun's ranks carry SWEEP_TEST_MARK in their environment).
our_pids() {
  local env pid
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/}; pid=${pid%/environ}
    [ "$pid" != "$$" ] && [ "$pid" != "$BASHPID" ] || continue
    has_vars "$env" "SWEEP_TEST_MARK=$SWEEP_TEST_MARK" && echo "$pid"
  done
  return 0
}

# The pid of rank N's sweep process. Look it up before waiting for the moment to signal it (as
# kill_and_resume.sh and silent_rank.sh do), so the signal follows that moment at once.
rank_pid() {
  local env pid
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/}; pid=${pid%/environ}
    [ "/proc/$pid/exe" -ef "$SWEEP" ] || continue  # stat through the link: only sweep processes
    has_vars "$env" "SWEEP_TEST_MARK=$SWEEP_TEST_MARK" "OMPI_COMM_WORLD_RANK=$1" &&
      { echo "$pid"; return 0; }
  done
  return 1
}

# tiny_config NAME TRIALS EPOCHS [extra YAML lines]: an MLP on synthetic data, CPU, one slot per
# rank, a checkpoint every epoch; an epoch of TRAIN images takes a fraction of a second. RATES
# (a YAML list's items) replaces the TRIALS learning rates.
tiny_config() {
  local name=$1 trials=$2 epochs=$3 extra=${4:-} train=${TRAIN:-2048} rates=""
  for i in $(seq 0 $((trials - 1))); do rates+="${rates:+, }0.0$((2 + i % 8))$i"; done
  rates=${RATES:-$rates}
  cat > "$name.yaml" <<YAML
name: $name
data: {dataset: synthetic, synthetic: {train_size: $train, test_size: 256, seed: 3}}
model: {preset: mlp, hidden: [64]}
training: {optimizer: sgdm, batch_size: 32, epochs: $epochs, checkpoint: {every_epochs: 1}, seed: 1}
sweep:
  method: grid
  metric: {name: val_accuracy, goal: maximize}
  parameters:
    training.learning_rate: {values: [$rates]}
$extra
resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}
YAML
  echo "$name.yaml"
}

q() { sqlite3 -batch "$1" "$2"; }  # q DB SQL

# wait_for SECONDS 'shell condition': polls every 0.1 s; fails the test on timeout.
wait_for() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until eval "$@"; do
    [ $SECONDS -lt $end ] || fail "timed out after ${limit}s waiting for: $*"
    sleep 0.1
  done
}

# check_store DB: the database is whole, and every trial of it ran once to completion with each
# epoch's val_accuracy exactly once (EPOCHS points).
check_store() {
  local db=$1 epochs=$2
  [ "$(q "$db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check of $db failed"
  local bad
  bad=$(q "$db" "select number || ':' || state from trials where state <> 'completed'")
  [ -z "$bad" ] || fail "trials not completed: $bad"
  bad=$(q "$db" "select t.number || ' has ' || count(m.step) from trials t left join metrics m
                   on m.trial_id = t.id and m.name = 'val_accuracy' and m.epoch >= 1
                   group by t.id having count(m.step) <> $epochs")
  [ -z "$bad" ] || fail "val_accuracy points per trial should be $epochs: $bad"
}
