#!/usr/bin/env bash
# External-command trials under mpirun -np 3 run on the remote ranks exactly as locally: the same
# metrics as a local run, and each remote trial's log (written in the host's private trial
# directory) is in runs/NAME/trials/NNN/log.txt on rank 0 when the trial has ended.
source "$(dirname "$0")/lib.sh" "$@"
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
cd "$SRC"  # the command names its script relative to the repository
set_=(--set resources.cpu_slots=1)
"$SWEEP" run configs/external-command.yaml "${set_[@]}" --out "$WORK/local" > "$WORK/local.txt" 2>&1 ||
  { cat "$WORK/local.txt"; fail "local run"; }
timeout 300 mpirun -np 3 "$SWEEP" run configs/external-command.yaml "${set_[@]}" --out "$WORK/mpi" \
  > "$WORK/mpi.txt" 2>&1 || { cat "$WORK/mpi.txt"; fail "mpirun -np 3 run"; }
cd "$WORK"
metrics="select t.number, m.name, m.step, m.value from metrics m join trials t on t.id = m.trial_id
         order by 1, 2, 3"
diff <(q local/external-command/sweep.db "$metrics") <(q mpi/external-command/sweep.db "$metrics") \
  > /dev/null || fail "metrics of the external trials differ from the local run's"
remote=$(q mpi/external-command/sweep.db "select number from trials where device like 'rank%'")
[ -n "$remote" ] || fail "no external trial ran on another rank"
for n in $remote; do
  log=mpi/external-command/trials/$(printf %03d "$n")/log.txt
  [ -s "$log" ] || fail "trial $n ran on another rank but $log is missing or empty"
done
[ -z "$(q mpi/external-command/sweep.db "select number from trials where state <> 'completed'")" ] ||
  fail "not every external trial completed"
echo "PASS: external trials on ranks 1-2 ($(echo $remote)) gave the local metrics; their logs are on rank 0"
