#!/usr/bin/env bash
# gpu_session.sh — every GPU figure of bench/RESULTS.md in one call on the lent GPU machine, ours
# and PyTorch's in the same run: GPU tests, step and train() throughput (run.sh), the 10-epoch
# quality run, the 8-trial sweep, and the tests once more under compute-sanitizer (last: slowest).
#   source .gpu/env.sh; bench/gpu/gpu_session.sh        (logs under $OUT, or /tmp/gpu_session)
# Expects the bundle (.gpu/bin: sweep_cuda_tests bench_gpu_lenet bench_gpu_train [sweep]) and the
# Fashion-MNIST .gz files in .gpu/data. A bundled libopenblas.so.0.xz is unpacked first: the
# library is 36 MB and the tree that travels is limited to 64 MiB. Preparing it, here:
#   /work/shared/gpu/bundle.sh .gpu build-gpu2/tests/trainer/cuda/sweep_cuda_tests \
#     build-gpu2/bench/gpu/bench_gpu_lenet build-gpu2/bench/gpu/bench_gpu_train build-gpu2/sweep
#   mkdir -p .gpu/data && cp /usr/share/datasets/fashion-mnist/*.gz .gpu/data/
#   xz -6 .gpu/lib/libopenblas.so.0      (or python3's lzma module; leaves libopenblas.so.0.xz)
set -uo pipefail
out="${OUT:-/tmp/gpu_session}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
data=.gpu/data
if [ -f .gpu/lib/libopenblas.so.0.xz ] && [ ! -f .gpu/lib/libopenblas.so.0 ]; then
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
    .gpu/lib/libopenblas.so.0.xz .gpu/lib/libopenblas.so.0
fi
TIMEFORMAT='wall %R s'
step() { echo; echo "=== $* ($(date +%T))"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__)'
  git rev-parse --short HEAD 2>/dev/null || true
} 2>&1 | tee "$out/gpu.txt"

step "a. GPU tests"
timeout 240 .gpu/bin/sweep_cuda_tests 2>&1 | tee "$out/tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|FAILED|Failure" | tail -20

step "b. throughput: step modes, train(), PyTorch"
DATA="$data" timeout 300 bench/gpu/run.sh .gpu/bin/bench_gpu_lenet --iters 300 --repeats 3 \
  > "$out/bench.log" 2>&1
tail -8 "$out/bench.log"

step "c. quality: LeNet b64 sgdm 10 epochs"
{
  time timeout 120 .gpu/bin/bench_gpu_train --data "$data" --quality
  time timeout 120 .gpu/bin/bench_gpu_train --data "$data" --quality --precision bf16
  time timeout 120 python3 bench/gpu/torch_quality.py --data "$data"
} > "$out/quality.log" 2>&1
grep -E "RESULT|wall|epoch 10" "$out/quality.log"

step "d. 8-trial sweep"
{
  if .gpu/bin/sweep --help > /dev/null 2>&1; then
    echo "--- time sweep run bench/gpu/sweep8.yaml"
    time timeout 180 .gpu/bin/sweep run bench/gpu/sweep8.yaml --out /tmp/sweep8-runs
    echo "--- trials_per_gpu 4"
    time timeout 180 .gpu/bin/sweep run bench/gpu/sweep8.yaml --out /tmp/sweep8-runs4 \
      --name sweep8-packed --set resources.trials_per_gpu=4
  else
    echo "sweep binary missing or not working"
  fi
  echo "--- bench_gpu_train --sequential8"
  time timeout 120 .gpu/bin/bench_gpu_train --data "$data" --sequential8
  echo "--- torch_sweep8.py"
  time timeout 120 python3 bench/gpu/torch_sweep8.py --data "$data"
} > "$out/sweep8.log" 2>&1
grep -E "RESULT|wall|^---|best|trials|error|Error" "$out/sweep8.log" | tail -30

step "a'. GPU tests under compute-sanitizer memcheck (filtered)"
san="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
timeout 200 "$san" --tool memcheck --leak-check no .gpu/bin/sweep_cuda_tests \
  --gtest_filter='CudaOps.*:CudaGraph.*:CudaEvalGraph.*:CudaGraphTrain.LoopSteps*:CudaGraphTrain.DropGraph*:CudaGraphTrain.Dropout*' \
  > "$out/memcheck.log" 2>&1
echo "memcheck exit $?"
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) |^\[==========\]" "$out/memcheck.log" | tail -5
