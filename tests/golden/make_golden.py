#!/usr/bin/python3
"""make_golden.py -- reference numbers from PyTorch for tests/trainer/golden_test.cpp.

Run with Debian's interpreter (torch 1.13 CPU):  /usr/bin/python3 tests/golden/make_golden.py [NAME...]
It writes lenet.gold, convnet_bn.gold, resnet_small.gold and mlp_regression.gold next to itself
(only the NAMEs given, if any); the C++ test reads them and never needs torch. mlp_regression is a
regression: one output, float "targets" instead of "labels", nn.MSELoss instead of cross-entropy.

The one non-obvious decision: weights and inputs are stored as float16 and used as the float32
values they convert to exactly, so both sides start from bit-identical numbers while the files
stay small (LeNet has 431k parameters). Large gradients are stored at a stride (every k-th value);
everything else is stored in full, as float32.

File format: the line "sweep-golden 1", then per tensor one header line
    <name> <f2|f4> <stride> <count> <dim0> [dim1 ...]
followed by <count> little-endian values of that type (the tensor's values 0, stride, 2*stride...).

Parameter order is our Network's flat layout: layer by layer, weight then bias, PyTorch layouts
(conv weight (K, C, R, S), linear weight (out, in), batch-norm gamma then beta); batch-norm state
is running_mean then running_var per layer. A residual block's are its own layers' in order, then
its projection's (conv weight, batch-norm gamma, beta): PyTorch's registration order of the
Residual module below, so parameters() and modules() walk them in our order.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "peers"))
import torch_lenet  # noqa: E402  (found through the line above)
BATCH, STEPS, CLASSES = 8, 10, 10
BIG = 50000          # tensors above this many values are stored at a stride
BIG_STRIDE = 3


def lenet():
    # Our `lenet` preset, the network the benchmarks' peers train too.
    return torch_lenet.lenet(CLASSES)


def convnet(width=4):
    # Our `convnet` preset with net_width 4, block_depth 1.
    layers, c_in = [], 3
    for b in range(3):
        c_out = width << b
        layers += [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU()]
        if b < 2:
            layers.append(nn.MaxPool2d(2, 2))
        c_in = c_out
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, CLASSES)]
    return nn.Sequential(*layers)


class Residual(nn.Module):
    """Our `residual` layer: relu(body(x) + shortcut(x)); the shortcut is the identity when the
    body keeps the shape, else a 1x1 conv (no bias, the body's stride) and batch norm."""

    def __init__(self, body, c_in, c_out, stride):
        super().__init__()
        self.body = nn.Sequential(*body)
        self.shortcut = None
        if c_in != c_out or stride != 1:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                          nn.BatchNorm2d(c_out))

    def forward(self, x):
        s = x if self.shortcut is None else self.shortcut(x)
        return torch.relu(self.body(x) + s)


def conv_bn(c_in, c_out, stride=1):
    return [nn.Conv2d(c_in, c_out, 3, stride, padding=1, bias=False), nn.BatchNorm2d(c_out)]


def resnet_small():
    # tests/trainer/golden_test.cpp's resnet_small_spec(): a stem, a block with an identity
    # shortcut, a block with a stride-2 projection, global average pooling, the classes.
    return nn.Sequential(
        *conv_bn(3, 4), nn.ReLU(),
        Residual(conv_bn(4, 4) + [nn.ReLU()] + conv_bn(4, 4), 4, 4, 1),
        Residual(conv_bn(4, 8, 2) + [nn.ReLU()] + conv_bn(8, 8), 4, 8, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, CLASSES))


def mlp_regression():
    # Our `mlp` shape on 12 float features: flatten, dense 16, relu, dense 1 (one output).
    return nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 1))


def as_f16_exact(a):
    """float16 values, and the float32 tensor they convert to exactly."""
    h = np.asarray(a, dtype=np.float32).astype(np.float16)
    return h, torch.from_numpy(h.astype(np.float32))


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(b"sweep-golden 1\n")

    def tensor(self, name, values, dtype="f4", stride=1):
        a = np.ascontiguousarray(np.asarray(values))
        flat = a.reshape(-1)[::stride]
        dims = " ".join(str(d) for d in (a.shape if a.ndim else (1,)))
        self.f.write(f"{name} {dtype} {stride} {flat.size} {dims}\n".encode())
        self.f.write(flat.astype("<f2" if dtype == "f2" else "<f4").tobytes())

    def close(self):
        self.f.close()


