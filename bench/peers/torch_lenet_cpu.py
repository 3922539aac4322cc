#!/usr/bin/python3
"""PyTorch peer for bench/cpu: Caffe's LeNet on Fashion-MNIST, trained on the CPU.

The model, data and optimizer match what sweep's bench_cpu_lenet trains (trainer/models.cpp's
`lenet` preset: conv 20@5x5, maxpool 2, conv 50@5x5, maxpool 2, dense 500, relu, dense 10; SGD
lr 0.01, momentum 0.9, weight decay 5e-4; inputs normalised by the training set's mean/std).
The data set is held in memory as one float tensor and batches are sliced from a per-epoch
permutation: the fastest plain-PyTorch input path, so the comparison is with PyTorch at its best
rather than with DataLoader overhead. torch.set_num_threads(threads) (2 by default, the dev VM).

  torch_lenet_cpu.py throughput --batches 64 256 --warmup 20 --iters 200
  torch_lenet_cpu.py quality --epochs 10 --batch 64
Prints lines `RESULT key=value ...` that bench/cpu/run.sh parses.
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch_lenet import LEARNING_RATE, MOMENTUM, WEIGHT_DECAY, lenet


def read_idx(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndims = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndims).reshape(dims)


def find(dirname, base):
    for name in (base, base + ".gz"):
        p = os.path.join(dirname, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(dirname, base) + " (nor .gz)")


def load(dirname):
    def split(prefix):
        x = read_idx(find(dirname, prefix + "-images-idx3-ubyte")).astype(np.float32) / 255.0
        y = read_idx(find(dirname, prefix + "-labels-idx1-ubyte")).astype(np.int64)
        return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)

    xtr, ytr = split("train")
    xte, yte = split("t10k")
    mean, std = xtr.mean().item(), xtr.std(unbiased=False).item()
    return (xtr - mean) / std, ytr, (xte - mean) / std, yte


def make(seed):
    torch.manual_seed(seed)
    model = lenet()
    opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM,
                          weight_decay=WEIGHT_DECAY)
    return model, opt, nn.CrossEntropyLoss()


def train_step(model, opt, loss_fn, xb, yb):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(xb), yb)
    loss.backward()
    opt.step()
    return loss


def throughput(args, data):
    xtr, ytr, _, _ = data
    n = xtr.shape[0]
    for batch in args.batches:
        model, opt, loss_fn = make(args.seed)
        model.train()
        perm = torch.randperm(n)
        pos = 0

        def next_batch():
            nonlocal perm, pos
            if pos + batch > n:
                perm, pos = torch.randperm(n), 0
            idx = perm[pos:pos + batch]
            pos += batch
            return xtr[idx], ytr[idx]

        for _ in range(args.warmup):
            train_step(model, opt, loss_fn, *next_batch())
        t0 = time.perf_counter()
        for _ in range(args.iters):
            train_step(model, opt, loss_fn, *next_batch())
        dt = time.perf_counter() - t0
        print(f"RESULT peer=torch batch={batch} iters={args.iters} seconds={dt:.3f} "
              f"images_per_second={args.iters * batch / dt:.1f}", flush=True)


def evaluate(model, x, y, batch=1000):
    model.eval()
    correct, loss_sum = 0, 0.0
    with torch.no_grad():
        for i in range(0, x.shape[0], batch):
            out = model(x[i:i + batch])
            loss_sum += nn.functional.cross_entropy(out, y[i:i + batch], reduction="sum").item()
            correct += (out.argmax(1) == y[i:i + batch]).sum().item()
    model.train()
    return loss_sum / x.shape[0], correct / x.shape[0]


def quality(args, data):
    xtr, ytr, xte, yte = data
    model, opt, loss_fn = make(args.seed)
    n = xtr.shape[0]
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        perm = torch.randperm(n)
        for i in range(0, n, args.batch):  # drop_last=False, as sweep
            idx = perm[i:i + args.batch]
            train_step(model, opt, loss_fn, xtr[idx], ytr[idx])
        loss, acc = evaluate(model, xte, yte)
        print(f"epoch {epoch}: test loss {loss:.4f} accuracy {acc:.4f} "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
    print(f"RESULT peer=torch quality epochs={args.epochs} batch={args.batch} test_accuracy={acc:.4f} "
          f"test_loss={loss:.4f} seconds={time.perf_counter() - t0:.1f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["throughput", "quality"])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = load(args.data)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)
    (throughput if args.mode == "throughput" else quality)(args, data)


if __name__ == "__main__":
    main()
