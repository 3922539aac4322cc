#!/usr/bin/env bash
# bench/tabular/run.sh [SWEEP_BINARY] — the built-in MLP against scikit-learn's MLPClassifier /
# MLPRegressor and the same MLP in PyTorch, on the two CSV tables of make_data.py, at one budget
# (classification.yaml, regression.yaml, peers.py), all in one run on this machine. Prints each
# result as a JSON line: accuracy for classification; RMSE, MAE and R^2 for regression.
# Needs python3-sklearn, python3-numpy and python3-torch (scripts/install-deps --bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sweep=${1:-$here/../../build/sweep}
work=$(mktemp -d /tmp/sweep-tabular.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/make_data.py" "$work/data" >/dev/null
for task in classification regression; do
  sed "s|DATA/|$work/data/|" "$here/$task.yaml" > "$work/$task.yaml"
  start=$(date +%s.%N)
  "$sweep" run "$work/$task.yaml" --out "$work/runs" >"$work/$task.log" 2>&1 ||
    { cat "$work/$task.log"; exit 1; }
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  "$sweep" export "tabular-$task" --out "$work/runs" --format json > "$work/$task.json"
  /usr/bin/python3 - "$work/$task.json" "$task" "$seconds" <<'PY'
import json, sys
trial = json.load(open(sys.argv[1]))["trials"][0]
m = trial.get("summary", {}) | trial.get("metrics", {})
keys = ["val_accuracy"] if sys.argv[2] == "classification" else ["val_rmse", "val_mae", "val_r2"]
out = {"peer": "sweep", "task": sys.argv[2]}
for k in keys:
    v = m.get(k, m.get("final_" + k))
    out[k.replace("val_", "")] = v
out["seconds (whole sweep run)"] = float(sys.argv[3])
print(json.dumps(out))
PY
done
/usr/bin/python3 "$here/peers.py" "$work/data"
