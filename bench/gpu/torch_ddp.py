#!/usr/bin/env python3
"""torch_ddp.py — PyTorch DistributedDataParallel's throughput, the peer of bench_data_parallel.

Run under torchrun, one process per GPU (`torchrun --nproc_per_node 2 torch_ddp.py ...`); with one
process it trains the plain model (no DDP wrapper, no process group), PyTorch's one-GPU figure.
Each rank holds the same 65,536 random uint8 images on its GPU (1x28x28 for LeNet, 3x32x32 for the
conv-block net, as torch_peer.py builds them), takes its batch // world_size share of every
shuffled global batch, and runs forward, cross-entropy, backward (DDP's bucketed all-reduce over
NCCL, overlapped with backward) and SGD (lr 0.01, momentum 0.9, weight decay 5e-4), eagerly, as
DDP users do. Timed with CUDA events on rank 0 after a warm-up, over `--iters` steps.

    torchrun --nproc_per_node 2 torch_ddp.py --model lenet --batch 1024 [--precision fp32|tf32]
Prints `RESULT peer=torch-ddp model=.. gpus=.. batch=.. precision=.. images_per_second=..` on rank 0.
"""
import argparse
import os
import statistics

import torch
import torch.distributed as dist
import torch.nn.functional as F

from torch_peer import convnet, lenet

ROWS = 65536


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="lenet")
    p.add_argument("--batch", type=int, default=1024, help="global batch")
    p.add_argument("--precision", default="fp32", choices=["fp32", "tf32"])
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if world > 1:
        dist.init_process_group("nccl")
    tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    dev = torch.device("cuda", local)
    torch.manual_seed(1)
    shape = (1, 28, 28) if a.model == "lenet" else (3, 32, 32)
    model = (lenet() if a.model == "lenet" else convnet()).to(dev)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    gen = torch.Generator(device=dev).manual_seed(3)  # the same data and order on every rank
    images = torch.randint(0, 256, (ROWS,) + shape, dtype=torch.uint8, device=dev, generator=gen)
    labels = torch.randint(0, 10, (ROWS,), device=dev, generator=gen)
    perm = torch.randperm(ROWS, device=dev, generator=gen)
    share = a.batch // world
    batches = ROWS // a.batch

    def step(i):
        j = i % batches
        idx = perm[j * a.batch + rank * share: j * a.batch + (rank + 1) * share]
        x = (images[idx].float() * (1.0 / 255.0) - 0.3) / 0.35
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), labels[idx]).backward()
        opt.step()

    it = 0
    for _ in range(a.warmup):
        step(it)
        it += 1
    torch.cuda.synchronize()
    rates = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(a.repeats):
        if world > 1:
            dist.barrier()
        start.record()
        for _ in range(a.iters):
            step(it)
            it += 1
        stop.record()
        stop.synchronize()
        rates.append(a.iters * share * world / (start.elapsed_time(stop) / 1000.0))
    if rank == 0:
        print(f"RESULT peer=torch-ddp model={a.model} gpus={world} batch={a.batch} "
              f"precision={a.precision} images_per_second={statistics.median(rates):.0f}",
              flush=True)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
