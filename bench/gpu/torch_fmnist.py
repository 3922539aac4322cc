"""torch_fmnist.py — what torch_quality.py and torch_sweep8.py share: Fashion-MNIST on the GPU and
LeNet trained with sweep's recipe, the way a careful PyTorch user writes it.

The data set is read once from the idx .gz files into one uint8 tensor on the GPU and normalised
per batch with the training set's mean/std (as sweep does); each epoch's order is a GPU randperm;
the last partial batch is kept (drop_last=False, as sweep). No DataLoader: it would only add
host-side overhead a careful user avoids. Model: Caffe's LeNet as trainer/models.cpp builds it.
"""
import gzip
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from torch_lenet import MOMENTUM, WEIGHT_DECAY, lenet  # noqa: E402  (the line above finds it)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(raw[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def load(data_dir, dev):
    """(train_x u8 (N,1,28,28), train_y int64, test_x, test_y, mean, std) on `dev`."""
    def pair(split):
        x = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz")).unsqueeze(1)
        y = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz")).long()
        return x.to(dev), y.to(dev)
    tx, ty = pair("train")
    vx, vy = pair("t10k")
    f = tx.float() / 255.0
    return tx, ty, vx, vy, f.mean().item(), f.std(unbiased=False).item()


def evaluate(model, x, y, mean, std, batch=1000):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, x.shape[0], batch):
            xb = (x[i:i + batch].float() / 255.0 - mean) / std
            out = model(xb)
            loss += F.cross_entropy(out, y[i:i + batch], reduction="sum").item()
            correct += (out.argmax(1) == y[i:i + batch]).sum().item()
    model.train()
    return loss / x.shape[0], correct / x.shape[0]


def train(data, lr, batch, epochs, seed=1, on_epoch=None, momentum=MOMENTUM,
          weight_decay=WEIGHT_DECAY):
    """Trains a fresh LeNet; returns (test accuracy, test loss, seconds of training + evaluation)."""
    tx, ty, vx, vy, mean, std = data
    torch.manual_seed(seed)
    dev = tx.device
    model = lenet().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    n = tx.shape[0]
    start = time.perf_counter()
    acc = loss = float("nan")
    for epoch in range(epochs):
        order = torch.randperm(n, device=dev)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            if idx.numel() < 2:
                break
            xb = (tx[idx].float() / 255.0 - mean) / std
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(xb), ty[idx]).backward()
            opt.step()
        loss, acc = evaluate(model, vx, vy, mean, std)
        if on_epoch:
            on_epoch(epoch + 1, loss, acc, time.perf_counter() - start)
    torch.cuda.synchronize()
    return acc, loss, time.perf_counter() - start
