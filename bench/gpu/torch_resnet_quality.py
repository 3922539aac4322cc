#!/usr/bin/env python3
"""torch_resnet_quality.py — PyTorch's side of configs/fashion-mnist-resnet.yaml: ResNet-20 (He et
al. 2016's CIFAR ResNet with 1x1 conv + batch-norm projection shortcuts, as preset resnet builds
it) on Fashion-MNIST, batch 128, SGD lr 0.1 momentum 0.9 weight decay 5e-4, a cosine from 0.1 to
0 over every iteration, 20 epochs, random shifts of up to 2 pixels (zero fill), the test set
evaluated after each epoch. Data on the GPU (torch_fmnist.py), eager, PyTorch's defaults (TF32
convolutions allowed), as a careful user writes it. --precision bf16: the forward and the loss
under torch.autocast(bfloat16), model and batches channels_last (PyTorch's fast bf16 layout).

    python3 torch_resnet_quality.py --data DIR [--epochs 20] [--seed 1] [--precision fp32|bf16]
Prints per-epoch test accuracy and `RESULT peer=torch model=resnet20 quality ...`.
"""
import argparse
import contextlib
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_fmnist
from torch_peer import BasicBlock  # the block as preset resnet builds it


def resnet(depth=20, channels=1, classes=10):
    n = (depth - 2) // 6
    layers, cin = [nn.Conv2d(channels, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()], 16
    for stage, cout in enumerate((16, 32, 64)):
        for b in range(n):
            layers.append(BasicBlock(cin, cout, 2 if stage > 0 and b == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def shifted(x, shift):
    """Each image moved by its own random (dy, dx) in [-shift, shift], zeros filling in."""
    b, _, h, w = x.shape
    padded = F.pad(x, (shift, shift, shift, shift))
    dy = torch.randint(0, 2 * shift + 1, (b,), device=x.device)
    dx = torch.randint(0, 2 * shift + 1, (b,), device=x.device)
    rows = (torch.arange(h, device=x.device)[None, :] + dy[:, None])[:, :, None]
    cols = (torch.arange(w, device=x.device)[None, :] + dx[:, None])[:, None, :]
    batch = torch.arange(b, device=x.device)[:, None, None]
    return padded[batch, 0, rows, cols].unsqueeze(1)


def main():
    wall = time.perf_counter()
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    a = p.parse_args()
    bf16 = a.precision == "bf16"
    layout = torch.channels_last if bf16 else torch.contiguous_format

    def autocast():
        return (torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else
                contextlib.nullcontext())
    dev = torch.device("cuda")
    tx, ty, vx, vy, mean, std = torch_fmnist.load(a.data, dev)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)
    torch.manual_seed(a.seed)
    model = resnet().to(dev).to(memory_format=layout)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    batch, n = 128, tx.shape[0]
    per_epoch = math.ceil(n / batch)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda it: (1 + math.cos(math.pi * min(it, per_epoch * a.epochs) /
                                      (per_epoch * a.epochs))) / 2)
    start = time.perf_counter()
    acc = loss = float("nan")
    for epoch in range(a.epochs):
        order = torch.randperm(n, device=dev)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            xb = shifted((tx[idx].float() / 255.0 - mean) / std, 2)
            xb = xb.contiguous(memory_format=layout)
            opt.zero_grad(set_to_none=True)
            with autocast():
                batch_loss = F.cross_entropy(model(xb), ty[idx])
            batch_loss.backward()
            opt.step()
            sched.step()
        with autocast():
            loss, acc = torch_fmnist.evaluate(model, vx, vy, mean, std)
        print(f"epoch {epoch + 1}: test loss {loss:.4f} accuracy {acc:.4f} "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
    torch.cuda.synchronize()
    print(f"RESULT peer=torch model=resnet20 quality precision={a.precision} "
          f"epochs={a.epochs} batch={batch} "
          f"seed={a.seed} test_accuracy={acc:.4f} test_loss={loss:.4f} "
          f"train_seconds={time.perf_counter() - start:.2f} "
          f"process_seconds={time.perf_counter() - wall:.2f}", flush=True)


if __name__ == "__main__":
    main()
