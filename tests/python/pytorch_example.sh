#!/usr/bin/env bash
# examples/pytorch/sweep.yaml for real: three learning rates of train_fmnist.py (PyTorch, an MLP
# on 6,000 Fashion-MNIST images), two epochs here. Every trial completes with val_accuracy,
# val_loss and train_loss stored once per epoch, trained with its own learning rate, and leaves
# model.pt in its directory; the best reaches 0.75 (about 0.83 is usual).
# Skips (77) without a python3 that imports torch (Debian: python3-torch) or without the data.
#   pytorch_example.sh SWEEP_BIN SOURCE_DIR
set -euo pipefail
SWEEP=$(readlink -f "$1")
SRC=$(readlink -f "$2")
EPOCHS=2
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not found"; exit 77; }
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
  { echo "SKIP: no Fashion-MNIST in /usr/share/datasets (apt-get install dataset-fashion-mnist)"; exit 77; }
# The command says `python3`: the first one on PATH with torch, else Debian's (python3-torch),
# which then goes first on PATH.
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import torch" 2>/dev/null; then
    python=$(command -v "$candidate"); break
  fi
done
[ -n "$python" ] || { echo "SKIP: no python3 here imports torch (apt-get install python3-torch)"; exit 77; }
export PATH="$(dirname "$python"):$PATH"

WORK=$(mktemp -d /tmp/sweep-pytorch-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$SRC"  # the command names its script relative to the repository
start=$SECONDS
"$SWEEP" run examples/pytorch/sweep.yaml --out "$WORK" --set resources.execution=cpu \
  --set sweep.parameters.epochs.value=$EPOCHS > "$WORK/run.txt" 2>&1 ||
  { cat "$WORK/run.txt" "$WORK"/pytorch-fmnist/trials/*/log.txt; fail "sweep run examples/pytorch/sweep.yaml"; }
seconds=$((SECONDS - start))
db=$WORK/pytorch-fmnist/sweep.db
q() { sqlite3 -batch "$db" "$1"; }
[ "$(q "select count(*) from trials where state = 'completed'")" = 3 ] ||
  fail "not 3 completed trials: $(q 'select number, state, message from trials')"
for name in val_accuracy val_loss train_loss; do
  bad=$(q "select t.number || ' has ' || count(distinct m.epoch) || '/' || count(m.step) from trials t
           left join metrics m on m.trial_id = t.id and m.name = '$name'
           group by t.id having count(distinct m.epoch) <> $EPOCHS or count(m.step) <> $EPOCHS")
  [ -z "$bad" ] || fail "$name should be stored once for each of $EPOCHS epochs: trial $bad"
done
for n in 0 1 2; do
  lr=$(echo "0.01 0.03 0.1" | cut -d' ' -f$((n + 1)))
  dir=$WORK/pytorch-fmnist/trials/00$n
  grep -q "'learning_rate': $lr," "$dir/log.txt" || { cat "$dir/log.txt"; fail "trial $n did not train with learning_rate $lr"; }
  [ -s "$dir/model.pt" ] || fail "trial $n wrote no $dir/model.pt"
done
best=$(q "select max(value) from metrics where name = 'val_accuracy'")
awk -v b="$best" 'BEGIN { exit !(b > 0.75) }' || fail "best val_accuracy $best is not above 0.75"
echo "PASS: 3 PyTorch trials, $EPOCHS epochs each, best val_accuracy $best, in $seconds s"
