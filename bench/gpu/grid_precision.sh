#!/usr/bin/env bash
# The 64-trial grid (sweep64.yaml) fused and `fuse: off` in each training.precision (fp32, tf32,
# bf16), timed whole with `sweep run`, and each pair compared trial by trial (compare_trials.py):
# how the fused array's lead over one trial at a time moves when its products run on tensor cores.
#   bench/gpu/grid_precision.sh [OUT_DIR] [PRECISION...]   (repository root; source .gpu/env.sh)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-/tmp/sweep-grid-precision}"
shift || true
precisions=("${@:-fp32 tf32 bf16}")
mkdir -p "$out"
data="${DATA:-$root/.gpu/data}"
python="${PYTHON:-python3}"
stamp() { date +%s.%N; }
elapsed() { "$python" -c "print(f'{$2 - $1:.2f}')"; }
for precision in ${precisions[@]}; do
  for fuse in auto off; do
    name="s64-$precision-$fuse"
    t0=$(stamp)
    sweep run "$root/bench/gpu/sweep64.yaml" --set "resources.fuse=$fuse" \
      --set "training.precision=$precision" --set data.path="$data" --out "$out/runs" \
      --name "$name" > "$out/$name.log" 2>&1
    rc=$?
    t1=$(stamp)
    echo "RESULT peer=sweep sweep64 precision=$precision fuse=$fuse rc=$rc" \
      "seconds=$(elapsed "$t0" "$t1") $(grep '^best:' "$out/$name.log")"
  done
  "$python" "$root/bench/gpu/compare_trials.py" "$precision-fused-vs-off" \
    "$out/runs/s64-$precision-auto/sweep.db" "$out/runs/s64-$precision-off/sweep.db"
done
