#!/usr/bin/env python3
"""torch_peer.py — PyTorch's training-step throughput for the models bench_gpu_lenet times.

The same steps as ours: a uint8 data set already on the GPU, gathered by a shuffled index array,
normalised on the fly, forward, cross-entropy, backward, SGD (lr 0.01, momentum 0.9, weight decay
5e-4). Models: Caffe's LeNet as trainer/models.cpp builds it (conv20 5x5, maxpool, conv50 5x5,
maxpool, dense 500, relu, dense 10; no relu after the convolutions) and the MATLAB CIFAR-10
conv-block net (3 blocks of 4 x [conv3x3 no bias, batchnorm, relu], maxpool between blocks, global
average pool, dense). Two modes: eager, and the whole step captured in a CUDA graph by hand
(torch.cuda.graph; each replay after copying the batch's indices into the static index tensor),
which is what an expert PyTorch user can do. fp32 turns TF32 off in cuDNN and cuBLAS (PyTorch's
default lets cuDNN convolutions use TF32); tf32 turns it on in both; bf16 runs the forward pass
(and so its backward) under torch.autocast(bfloat16) with fp32 parameters, PyTorch's mixed
precision, TF32 off.

    python3 torch_peer.py [--iters 500] [--warmup 50] [--repeats 5] [--only lenet|convnet|resnet18]
Prints `RESULT peer=torch model=.. batch=.. mode=.. precision=.. images_per_second=..` lines.
"""
import argparse
import os
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
# torch_vmap and torch_ddp import lenet from here.
from torch_lenet import LEARNING_RATE, MOMENTUM, WEIGHT_DECAY, lenet  # noqa: E402

ROWS = 16384


def convnet(width=32, depth=4):
    layers, cin = [], 3
    for b in range(3):
        for _ in range(depth):
            layers += [nn.Conv2d(cin, width << b, 3, padding=1, bias=False),
                       nn.BatchNorm2d(width << b), nn.ReLU()]
            cin = width << b
        if b < 2:
            layers.append(nn.MaxPool2d(2, 2))
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 10)]
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    """ResNet's basic block as trainer/layers/residual builds it: conv-bn-relu-conv-bn, plus the
    input (or a 1x1 conv + batch norm when the shape changes), then relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.shortcut = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.shortcut(x))


def resnet18():
    """The CIFAR variant of ResNet-18 (preset resnet, depth 18): 3x3 stem, no max-pool."""
    layers, cin = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()], 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for b in range(2):
            layers.append(BasicBlock(cin, cout, 2 if stage > 0 and b == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


MODELS = {"lenet": lenet, "convnet": convnet, "resnet18": resnet18}


def run_case(model_name, batch, graph, precision, warmup, iters, repeats):
    tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    torch.manual_seed(1)
    shape = (1, 28, 28) if model_name == "lenet" else (3, 32, 32)
    model = MODELS[model_name]().to(dev)
    # channels_last for bf16 convolutional nets: what PyTorch's guides recommend for tensor cores.
    channels_last = precision == "bf16" and model_name != "lenet"
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM,
                          weight_decay=WEIGHT_DECAY)
    images = torch.randint(0, 256, (ROWS,) + shape, dtype=torch.uint8, device=dev)
    labels = torch.randint(0, 10, (ROWS,), device=dev)
    perm = torch.randperm(ROWS, device=dev)
    batches = ROWS // batch
    mean, std = 0.3, 0.35

    # graph == "compile": torch.compile's "reduce-overhead" mode (Inductor + CUDA graphs).
    net = torch.compile(model, mode="reduce-overhead") if graph == "compile" else model

    def body(idx):
        x = (images[idx].float() * (1.0 / 255.0) - mean) / std
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = F.cross_entropy(net(x), labels[idx])
        loss.backward()
        opt.step()
        return loss

    def eager(i):
        j = i % batches
        opt.zero_grad(set_to_none=True)
        body(perm[j * batch:(j + 1) * batch])

    step = eager
    if graph is True:
        static_idx = perm[:batch].clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                body(static_idx)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            body(static_idx)

        def replayed(i):
            j = i % batches
            static_idx.copy_(perm[j * batch:(j + 1) * batch])
            g.replay()
        step = replayed

    it = 0
    for _ in range(warmup):
        step(it)
        it += 1
    torch.cuda.synchronize()
    rates = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(repeats):
        start.record()
        for _ in range(iters):
            step(it)
            it += 1
        stop.record()
        stop.synchronize()
        rates.append(iters * batch / (start.elapsed_time(stop) / 1000.0))
    return statistics.median(rates)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", default="")
    p.add_argument("--compile", action="store_true",
                   help="also torch.compile(mode='reduce-overhead') for the convolutional nets")
    p.add_argument("--precision", default="",
                   help="only these precisions, comma-separated (fp32,tf32,bf16)")
    a = p.parse_args()
    cases = []
    modes = (False, True) + (("compile",) if a.compile else ())
    if a.only in ("", "lenet"):
        cases += [("lenet", b, g, prec) for b in (64, 256) for prec in ("fp32", "bf16")
                  for g in (False, True)]
    if a.only in ("", "convnet"):
        cases += [("convnet", 256, g, prec) for prec in ("fp32", "tf32", "bf16") for g in modes]
    if a.only in ("", "resnet18"):
        cases += [("resnet18", 128, g, prec) for prec in ("fp32", "tf32", "bf16") for g in modes]
    if a.precision:
        cases = [c for c in cases if c[3] in a.precision.split(",")]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)
    for name, batch, graph, prec in cases:
        n = a.iters if name == "lenet" else max(50, a.iters // 5)
        rate = run_case(name, batch, graph, prec, a.warmup, n, a.repeats)
        mode = "compile" if graph == "compile" else "graph" if graph else "eager"
        print(f"RESULT peer=torch model={name} batch={batch} mode={mode} precision={prec} "
              f"images_per_second={rate:.0f}", flush=True)


if __name__ == "__main__":
    main()
