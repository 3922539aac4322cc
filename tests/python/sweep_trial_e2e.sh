#!/usr/bin/env bash
# The Python helper under `sweep run` (standard library only, so it runs wherever python3 does):
# a command trial finds sweep_trial on PYTHONPATH, reads its parameters with their types (a
# dotted name both ways) and every SWEEP_* variable, writes into its trial directory, and the
# lines log() prints are stored as metrics; a NaN loss from log() ends a trial `diverged`. Also:
# every variable scheduler/trial_environment.h names is one sweep_trial.py reads.
#   sweep_trial_e2e.sh SWEEP_BIN SOURCE_DIR
set -euo pipefail
SWEEP=$(readlink -f "$1")
SRC=$(readlink -f "$2")
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not found"; exit 77; }

names=$(grep -oE '"SWEEP_[A-Z_]+"' "$SRC/scheduler/trial_environment.h" | tr -d '"')
[ -n "$names" ] || fail "no variable names found in scheduler/trial_environment.h"
for name in $names; do
  grep -q "\"$name\"" "$SRC/python/sweep_trial.py" || fail "sweep_trial.py does not read $name"
done

WORK=$(mktemp -d /tmp/sweep-python-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
cat > check.py <<'PY'
import os, time
import sweep_trial

p = sweep_trial.params()
assert p["optim.lr"] == 0.01 and p["optim"]["lr"] == 0.01, p
assert type(p["width"]) is int and p["width"] == 32, p
assert p["flag"] is True and p["mode"] in ("ok", "diverge"), p
assert sweep_trial.sweep_name() == "helper"
assert sweep_trial.trial_number() == int(os.environ["SWEEP_TRIAL_NUMBER"])
assert sweep_trial.trial_id() >= 0 and sweep_trial.seed() == 5
assert sweep_trial.device().startswith("cpu:"), sweep_trial.device()
assert sweep_trial.trial_name(), "no trial name"
with open(sweep_trial.checkpoint_path("state.txt"), "w") as f:
    f.write(p["mode"])
print("checked", sorted(p))
sweep_trial.log(epoch=1, step=10, val_accuracy=0.5 + 0.25 * sweep_trial.trial_number())
if p["mode"] == "diverge":
    sweep_trial.log(epoch=2, step=20, train_loss=float("nan"))
    time.sleep(60)  # sweep stops the program when the loss is NaN
PY
cat > helper.yaml <<'YAML'
name: helper
trainer: {command: "python3 check.py", metric_timeout: 60}
training: {seed: 5}
sweep:
  method: grid
  metric: {name: val_accuracy, goal: maximize}
  parameters:
    optim.lr: {value: 0.01}
    width: {value: 32}
    mode: {values: [ok, diverge]}
    flag: {value: true}
resources: {execution: cpu, cpu_slots: 2}
YAML
start=$SECONDS
"$SWEEP" run helper.yaml > run.txt 2>&1 || true  # exit 1: a trial diverged
db=runs/helper/sweep.db
q() { sqlite3 -batch "$db" "$1"; }
[ "$(q "select number || ':' || state from trials order by number" | tr '\n' ' ')" = "0:completed 1:diverged " ] ||
  { cat run.txt runs/helper/trials/*/log.txt; fail "trial states: $(q 'select number, state, message from trials')"; }
[ $((SECONDS - start)) -lt 30 ] || fail "the diverged trial was not stopped at once ($((SECONDS - start)) s)"
[ "$(q "select t.number || ':' || m.step || ':' || cast(m.epoch as integer) || ':' || m.value from metrics m join trials t
         on t.id = m.trial_id where m.name = 'val_accuracy' order by 1" | tr '\n' ' ')" = "0:10:1:0.5 1:10:1:0.75 " ] ||
  fail "val_accuracy rows: $(q "select * from metrics where name = 'val_accuracy'")"
for n in 0 1; do
  dir=runs/helper/trials/00$n
  grep -q "^checked " "$dir/log.txt" || { cat "$dir/log.txt"; fail "trial $n's program failed its checks"; }
  [ -f "$dir/state.txt" ] || fail "trial $n wrote nothing into SWEEP_TRIAL_DIR ($dir)"
done
echo "PASS: sweep_trial read every parameter and variable; log() lines stored; NaN loss → diverged"
