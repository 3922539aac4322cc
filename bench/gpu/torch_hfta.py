#!/usr/bin/env python3
"""torch_hfta.py — HFTA's route to many small trials at once (MLSys 2021), written by hand in
PyTorch: K LeNets (torch_peer.py's layers) fused into one wider model, the peer of bench_gpu_array
and the feasibility check for stacked kernels in our engine.

Member k's batch sits in channel block k of one (batch, K·C, H, W) tensor; both convolutions are
one grouped convolution (groups = K), pooling runs on the stacked tensor, the dense layers are
batched matrix products over (K, batch, features), the loss is the sum of the members' mean
cross-entropies (so each member's gradient is its own), and SGD with momentum and weight decay
5e-4 runs over the stacked parameters with a learning rate and momentum per member. Each member
draws its own shuffled batch from a uint8 data set on the GPU. Eager, and the whole step captured
in a CUDA graph by hand. TF32 off (fp32, as bench_gpu_array); cudnn.benchmark on.

    python3 torch_hfta.py [--k 1 8 16 64] [--batch 64] [--iters 300] [--warmup 30]
Prints `RESULT peer=torch-hfta k=.. batch=.. mode=eager|graph images_per_second=..` lines.
"""
import math

import torch
import torch.nn.functional as F

from torch_vmap import images_per_second, main

ROWS = 16384


def uniform(shape, fan_in, dev):
    bound = 1.0 / math.sqrt(fan_in)
    return torch.empty(shape, device=dev).uniform_(-bound, bound).requires_grad_()


def run(k, batch, iters, warmup, graph):
    dev = torch.device("cuda")
    data = torch.randint(0, 256, (ROWS, 1, 28, 28), dtype=torch.uint8, device=dev)
    labels = torch.randint(0, 10, (ROWS,), device=dev)
    # LeNet: conv 20@5x5, pool, conv 50@5x5, pool, dense 500, relu, dense 10; K of each, stacked.
    params = [
        uniform((k * 20, 1, 5, 5), 25, dev), uniform((k * 20,), 25, dev),
        uniform((k * 50, 20, 5, 5), 500, dev), uniform((k * 50,), 500, dev),
        uniform((k, 800, 500), 800, dev), uniform((k, 1, 500), 800, dev),
        uniform((k, 500, 10), 500, dev), uniform((k, 1, 10), 500, dev),
    ]
    lr = torch.tensor([0.001 * (1 + i % 8) for i in range(k)], device=dev)
    mom = torch.tensor([0.9 if i % 2 else 0.8 for i in range(k)], device=dev)
    wd = 5e-4
    # Per-member factors shaped to each parameter's stacked layout (member-major).
    def per_member(v, p):
        if p.dim() == 3:
            return v.view(k, 1, 1)
        return v.repeat_interleave(p.shape[0] // k).view((-1,) + (1,) * (p.dim() - 1))
    lrs = [per_member(lr, p) for p in params]
    moms = [per_member(mom, p) for p in params]
    velocity = [torch.zeros_like(p) for p in params]
    idx = torch.zeros((k, batch), dtype=torch.long, device=dev)

    def step():
        x = data[idx.t()].float().div_(255.0).sub_(0.2860).div_(0.3530)  # (batch, k, 1, 28, 28)
        x = x.view(batch, k, 28, 28)
        y = labels[idx]  # (k, batch)
        w1, b1, w2, b2, w3, b3, w4, b4 = params
        h = F.max_pool2d(F.conv2d(x, w1, b1, groups=k), 2)
        h = F.max_pool2d(F.conv2d(h, w2, b2, groups=k), 2)  # (batch, k*50, 4, 4)
        h = h.view(batch, k, 800).transpose(0, 1)  # (k, batch, 800)
        h = torch.relu(torch.baddbmm(b3, h, w3))
        logits = torch.baddbmm(b4, h, w4)  # (k, batch, 10)
        loss = F.cross_entropy(logits.reshape(k * batch, 10), y.reshape(-1),
                               reduction="sum") / batch
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, v, a, m in zip(params, grads, velocity, lrs, moms):
                v.mul_(m).add_(g).add_(p, alpha=wd)
                p.sub_(v * a)

    def new_indices():
        idx.copy_(torch.randint(0, ROWS, (k, batch), device=dev))

    return images_per_second(step, new_indices, k * batch, iters, warmup, graph)


if __name__ == "__main__":
    main("torch-hfta", run, default_k=(1, 8, 16, 64))
