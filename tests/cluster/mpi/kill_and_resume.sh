#!/usr/bin/env bash
# SIGKILL of a host rank, then of rank 0, in the middle of a sweep: the job ends without a hang,
# the store is whole, and `sweep resume` (alone, then under mpirun) finishes every trial once:
# completed trials are not run again, each epoch's metric is there exactly once.
source "$(dirname "$0")/lib.sh" "$@"
epochs=6
db=runs/killed/sweep.db

# A trial running on rank 1 has stored two epochs' val_accuracy: its epoch-1 checkpoint, sent
# before the epoch-2 metrics, is then on rank 0. Sets `remote` to its number.
remote_trial_reported() {
  remote=$(q $db "select t.number from metrics m join trials t on t.id = m.trial_id
    where t.state = 'running' and t.device like 'rank1:%' and m.name = 'val_accuracy'
    group by t.id having count(*) >= 2 limit 1" 2>/dev/null) || true
  [ -n "$remote" ]
}

kill_rank_mid_sweep() {  # kill_rank_mid_sweep RANK LOG
  timeout 300 mpirun -np 3 "$SWEEP" run killed.yaml --out runs > "$2" 2>&1 &
  local job=$! pid=""
  wait_for 60 'pid=$(rank_pid '"$1"')'  # found first, so the kill follows the condition at once
  wait_for 120 remote_trial_reported
  kill -9 "$pid"
  local start=$SECONDS
  if wait $job; then fail "the job went on after rank $1 was killed"; fi
  [ $((SECONDS - start)) -lt 60 ] || fail "the job took $((SECONDS - start)) s to end after rank $1 died"
  [ "$(q $db 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after killing rank $1"
}

TRAIN=16384 tiny_config killed 12 $epochs > /dev/null
kill_rank_mid_sweep 1 first.txt
trial_dir=runs/killed/trials/$(printf %03d "$remote")
[ "$(q $db "select state from trials where number = $remote")" = running ] ||
  fail "trial $remote ended before rank 1 was killed (the test's timing, not sweep: slow its epochs)"
[ -s $trial_dir/checkpoint.bin ] || fail "trial $remote's checkpoint from rank 1 is not on rank 0"
before=$(q $db "select number || '@' || finished_at from trials where state = 'completed'")
"$SWEEP" resume killed --out runs > resume1.txt 2>&1 || { cat resume1.txt; fail "resume alone"; }
check_store $db $epochs
grep -q "resuming from" $trial_dir/log.txt || { cat $trial_dir/log.txt; q $db "select number, state, device, attempts from trials"; fail "trial $remote did not resume from its checkpoint"; }
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
