#!/usr/bin/env python3
"""torch_sweep64.py — PyTorch's side of the 64-trial grid (bench/gpu/sweep64.yaml): LeNet on
Fashion-MNIST, 8 learning rates x 4 momenta x 2 weight decays, batch 64, 2 epochs, the test set
evaluated after each epoch, data on the GPU (torch_fmnist.py).

    python3 torch_sweep64.py --data DIR [--first N]             one process, trials one after
                                                                another (the first N, then
                                                                extrapolated to 64)
    python3 torch_sweep64.py --data DIR --processes 8           8 processes at once on the one
                                                                GPU, 8 trials each
Prints `RESULT peer=torch sweep64 mode=.. seconds=..` (seconds for all 64 trials).
"""
import argparse
import itertools
import multiprocessing as mp
import time

import torch

import torch_fmnist

RATES = [0.001, 0.002, 0.003, 0.005, 0.007, 0.01, 0.02, 0.03]
GRID = list(itertools.product(RATES, [0.0, 0.5, 0.9, 0.95], [0.0, 5e-4]))


def run(data_dir, trials, epochs):
    data = torch_fmnist.load(data_dir, torch.device("cuda"))
    for lr, momentum, wd in trials:
        torch_fmnist.train(data, lr, 64, epochs, momentum=momentum, weight_decay=wd)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--first", type=int, default=64)
    p.add_argument("--processes", type=int, default=1)
    a = p.parse_args()
    start = time.perf_counter()
    if a.processes == 1:
        run(a.data, GRID[:a.first], a.epochs)
        seconds = (time.perf_counter() - start) * len(GRID) / a.first
        mode = "sequential" + ("" if a.first == len(GRID) else f"-extrapolated-from-{a.first}")
    else:
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=run, args=(a.data, GRID[i::a.processes], a.epochs))
                 for i in range(a.processes)]
        for q in procs:
            q.start()
        for q in procs:
            q.join()
        seconds = time.perf_counter() - start
        mode = f"{a.processes}-processes"
    print(f"RESULT peer=torch sweep64 mode={mode} seconds={seconds:.1f}", flush=True)


if __name__ == "__main__":
    main()
