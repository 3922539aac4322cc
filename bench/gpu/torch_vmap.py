#!/usr/bin/env python3
"""torch_vmap.py — PyTorch's route to many small trials at once, the peer of bench_gpu_array.

K LeNets (torch_peer.py's, Caffe's) stacked with torch.func.stack_module_state and trained by
vmap(grad(loss)) over the stack: each model its own learning rate and momentum (tensors of K) and
its own batch (its own shuffled indices into the uint8 Fashion-MNIST-shaped data set on the GPU,
gathered and normalised on the fly), SGD with momentum and weight decay 5e-4 written over the
stacked parameters (torch._foreach ops). Two modes: eager, and the whole step captured in a CUDA
graph by hand (static index tensor, refreshed before each replay), what an expert would do.
TF32 off (fp32, as bench_gpu_array).

    python3 torch_vmap.py [--k 1 2 4 8 16 32 64] [--batch 64] [--iters 300] [--warmup 30]
Prints `RESULT peer=torch-vmap k=.. batch=.. mode=eager|graph images_per_second=..` lines.
"""
import argparse
import copy
import time

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap

from torch_peer import lenet

ROWS = 16384


def run(k, batch, iters, warmup, graph):
    dev = torch.device("cuda")
    data = torch.randint(0, 256, (ROWS, 1, 28, 28), dtype=torch.uint8, device=dev)
    labels = torch.randint(0, 10, (ROWS,), device=dev)
    models = [lenet().to(dev) for _ in range(k)]
    params, buffers = stack_module_state(models)
    names = list(params.keys())
    base = copy.deepcopy(models[0]).to("meta")
    lr = torch.tensor([0.001 * (1 + i % 8) for i in range(k)], device=dev)
    mom = torch.tensor([0.9 if i % 2 else 0.8 for i in range(k)], device=dev)
    wd = 5e-4
    velocity = {n: torch.zeros_like(p) for n, p in params.items()}
    idx = torch.zeros((k, batch), dtype=torch.long, device=dev)

    def loss_fn(p, b, x, y):
        logits = functional_call(base, (p, b), (x,))
        return F.cross_entropy(logits, y)

    grads_of = vmap(grad(loss_fn), in_dims=(0, 0, 0, 0))

    def step():
        x = data[idx].float().div_(255.0).sub_(0.2860).div_(0.3530)  # (k, batch, 1, 28, 28)
        y = labels[idx]
        g = grads_of(params, buffers, x, y)
        with torch.no_grad():
            for n in names:
                shape = (k,) + (1,) * (params[n].dim() - 1)
                d = g[n].add(params[n], alpha=wd)
                velocity[n].mul_(mom.view(shape)).add_(d)
                params[n].sub_(velocity[n] * lr.view(shape))

    def new_indices():
        idx.copy_(torch.randint(0, ROWS, (k, batch), device=dev))

    return images_per_second(step, new_indices, k * batch, iters, warmup, graph)


def images_per_second(step, new_indices, images, iters, warmup, graph):
    """Times `iters` steps of `images` images after `warmup` eager ones, each after new_indices();
    graph: the step captured in a CUDA graph by hand (warmed on a side stream) and replayed."""
    for _ in range(warmup):
        new_indices()
        step()
    torch.cuda.synchronize()
    replay = step
    if graph:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        replay = g.replay
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(iters):
        new_indices()
        replay()
    torch.cuda.synchronize()
    return images * iters / (time.perf_counter() - t)


def main(peer="torch-vmap", run_k=None, default_k=(1, 2, 4, 8, 16, 32, 64)):
    """The command line of this script and of torch_hfta.py: run_k(k, batch, iters, warmup,
    graph) for each mode and K, one RESULT line each (fp32: TF32 off; cudnn.benchmark on)."""
    run_k = run_k or run
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, nargs="+", default=list(default_k))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--modes", nargs="+", default=["eager", "graph"])
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    for mode in a.modes:
        for k in a.k:
            try:
                ips = run_k(k, a.batch, a.iters, a.warmup, mode == "graph")
                print(f"RESULT peer={peer} k={k} batch={a.batch} mode={mode} "
                      f"images_per_second={ips:.0f}", flush=True)
            except Exception as e:  # a mode PyTorch cannot do at this K: say so, go on
                print(f"RESULT peer={peer} k={k} batch={a.batch} mode={mode} "
                      f"error={type(e).__name__}: {str(e)[:120]}", flush=True)


if __name__ == "__main__":
    main()
