#!/usr/bin/env bash
# A fused sweep on a GPU, treated as a hostile user would, each run compared trial by trial with
# an uninterrupted one (compare_trials.py: final accuracies, every logged value, doubled points).
# The grid is bench/gpu/sweep64.yaml with training.deterministic, so "equal" means bit for bit.
#  1. a GPU that is not there, and no visible GPU: one message, exit 2, nothing run;
#  2. SIGKILL at 5 s (checkpoints every epoch), then `sweep resume DIR/`;
#  3. SIGINT at 3 s (mid epoch 1: each member checkpoints where it is), then `sweep resume`;
#  4. two fused sweeps at once on the one GPU;
#  5. a fused sweep started while another process holds 97% of the GPU's free memory (PyTorch).
#   bench/gpu/fused_reliability.sh [OUT_DIR]   (from the repository root; source .gpu/env.sh first)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-/tmp/sweep-fused-reliability}"
rm -rf "$out/runs"
mkdir -p "$out/runs"
data="${DATA:-$root/.gpu/data}"
python="${PYTHON:-python3}"
runs="$out/runs"
grid=("$root/bench/gpu/sweep64.yaml" --set data.path="$data" --set training.deterministic=true)
stamp() { date +%s.%N; }
elapsed() { "$python" -c "print(f'{$2 - $1:.2f}')"; }
compare() { "$python" "$root/bench/gpu/compare_trials.py" "$1" "$runs/ref/sweep.db" "$runs/$2/sweep.db"; }
states() { sweep show "$runs/$1" | awk 'NR > 2 { print $2 }' | sort | uniq -c | tr -s ' \n' ' '; }

echo "== 1. no such GPU"
sweep run "$root/configs/quickstart.yaml" --set data.path="$data" --set 'resources.gpus=[7]' \
  --out "$runs" 2>&1 | tail -2
CUDA_VISIBLE_DEVICES= sweep run "$root/configs/quickstart.yaml" --set data.path="$data" \
  --set resources.execution=gpu --out "$runs" 2>&1 | tail -2
echo "== the reference (after a run that warms the tuning cache)"
sweep run "${grid[@]}" --out "$runs" --name warm > "$out/warm.log" 2>&1
t0=$(stamp); sweep run "${grid[@]}" --out "$runs" --name ref > "$out/ref.log" 2>&1; rc=$?
echo "RESULT reference rc=$rc seconds=$(elapsed "$t0" "$(stamp)") $(grep '^best:' "$out/ref.log")"
echo "== 2. SIGKILL at 5 s, resume by directory"
sweep run "${grid[@]}" --set training.checkpoint.every_epochs=1 --out "$runs" --name kill \
  > "$out/kill.log" 2>&1 &
pid=$!; sleep 5; kill -9 "$pid"; wait "$pid"; echo "killed: exit $?; trials: $(states kill)"
sweep resume "$runs/kill/" > "$out/kill-resume.log" 2>&1; echo "resume: exit $?"
compare sigkill-resume kill
echo "== 3. SIGINT at 3 s, resume"
sweep run "${grid[@]}" --out "$runs" --name int > "$out/int.log" 2>&1 &
pid=$!; sleep 3; kill -INT "$pid"; wait "$pid"; echo "interrupted: exit $?; trials: $(states int)"
sweep resume int --out "$runs" > "$out/int-resume.log" 2>&1; echo "resume: exit $?"
compare sigint-resume int
echo "== 4. two fused sweeps at once"
t0=$(stamp)
sweep run "${grid[@]}" --out "$runs" --name two1 > "$out/two1.log" 2>&1 & p1=$!
sweep run "${grid[@]}" --out "$runs" --name two2 > "$out/two2.log" 2>&1 & p2=$!
wait "$p1"; r1=$?; wait "$p2"; r2=$?
echo "RESULT two-at-once rc=$r1,$r2 seconds=$(elapsed "$t0" "$(stamp)")"
compare two-at-once-1 two1
compare two-at-once-2 two2
echo "== 5. another process holds most of the GPU's memory"
"$python" - <<'PY' &
import time
import torch
held = torch.empty(int(torch.cuda.mem_get_info()[0] * 0.97), dtype=torch.uint8, device="cuda")
print(f"holding {held.numel() >> 20} MiB", flush=True)
time.sleep(25)
PY
holder=$!; sleep 6
t0=$(stamp); sweep run "${grid[@]}" --out "$runs" --name starved > "$out/starved.log" 2>&1; rc=$?
echo "RESULT starved rc=$rc seconds=$(elapsed "$t0" "$(stamp)")"
compare starved starved
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
