#!/usr/bin/env bash
# Fused arrays on one GPU against PyTorch, in one call (the bundle: /work/shared/gpu/README.md):
#  1. bench_gpu_array: summed images/s of K LeNets fused, K = 1 .. 64;
#  2. torch_vmap.py: PyTorch's route to K models at once (stack_module_state + vmap(grad)), eager
#     and CUDA-graph;
#  3. the 64-trial grid (sweep64.yaml) timed whole with `sweep run`: fuse auto, fuse off, and
#     fuse off with trials_per_gpu 4; then PyTorch one after another (the first 8, extrapolated)
#     and as 8 processes at once (SKIP_TORCH_SWEEP=1 skips these two);
#  4. 16 trials of MATLAB's conv-block net (convnet16.yaml): fuse auto and fuse off;
#  5. the 64-trial grid with training.deterministic, fused and fuse off, compared trial by trial
#     (compare_trials.py), and step 3's default pair compared the same way.
#   bench/gpu/array.sh [OUT_DIR]        (from the repository root; source .gpu/env.sh first)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-/tmp/sweep-array-bench}"
mkdir -p "$out"
data="${DATA:-$root/.gpu/data}"
python="${PYTHON:-python3}"
stamp() { date +%s.%N; }
elapsed() { "$python" -c "print(f'{$2 - $1:.1f}')"; }

echo "== 1. bench_gpu_array"
bench_gpu_array --data "$data" --epochs 2 --k 1 2 4 8 16 32 64
echo "== 2. torch vmap"
(cd "$root/bench/gpu" && "$python" torch_vmap.py --k 1 2 4 8 16 32 64 --iters 150 --warmup 20)
echo "== 3. the 64-trial grid with sweep run"
for variant in "fuse=auto" "fuse=off" "fuse=off trials_per_gpu=4"; do
  sets=(); for kv in $variant; do sets+=(--set "resources.$kv"); done
  name="s64-${variant// /-}"; name="${name//=/}"
  t0=$(stamp)
  sweep run "$root/bench/gpu/sweep64.yaml" "${sets[@]}" --set data.path="$data" \
    --out "$out/runs" --name "$name" > "$out/$name.log" 2>&1
  rc=$?
  t1=$(stamp)
  best=$(grep '^best:' "$out/$name.log")
  echo "RESULT peer=sweep sweep64 mode=$name rc=$rc seconds=$(elapsed "$t0" "$t1") $best"
done
[ "${SKIP_TORCH_SWEEP:-0}" = 1 ] || {
  (cd "$root/bench/gpu" && "$python" torch_sweep64.py --data "$data" --first 8)
  (cd "$root/bench/gpu" && "$python" torch_sweep64.py --data "$data" --processes 8)
}
echo "== 4. 16 conv-block nets (width 32, depth 4, batch 128) with sweep run"
for variant in "fuse=auto" "fuse=off"; do
  name="c16-${variant//=/}"
  t0=$(stamp)
  sweep run "$root/bench/gpu/convnet16.yaml" --set "resources.$variant" --out "$out/runs" \
    --name "$name" > "$out/$name.log" 2>&1
  rc=$?
  t1=$(stamp)
  echo "RESULT peer=sweep convnet16 mode=$name rc=$rc seconds=$(elapsed "$t0" "$t1")"
done
echo "== 5. the 64-trial grid with training.deterministic: fused vs fuse: off, trial by trial (and step 3's pair)"
for variant in auto off; do
  name="s64-det-$variant"
  t0=$(stamp)
  sweep run "$root/bench/gpu/sweep64.yaml" --set "resources.fuse=$variant" \
    --set training.deterministic=true --set data.path="$data" --out "$out/runs" \
    --name "$name" > "$out/$name.log" 2>&1
  t1=$(stamp)
  echo "RESULT peer=sweep sweep64-deterministic mode=fuse-$variant seconds=$(elapsed "$t0" "$t1")"
done
"$python" "$root/bench/gpu/compare_trials.py" deterministic-fused-vs-off \
  "$out/runs/s64-det-auto/sweep.db" "$out/runs/s64-det-off/sweep.db"
# The default mode's pair from step 3 (a lone trial times cuDNN's atomic weight gradients: not
# reproducible to the last bit, nor therefore to a few tenths of a point at the largest rates).
"$python" "$root/bench/gpu/compare_trials.py" default-fused-vs-off \
  "$out/runs/s64-fuseauto/sweep.db" "$out/runs/s64-fuseoff/sweep.db"
