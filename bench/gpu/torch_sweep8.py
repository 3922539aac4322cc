#!/usr/bin/env python3
"""torch_sweep8.py — PyTorch's side of the 8-trial sweep (bench/gpu/sweep8.yaml): LeNet on
Fashion-MNIST, learning rates 0.001, 0.003, 0.01, 0.03 x batch 64 and 256, 2 epochs each, SGD
momentum 0.9, weight decay 5e-4, trained one after another in one process with the data on the
GPU (torch_fmnist.py), the test set evaluated after each epoch.

    python3 torch_sweep8.py --data DIR [--epochs 2]
Prints one line per trial and `RESULT peer=torch sequential8 ...`; time the whole process from
the shell (`time python3 ...`) for the figure comparable with `time sweep run`.
"""
import argparse
import time

import torch

import torch_fmnist


def main():
    wall = time.perf_counter()
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=2)
    a = p.parse_args()
    data = torch_fmnist.load(a.data, torch.device("cuda"))
    train_total = 0.0
    for batch in (64, 256):
        for lr in (0.001, 0.003, 0.01, 0.03):
            acc, _, sec = torch_fmnist.train(data, lr, batch, a.epochs)
            train_total += sec
            print(f"trial batch {batch} lr {lr}: test accuracy {acc:.4f}, {sec:.2f} s", flush=True)
    print(f"RESULT peer=torch sequential8 epochs={a.epochs} train_seconds={train_total:.2f} "
          f"process_seconds={time.perf_counter() - wall:.2f}", flush=True)


if __name__ == "__main__":
    main()
