"""The search benchmark's objectives, as Optuna's side sees them.

The same six objectives as bench/search/objectives.cpp, term for term (both use the C library's
exp/log10/cos, so a point gives the same value on both sides: `bench_search --check` prints
points and values that `optuna_search.py --check` re-evaluates). All are minimised.

Each objective: a search space (name → Optuna distribution, in the C++ space's order; Optuna's
FloatDistribution(log=True) is sweep's log_uniform_values, IntDistribution is int_uniform,
CategoricalDistribution is categorical) and value(params, seed, trial). Only lr_noisy is noisy;
its noise is a standard normal drawn from (run seed, trial number) alone, so both samplers see
the same noise model and the same draw for the same trial number.
"""
import math

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def bench_noise(seed, trial):
    """Standard normal from (seed, trial) only: splitmix64 → two 53-bit uniforms → Box-Muller."""
    a = splitmix64(splitmix64(seed) ^ trial)
    b = splitmix64(a)
    u1 = (a >> 11) * (1.0 / 9007199254740992.0)
    u2 = (b >> 11) * (1.0 / 9007199254740992.0)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def _xs(params, n):
    return [params["x%d" % i] for i in range(n)]


def sphere(params, seed, trial):
    return sum(x * x for x in _xs(params, 5))


def rosenbrock(params, seed, trial):
    x = _xs(params, 5)
    total = 0.0
    for i in range(4):
        total += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return total


def branin(params, seed, trial):
    x1, x2 = params["x0"], params["x1"]
    b = 5.1 / (4.0 * math.pi * math.pi)
    c = 5.0 / math.pi
    t = 1.0 / (8.0 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * math.cos(x1) + 10.0


HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]
HARTMANN_A = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
]
HARTMANN_P = [
    [0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
    [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
    [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
    [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381],
]


def hartmann6(params, seed, trial):
    x = _xs(params, 6)
    total = 0.0
    for i in range(4):
        inner = 0.0
        for j in range(6):
            d = x[j] - HARTMANN_P[i][j]
            inner += HARTMANN_A[i][j] * d * d
        total += HARTMANN_ALPHA[i] * math.exp(-inner)
    return -total


LR_BEST = 3e-3
LR_NOISE_SD = 0.02


def lr_curve(lr):
    """A validation loss against the learning rate: a parabola in log10(lr) around 3e-3, steeper
    above it (too large a rate diverges)."""
    u = math.log10(lr / LR_BEST)
    loss = 0.25 + 0.08 * u * u
    if u > 0.0:
        loss += 0.3 * u * u * u
    return loss


def lr_noisy(params, seed, trial):
    return lr_curve(params["lr"]) + LR_NOISE_SD * bench_noise(seed, trial)


def lr_noisy_clean(params):
    return lr_curve(params["lr"])


# mixed: per optimizer, a floor, the best depth and the best learning rate.
MIXED = {
    "sgd": (0.15, 4, 3e-2),
    "adam": (0.0, 3, 1e-3),
    "rmsprop": (0.08, 6, 3e-4),
}


def mixed(params, seed, trial):
    floor, best_layers, best_lr = MIXED[params["optimizer"]]
    dl = params["layers"] - best_layers
    u = math.log10(params["lr"] / best_lr)
    return floor + 0.04 * dl * dl + 0.3 * u * u


def _floats(n, low, high):
    return {"x%d" % i: FloatDistribution(low, high) for i in range(n)}


OBJECTIVES = {
    "sphere5": (_floats(5, -5.0, 5.0), sphere),
    "rosenbrock5": (_floats(5, -2.048, 2.048), rosenbrock),
    "branin": ({"x0": FloatDistribution(-5.0, 10.0), "x1": FloatDistribution(0.0, 15.0)}, branin),
    "hartmann6": (_floats(6, 0.0, 1.0), hartmann6),
    "lr_noisy": ({"lr": FloatDistribution(1e-6, 1.0, log=True)}, lr_noisy),
    "mixed": (
        {
            "optimizer": CategoricalDistribution(["sgd", "adam", "rmsprop"]),
            "layers": IntDistribution(1, 8),
            "lr": FloatDistribution(1e-5, 1e-1, log=True),
        },
        mixed,
    ),
}

# The noise-free value of a noisy objective (the table reports it beside the observed best).
CLEAN = {"lr_noisy": lr_noisy_clean}
