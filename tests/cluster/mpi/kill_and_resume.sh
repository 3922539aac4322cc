#!/usr/bin/env bash
# SIGKILL of a host rank, then of rank 0, in the middle of a sweep: the job ends without a hang,
# the store is whole, and `sweep resume` (alone, then under mpirun) finishes every trial once:
# completed trials are not run again, each epoch's metric is there exactly once.
source "$(dirname "$0")/lib.sh" "$@"
epochs=6
db=runs/killed/sweep.db

remote_trial_reported() {  # a trial running on rank 1 has stored a val_accuracy
  local n
  n=$(q $db "select count(*) from metrics m join trials t on t.id = m.trial_id
    where t.state = 'running' and t.device like 'rank1:%' and m.name = 'val_accuracy'" 2>/dev/null) || true
  [ "${n:-0}" -gt 0 ]
}

kill_rank_mid_sweep() {  # kill_rank_mid_sweep RANK LOG
  timeout 300 mpirun -np 3 "$SWEEP" run killed.yaml --out runs > "$2" 2>&1 &
  local job=$!
  wait_for 120 remote_trial_reported
  local pid
  pid=$(rank_pid "$1") || fail "rank $1 not found"
  kill -9 "$pid"
  local start=$SECONDS
  if wait $job; then fail "the job went on after rank $1 was killed"; fi
  [ $((SECONDS - start)) -lt 60 ] || fail "the job took $((SECONDS - start)) s to end after rank $1 died"
  [ "$(q $db 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after killing rank $1"
}

TRAIN=4096 tiny_config killed 12 $epochs > /dev/null
kill_rank_mid_sweep 1 first.txt
before=$(q $db "select number || '@' || finished_at from trials where state = 'completed'")
"$SWEEP" resume killed --out runs > resume1.txt 2>&1 || { cat resume1.txt; fail "resume alone"; }
check_store $db $epochs
for entry in $before; do
  now=$(q $db "select number || '@' || finished_at from trials where number = ${entry%@*}")
  [ "$now" = "$entry" ] || fail "completed trial ${entry%@*} ran again ($entry, now $now)"
done
echo "killed rank 1: $(wc -w <<<"$before") trials had completed and were kept; resume alone finished the rest"

rm -rf runs
kill_rank_mid_sweep 0 second.txt
timeout 300 mpirun -np 3 "$SWEEP" resume killed --out runs > resume2.txt 2>&1 || { cat resume2.txt; fail "resume under mpirun"; }
check_store $db $epochs
echo "PASS: killed rank 1 and rank 0 mid-sweep; both resumed to $epochs epochs per trial, once each"
