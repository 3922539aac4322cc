#!/usr/bin/env bash
# A queue worker under mpirun: rank 0 claims the queued jobs and runs each sweep over every rank's
# slots; the worker exits once the queue stays empty, and the job's trials ran on all ranks.
source "$(dirname "$0")/lib.sh" "$@"
TRAIN=1024 tiny_config queued 6 2 > /dev/null
"$SWEEP" submit queued.yaml --queue q.db --out "$WORK/runs" --no-worker > submit.txt 2>&1 ||
  { cat submit.txt; fail "submit"; }
timeout 300 mpirun -np 3 "$SWEEP" worker --queue q.db --idle-exit 2 > worker.txt 2>&1 ||
  { cat worker.txt; fail "mpirun -np 3 sweep worker"; }
"$SWEEP" status --queue q.db > status.txt 2>&1 || true
db=runs/queued/sweep.db
[ -f $db ] || { cat worker.txt status.txt; fail "the job's sweep was not run"; }
check_store $db 2
devices=$(q $db "select group_concat(distinct device) from trials")
for d in rank1:cpu:0 rank2:cpu:0; do
  [[ ",$devices," == *",$d,"* ]] || { cat worker.txt; fail "no trial ran on $d (devices: $devices)"; }
done
grep -qi "done" status.txt || { cat status.txt; fail "the job is not done"; }
echo "PASS: mpirun -np 3 sweep worker ran the queued sweep on $devices"
