#!/usr/bin/env bash
# kernel_profile.sh — per-kernel GPU times of a window of bench_gpu_lenet's steps, with Nsight
# Compute (the GPU machine has ncu but no nsys). ncu serialises kernels and fixes clocks, so the
# times are inflated (about 2x for LeNet against a replayed graph) but rank kernels faithfully.
#   source .gpu/env.sh; bench/gpu/kernel_profile.sh NAME SKIP COUNT [bench_gpu_lenet flags...]
# e.g. bench/gpu/kernel_profile.sh lenet64 2000 60 --only lenet --batch 64 --mode eager \
#        --precision fp32 --iters 10 --repeats 1 --warmup 60
# SKIP kernels are passed over first (past cudnnFind's trial runs and the warm-up); prints the
# kernels by total time, and writes $OUT/ncu_NAME.csv (or /tmp).
set -euo pipefail
name=$1 skip=$2 count=$3
shift 3
out="${OUT:-/tmp}"
ncu_bin="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
bin="${BENCH:-.gpu/bin/bench_gpu_lenet}"
"$ncu_bin" --metrics gpu__time_duration.sum --csv --launch-skip "$skip" --launch-count "$count" \
  "$bin" "$@" > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
python3 - "$out/ncu_$name.csv" <<'PY'
import collections, csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, data = rows[0], rows[1:]
k, v, u = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
total, count = collections.defaultdict(float), collections.Counter()
for r in data:
    us = float(r[v].replace(",", "")) * scale[r[u]]
    total[r[k][:100]] += us
    count[r[k][:100]] += 1
for name, us in sorted(total.items(), key=lambda x: -x[1]):
    print(f"{us:10.1f} us {count[name]:4d}x  {name}")
print(f"{sum(total.values()):10.1f} us in {len(data)} kernels")
PY
