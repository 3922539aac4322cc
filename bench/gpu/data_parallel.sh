#!/usr/bin/env bash
# data_parallel.sh — issue 12's measurement in one call on a machine with two GPUs: our train()
# on 1 and 2 GPUs (bench_data_parallel) and PyTorch DDP under torchrun on 1 and 2 GPUs, same nets,
# global batches and data shapes, in fp32 and tf32 (PyTorch's default lets cuDNN use TF32).
#   source .gpu/env.sh; bench/gpu/data_parallel.sh          (logs under $OUT, or /tmp/dp)
set -uo pipefail
out="${OUT:-/tmp/dp}"
mkdir -p "$out"
bin="${BENCH:-.gpu/bin/bench_data_parallel}"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "GPUs: $gpus"
for precision in fp32 tf32; do
  "$bin" --models lenet --batches 256 1024 --precision "$precision" 2>&1 | tee -a "$out/sweep_dp.log"
  "$bin" --models convnet --batches 512 1024 --precision "$precision" --epochs 3 2>&1 \
    | tee -a "$out/sweep_dp.log"
done
cd bench/gpu
for precision in fp32 tf32; do
  for case in "lenet 256" "lenet 1024" "convnet 512" "convnet 1024"; do
    set -- $case
    for n in 1 2; do
      [ "$n" -le "$gpus" ] || continue
      python3 -m torch.distributed.run --standalone --nproc_per_node "$n" torch_ddp.py \
        --model "$1" --batch "$2" --precision "$precision" 2>&1 | grep -E 'RESULT|Error' \
        | tee -a "$out/torch_ddp.log"
    done
  done
done
