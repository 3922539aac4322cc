#!/usr/bin/env bash
# kernel_profile.sh — per-kernel GPU times of a window of bench_gpu_lenet's steps, with Nsight
# Compute (the GPU machine has ncu but no nsys). ncu serialises kernels and fixes clocks, so the
# times are inflated (about 2x for LeNet against a replayed graph) but rank kernels faithfully.
#   source .gpu/env.sh; bench/gpu/kernel_profile.sh NAME SKIP COUNT [bench_gpu_lenet flags...]
# e.g. bench/gpu/kernel_profile.sh lenet64 2000 60 --only lenet --batch 64 --mode eager \
#        --precision fp32 --iters 10 --repeats 1 --warmup 60
# SKIP kernels are passed over first (past cudnnFind's trial runs and the warm-up); prints the
# kernels by total time, and writes $OUT/ncu_NAME.csv (or /tmp). METRICS adds ncu metrics
# (comma-separated) summed per kernel beside the time, e.g. METRICS=sm__cycles_active.sum: the
# SM-cycles a kernel holds, what it costs when many steps share the GPU (a fused array).
# NCU_FLAGS adds ncu options, e.g. "--cache-control none --clock-control none" for durations
# nearer a real run's (caches kept warm, clocks not fixed).
set -euo pipefail
name=$1 skip=$2 count=$3
shift 3
out="${OUT:-/tmp}"
ncu_bin="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
bin="${BENCH:-.gpu/bin/bench_gpu_lenet}"
metrics="gpu__time_duration.sum${METRICS:+,$METRICS}"
"$ncu_bin" ${NCU_FLAGS:-} --metrics "$metrics" --csv --launch-skip "$skip" --launch-count "$count" \
  "$bin" "$@" > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
python3 - "$out/ncu_$name.csv" <<'PY'
import collections, csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, data = rows[0], rows[1:]
k, m, v, u = (head.index(h) for h in ("Kernel Name", "Metric Name", "Metric Value", "Metric Unit"))
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
total, count = collections.defaultdict(float), collections.Counter()
extra = collections.defaultdict(lambda: collections.defaultdict(float))
for r in data:
    name, value = r[k][:100], float(r[v].replace(",", ""))
    if r[m] == "gpu__time_duration.sum":
        total[name] += value * scale[r[u]]
        count[name] += 1
    else:
        extra[name][r[m]] += value
names = sorted({r[m] for r in data} - {"gpu__time_duration.sum"})
print(f"{'us':>10} {'calls':>5} " + " ".join(f"{n[:22]:>22}" for n in names) + "  kernel")
for name, us in sorted(total.items(), key=lambda x: -x[1]):
    cols = " ".join(f"{extra[name][n]:22.0f}" for n in names)
    print(f"{us:10.1f} {count[name]:5d} {cols}  {name}")
sums = " ".join(f"{sum(e[n] for e in extra.values()):22.0f}" for n in names)
print(f"{sum(total.values()):10.1f} {sum(count.values()):5d} {sums}  (all)")
PY
