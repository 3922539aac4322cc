#!/usr/bin/env bash
# two_gpus.sh — issue 5's multi-GPU check: the 8-trial sweep (bench/gpu/sweep8.yaml) on one GPU,
# then on two, each timed whole, with every GPU's utilisation sampled every 100 ms while it runs
# and each trial's device read back from the store. Two GPUs should both be busy for most of the
# run and take about half the time of one. Needs a machine with two GPUs (nvidia-h200-x2):
#   source .gpu/env.sh; bench/gpu/two_gpus.sh          (logs under $OUT, or /tmp/two_gpus)
# Prints: wall time per run, mean utilisation per GPU over the run, trials per device, and the
# 2-GPU / 1-GPU time ratio.
set -uo pipefail
out="${OUT:-/tmp/two_gpus}"
mkdir -p "$out"
sweep_bin="${SWEEP:-.gpu/bin/sweep}"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$gpus" -lt 2 ]; then
  echo "two_gpus.sh: this machine has $gpus GPU(s); the check needs 2" >&2
  exit 2
fi
if [ -f .gpu/lib/libopenblas.so.0.xz ] && [ ! -f .gpu/lib/libopenblas.so.0 ]; then
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
    .gpu/lib/libopenblas.so.0.xz .gpu/lib/libopenblas.so.0
fi
nvidia-smi --query-gpu=index,name --format=csv,noheader | tee "$out/gpus.txt"

run() {  # name, gpus list
  local name=$1 list=$2
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 100 \
    > "$out/util_$name.csv" 2> /dev/null &
  local sampler=$!
  local start end
  start=$(date +%s.%N)
  "$sweep_bin" run bench/gpu/sweep8.yaml --out "$out/runs" --name "$name" \
    --set "resources.gpus=$list" > "$out/sweep_$name.log" 2>&1
  local rc=$?
  end=$(date +%s.%N)
  kill "$sampler" 2> /dev/null
  wait "$sampler" 2> /dev/null
  python3 - "$name" "$rc" "$start" "$end" "$out/util_$name.csv" <<'PY'
import collections, sys
name, rc, start, end, util = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
samples = collections.defaultdict(list)
for line in open(util):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) == 3 and parts[2].isdigit():
        samples[int(parts[1])].append(int(parts[2]))
busy = ", ".join(f"GPU {g}: mean {sum(v) / len(v):.0f}% over {len(v)} samples, busy (>0%) "
                 f"{100 * sum(1 for x in v if x > 0) / len(v):.0f}% of them"
                 for g, v in sorted(samples.items()))
print(f"RESULT run={name} exit={rc} wall_seconds={end - start:.2f}")
print(f"  utilisation: {busy}")
PY
  "$sweep_bin" export "$name" --out "$out/runs" --format csv > "$out/trials_$name.csv" 2>&1
  python3 - "$out/trials_$name.csv" <<'PY'
import collections, csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
per = collections.defaultdict(list)
for r in rows:
    per[r["device"]].append((float(r["started_at"]), float(r["finished_at"])))
first = min(s for v in per.values() for s, _ in v)
last = max(f for v in per.values() for _, f in v)
for device, spans in sorted(per.items()):
    busy = sum(f - s for s, f in spans)
    print(f"  {device}: {len(spans)} trials, {busy:.2f} s of trial time in a {last - first:.2f} s span"
          f" ({100 * busy / (last - first):.0f}% busy)")
PY
  python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$end" > "$out/wall_$name.txt"
}

run one-gpu "[0]"
run two-gpus "[0, 1]"
python3 -c '
import sys
one, two = (float(open(f).read()) for f in sys.argv[1:3])
print(f"RESULT two_gpus_over_one={two / one:.2f} (one {one:.2f} s, two {two:.2f} s)")' \
  "$out/wall_one-gpu.txt" "$out/wall_two-gpus.txt"
