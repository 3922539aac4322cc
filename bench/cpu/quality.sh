#!/usr/bin/env bash
# CPU quality run: LeNet, batch 64, sgdm lr 0.01 momentum 0.9 wd 5e-4, 10 epochs, full
# Fashion-MNIST; prints the test accuracy per epoch and at the end (goal >= 0.90; PyTorch 0.907).
#   bench/cpu/quality.sh [BUILD_DIR] [--peer]     (--peer also runs the PyTorch peer, slowly)
# Environment: THREADS (2), EPOCHS (10), PYTHON (/usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
threads="${THREADS:-2}"; epochs="${EPOCHS:-10}"; python="${PYTHON:-/usr/bin/python3}"
bin="$build/bench/bench_cpu_lenet"
[ -x "$bin" ] || { echo "quality.sh: $bin not found; build the bench_cpu_lenet target first" >&2; exit 1; }
echo "== sweep: LeNet, $epochs epochs, batch 64, $threads threads"
"$bin" --quality --epochs "$epochs" --batch 64 --threads "$threads"
if [ "${2:-}" = "--peer" ]; then
  echo "== PyTorch peer"
  "$python" "$root/bench/peers/torch_lenet_cpu.py" quality --epochs "$epochs" --batch 64 --threads "$threads"
fi
