#!/usr/bin/env python3
"""Fashion-MNIST with PyTorch as sweep's external trainer (examples/pytorch/sweep.yaml runs it).

A small MLP (784-hidden-10) on a subset of Debian's Fashion-MNIST (package dataset-fashion-mnist,
the idx gzip files in /usr/share/datasets/fashion-mnist). Every hyperparameter comes from
sweep_trial.params(), so the sweep's YAML is the one place they are set; each epoch is reported
with sweep_trial.log(), and the trained weights go to the trial's directory. Outside a sweep it
runs with the defaults below:  python3 examples/pytorch/train_fmnist.py
"""
import gzip
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

import sweep_trial

DEFAULTS = {
    "learning_rate": 0.05,
    "momentum": 0.9,
    "batch_size": 64,
    "epochs": 3,
    "hidden": 128,
    "train_limit": 6000,  # first N training images
    "test_limit": 2000,   # first N test images (the validation set)
    "threads": 1,         # torch threads per trial (sweep runs cpu_slots trials at once)
    "data_path": "/usr/share/datasets/fashion-mnist",
}
MEAN, STD = 0.2860, 0.3530  # of Fashion-MNIST's training images, pixels in [0, 1]


def read_idx(path, limit):
    """The first `limit` items of an idx file (gzip), as a uint8 tensor."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    items = torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)
    return items[:limit]


def load(data_path, split, limit):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(data_path, f"{prefix}-images-idx3-ubyte.gz"), limit)
    labels = read_idx(os.path.join(data_path, f"{prefix}-labels-idx1-ubyte.gz"), limit)
    x = (images.reshape(len(images), -1).float() / 255 - MEAN) / STD
    return x, labels.long()


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()


def main():
    p = sweep_trial.params(default=DEFAULTS)
    hp = {name: p.get(name, default) for name, default in DEFAULTS.items()}
    torch.set_num_threads(int(hp["threads"]))
    torch.manual_seed(sweep_trial.seed() if sweep_trial.in_sweep() else 1)
    device = torch.device(sweep_trial.torch_device() if torch.cuda.is_available() else "cpu")
    if not os.path.isdir(hp["data_path"]):
        print(f"train_fmnist: no Fashion-MNIST at {hp['data_path']} "
              "(Debian: apt-get install dataset-fashion-mnist)", file=sys.stderr)
        return 2
    x_train, y_train = load(hp["data_path"], "train", int(hp["train_limit"]))
    x_val, y_val = load(hp["data_path"], "test", int(hp["test_limit"]))
    x_train, y_train, x_val, y_val = (t.to(device) for t in (x_train, y_train, x_val, y_val))
    print(f"train_fmnist: {hp} on {device}, {len(x_train)} training images", flush=True)

    model = torch.nn.Sequential(torch.nn.Linear(784, int(hp["hidden"])), torch.nn.ReLU(),
                                torch.nn.Linear(int(hp["hidden"]), 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(hp["learning_rate"]),
                                momentum=float(hp["momentum"]))
    batch_size, step = int(hp["batch_size"]), 0
    for epoch in range(1, int(hp["epochs"]) + 1):
        model.train()
        started, total, seen = time.time(), 0.0, 0
        order = torch.randperm(len(x_train), device=device)
        for first in range(0, len(order), batch_size):
            batch = order[first:first + batch_size]
            loss = F.cross_entropy(model(x_train[batch]), y_train[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
            seen += len(batch)
            step += 1
        val_loss, val_accuracy = evaluate(model, x_val, y_val)
        sweep_trial.log(epoch=epoch, step=step, train_loss=total / seen, val_loss=val_loss,
                        val_accuracy=val_accuracy, epoch_seconds=time.time() - started)
    if sweep_trial.in_sweep():
        torch.save(model.state_dict(), sweep_trial.checkpoint_path("model.pt"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