def make(name, net, input_shape, seed, regression=False):
    rng = np.random.default_rng(seed)
    out = Writer(os.path.join(HERE, name + ".gold"))
    # Weights: uniform in the PyTorch default range of each layer, stored as float16.
    params = list(net.parameters())
    with torch.no_grad():
        for i, p in enumerate(params):
            if p.dim() > 1:
                bound = 1.0 / np.sqrt(np.prod(p.shape[1:]))
                h, t = as_f16_exact(rng.uniform(-bound, bound, p.shape))
            elif isinstance(getattr(p, "_golden_owner", None), nn.BatchNorm2d):
                h, t = as_f16_exact(rng.uniform(0.5, 1.5, p.shape))
            else:
                h, t = as_f16_exact(rng.uniform(-0.2, 0.2, p.shape))
            p.copy_(t)
            out.tensor(f"param{i}", h, "f2")
    # Inputs: STEPS batches; batch 0 is also the one for logits and gradients.
    xs_h, xs = as_f16_exact(rng.standard_normal((STEPS, BATCH) + input_shape))
    out.tensor("inputs", xs_h, "f2")
    if regression:
        targets_h, targets = as_f16_exact(rng.standard_normal((STEPS, BATCH)))
        out.tensor("targets", targets_h, "f2")
    else:
        labels = rng.integers(0, CLASSES, (STEPS, BATCH))
        out.tensor("labels", labels.astype(np.float32))
    initial = [p.detach().clone() for p in params]
    bn_layers = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    initial_buffers = [(m.running_mean.clone(), m.running_var.clone()) for m in bn_layers]

    def reset():
        with torch.no_grad():
            for p, v in zip(params, initial):
                p.copy_(v)
            for m, (rm, rv) in zip(bn_layers, initial_buffers):
                m.running_mean.copy_(rm)
                m.running_var.copy_(rv)
                m.num_batches_tracked.zero_()

    if regression:
        mse = nn.MSELoss()

        def loss_fn(outputs, s):
            return mse(outputs.squeeze(1), targets[s])
    else:
        xent = nn.CrossEntropyLoss()

        def loss_fn(outputs, s):
            return xent(outputs, torch.from_numpy(labels[s]))
    # One training-mode forward/backward on batch 0.
    net.train()
    net.zero_grad()
    logits = net(xs[0])
    loss = loss_fn(logits, 0)
    loss.backward()
    out.tensor("logits", logits.detach().numpy())
    out.tensor("loss", np.array([loss.item()], dtype=np.float32))
    for i, p in enumerate(params):
        g = p.grad.numpy()
        out.tensor(f"grad{i}", g, "f4", BIG_STRIDE if g.size > BIG else 1)
    for j, m in enumerate(bn_layers):
        out.tensor(f"running_mean{j}", m.running_mean.numpy())
        out.tensor(f"running_var{j}", m.running_var.numpy())

    # Ten optimizer steps over the fixed batch sequence, from the same initial weights.
    for opt_name, make_opt in (("sgdm", lambda: torch.optim.SGD(params, lr=0.01, momentum=0.9,
                                                                 weight_decay=5e-4)),
                               ("adam", lambda: torch.optim.Adam(params, lr=1e-3))):
        reset()
        opt = make_opt()
        losses = []
        net.train()
        for s in range(STEPS):
            opt.zero_grad()
            l = loss_fn(net(xs[s]), s)
            l.backward()
            opt.step()
            losses.append(l.item())
        out.tensor(f"{opt_name}_losses", np.array(losses, dtype=np.float32))
        net.eval()
        with torch.no_grad():
            out.tensor(f"{opt_name}_eval_logits", net(xs[0]).numpy())
        net.train()
    out.close()
    print(name, os.path.getsize(os.path.join(HERE, name + ".gold")), "bytes", file=sys.stderr)


def mark_bn_params(net):
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.weight._golden_owner = m
    return net


# name: (model, input shape, seed). Each file depends only on its own entry.
CASES = {
    "lenet": (lenet, (1, 28, 28), 1234),
    "convnet_bn": (lambda: mark_bn_params(convnet()), (3, 16, 16), 4321),
    "resnet_small": (lambda: mark_bn_params(resnet_small()), (3, 8, 8), 2468),
    "mlp_regression": (mlp_regression, (12, 1, 1), 1357),
}

torch.manual_seed(0)
for case in sys.argv[1:] or CASES:
    if case not in CASES:
        sys.exit(f"make_golden.py: no case {case!r} (cases: {', '.join(CASES)})")
    build, shape, seed = CASES[case]
    make(case, build(), shape, seed, regression=case == "mlp_regression")
