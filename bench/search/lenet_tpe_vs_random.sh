#!/usr/bin/env bash
# tpe vs random search on a real training problem (issue: "a real check on the CPU"):
# bench/search/lenet_tpe.yaml, 5 sweep seeds per method, each sweep 20 LeNet trials (2 at a time).
# Prints each sweep's best val_accuracy and both medians.
#   bench/search/lenet_tpe_vs_random.sh build/sweep [SEEDS]
set -euo pipefail
sweep=$(realpath "$1"); seeds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d /tmp/sweep-lenet-tpe-XXXX)
trap 'rm -rf "$out"' EXIT
for method in tpe random; do
  for seed in $(seq 1 "$seeds"); do
    name="lenet-$method-$seed"
    start=$(date +%s)
    "$sweep" run "$here/lenet_tpe.yaml" --name "$name" --set "sweep.method=$method" \
      --set "sweep.seed=$seed" --set "output.dir=$out" > "$out/$name.log" 2>&1
    best=$(sqlite3 "$out/$name/sweep.db" "SELECT MAX(m.value) FROM metrics m JOIN trials t ON \
      t.id = m.trial_id WHERE m.name = 'val_accuracy' AND m.value_kind = 'finite'")
    echo "RESULT method=$method seed=$seed best_val_accuracy=$best seconds=$(( $(date +%s) - start ))"
  done
done | tee "$out/results.txt"
python3 - "$out/results.txt" <<'PY'
import statistics, sys
best = {}
for line in open(sys.argv[1]):
    f = dict(w.split("=", 1) for w in line.split()[1:])
    best.setdefault(f["method"], []).append(float(f["best_val_accuracy"]))
for method, values in best.items():
    print(f"{method:6s} median best val_accuracy {statistics.median(values):.4f} "
          f"over {len(values)} seeds: {' '.join(f'{v:.4f}' for v in values)}")
PY
