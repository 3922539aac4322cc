#!/usr/bin/env bash
# CPU throughput: sweep's LeNet training vs PyTorch's on the same machine, in the same run.
#   bench/cpu/run.sh [BUILD_DIR] [extra bench_cpu_lenet flags...]     (BUILD_DIR default: build)
# Runs bench_cpu_lenet, then bench/peers/torch_lenet_cpu.py with the same batch sizes, warm-up,
# iterations and thread count, and prints images/s for both and the sweep/torch ratio.
# Environment: THREADS (2), ITERS (200), WARMUP (20), BATCHES ("64 256"), PYTHON (/usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
shift || true
threads="${THREADS:-2}"; iters="${ITERS:-200}"; warmup="${WARMUP:-20}"; batches="${BATCHES:-64 256}"
python="${PYTHON:-/usr/bin/python3}"
bin="$build/bench/bench_cpu_lenet"
[ -x "$bin" ] || { echo "run.sh: $bin not found; build the bench_cpu_lenet target first" >&2; exit 1; }
out="$(mktemp)"; trap 'rm -f "$out"' EXIT

echo "== sweep (bench_cpu_lenet, $threads threads)"
# shellcheck disable=SC2086
"$bin" --threads "$threads" --iters "$iters" --warmup "$warmup" --batches $batches "$@" | tee -a "$out"
echo "== PyTorch peer ($python, $threads threads)"
# shellcheck disable=SC2086
"$python" "$root/bench/peers/torch_lenet_cpu.py" throughput --threads "$threads" --iters "$iters" \
  --warmup "$warmup" --batches $batches | tee -a "$out"

echo "== images/s, LeNet on Fashion-MNIST, sgdm, $threads threads ($(date -u +%F), $(nproc) cores)"
printf "%-8s %-14s %-14s %s\n" batch sweep torch sweep/torch
for b in $batches; do
  ours=$(grep -E "^RESULT peer=sweep batch=$b " "$out" | sed -E 's/.*images_per_second=([0-9.]+).*/\1/')
  peer=$(grep -E "^RESULT peer=torch batch=$b " "$out" | sed -E 's/.*images_per_second=([0-9.]+).*/\1/')
  ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
  printf "%-8s %-14s %-14s %s\n" "$b" "$ours" "$peer" "$ratio"
done
