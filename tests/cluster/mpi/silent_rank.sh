#!/usr/bin/env bash
# A rank that stops answering (SIGSTOP: alive, silent) is noticed within SWEEP_RANK_TIMEOUT: the
# sweep stops with a message naming it and ends the MPI job instead of hanging; resume finishes it.
source "$(dirname "$0")/lib.sh" "$@"
epochs=6
config=$(TRAIN=4096 tiny_config silent 6 $epochs)
db=runs/silent/sweep.db
SWEEP_RANK_TIMEOUT=3 timeout 300 mpirun -np 3 "$SWEEP" run "$config" --out runs > run.txt 2>&1 &
job=$!
# Rank 2's process is found first: the STOP then follows the store's word that a trial runs there
# at once, however long a look through the machine's processes takes.
pid=""
wait_for 60 'pid=$(rank_pid 2)'
running_on_rank2() {
  local n
  n=$(q $db "select count(*) from trials where state = 'running' and device like 'rank2:%'" 2>/dev/null) || true
  [ "${n:-0}" -gt 0 ]
}
wait_for 120 running_on_rank2
kill -STOP "$pid"
start=$SECONDS
if wait $job; then cat run.txt; fail "the job ended well with a silent rank"; fi
took=$((SECONDS - start))
[ $took -lt 45 ] || fail "noticing the silent rank took $took s"
grep -q "rank 2 (.*) stopped answering for 3 s" run.txt || { cat run.txt; fail "no message names the silent rank"; }
kill -9 "$pid" 2>/dev/null || true
[ "$(q $db 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
"$SWEEP" resume silent --out runs > resume.txt 2>&1 || { cat resume.txt; fail "resume"; }
check_store $db $epochs
echo "PASS: the silent rank was named after $took s; resume completed every trial"
