#!/usr/bin/env python3
"""A tiny external trainer for configs/external-command.yaml.

It fits a one-hidden-layer network to a noisy 2-D toy problem with plain Python (no libraries)
and prints one JSON line per epoch on stdout, the protocol sweep reads for external trainers:
    {"epoch": 1, "step": 50, "train_loss": ..., "val_loss": ..., "val_accuracy": ...}
"""
import argparse
import json
import math
import random
import sys


def make_data(rng, n):
    points = []
    for _ in range(n):
        x, y = rng.uniform(-1, 1), rng.uniform(-1, 1)
        label = 1 if x * x + y * y < 0.5 else 0
        if rng.random() < 0.05:
            label = 1 - label
        points.append((x, y, label))
    return points


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    train, val = make_data(rng, 400), make_data(rng, 200)
    w1 = [[rng.gauss(0, 1), rng.gauss(0, 1), 0.0] for _ in range(args.width)]
    w2 = [rng.gauss(0, 1 / math.sqrt(args.width)) for _ in range(args.width)] + [0.0]

    def forward(x, y):
        hidden = [max(0.0, a * x + b * y + c) for a, b, c in w1]
        z = sum(w * h for w, h in zip(w2, hidden)) + w2[-1]
        z = max(-30.0, min(30.0, z))
        return hidden, 1 / (1 + math.exp(-z))

    def loss_of(p, label):
        p = min(max(p, 1e-7), 1 - 1e-7)
        return -(label * math.log(p) + (1 - label) * math.log(1 - p))

    step = 0
    for epoch in range(1, args.epochs + 1):
        rng.shuffle(train)
        total = 0.0
        for x, y, label in train:
            hidden, p = forward(x, y)
            total += loss_of(p, label)
            grad = p - label
            for j, h in enumerate(hidden):
                if h > 0:
                    g = grad * w2[j]
                    w1[j][0] -= args.lr * g * x
                    w1[j][1] -= args.lr * g * y
                    w1[j][2] -= args.lr * g
                w2[j] -= args.lr * grad * h
            w2[-1] -= args.lr * grad
            step += 1
        val_loss, correct = 0.0, 0
        for x, y, label in val:
            _, p = forward(x, y)
            val_loss += loss_of(p, label)
            correct += int((p > 0.5) == bool(label))
        print(json.dumps({"epoch": epoch, "step": step, "train_loss": total / len(train),
                          "val_loss": val_loss / len(val), "val_accuracy": correct / len(val)}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
