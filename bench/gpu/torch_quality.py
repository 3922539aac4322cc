#!/usr/bin/env python3
"""torch_quality.py — PyTorch's side of the GPU quality run: LeNet on Fashion-MNIST, batch 64,
SGD lr 0.01, momentum 0.9, weight decay 5e-4, 10 epochs, data on the GPU (torch_fmnist.py), the
test set evaluated after each epoch, as bench_gpu_train --quality does.

    python3 torch_quality.py --data DIR [--epochs 10] [--batch 64]
Prints per-epoch test accuracy and `RESULT peer=torch quality ...`.
"""
import argparse
import time

import torch

import torch_fmnist


def main():
    wall = time.perf_counter()
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    a = p.parse_args()
    # PyTorch's defaults (TF32 convolutions allowed), as a user gets them.
    dev = torch.device("cuda")
    data = torch_fmnist.load(a.data, dev)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)

    def report(epoch, loss, acc, sec):
        print(f"epoch {epoch}: test loss {loss:.4f} accuracy {acc:.4f} ({sec:.2f} s)", flush=True)

    acc, loss, sec = torch_fmnist.train(data, 0.01, a.batch, a.epochs, on_epoch=report)
    print(f"RESULT peer=torch quality epochs={a.epochs} batch={a.batch} test_accuracy={acc:.4f} "
          f"test_loss={loss:.4f} train_seconds={sec:.2f} "
          f"process_seconds={time.perf_counter() - wall:.2f}", flush=True)


if __name__ == "__main__":
    main()
