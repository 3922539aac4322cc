#!/usr/bin/python3
"""Optuna's side of bench/search: TPESampler with its defaults on the objectives of objectives.py.

  optuna_search.py runs [--seeds 30] [--first-seed 0] [--budgets 50 100] [--batches 1 8] [--objectives ...] [--jobs 2]
  optuna_search.py timing [--history 1000] [--asks 50]
  optuna_search.py check FILE            # re-evaluate `bench_search --check` points, compare

runs: one JSON line per run, the same fields as bench_search's: objective, method ("optuna-tpe"),
seed, budget, batch, best (the lowest value told), best_clean (the noise-free value of that trial),
duplicates (eight at a time: whether two suggestions of one batch were equal), seconds. One at a
time is ask → evaluate → tell; eight at a time is ask 8 → evaluate 8 → tell 8 through the ask/tell
interface with constant_liar=True, which Optuna's documentation recommends for parallel
optimisation (running trials count as bad); the last batch is what remains of the budget.
TPESampler(seed=seed) otherwise keeps every default (10 start-up trials, 24 candidates,
univariate; --multivariate turns multivariate on, reported as optuna-tpe-multivariate, a
diagnostic beside sweep's multivariate default; --scaled-logpdf applies Optuna 3.5's fix of the
kernels' log-density, optuna#5110, also a diagnostic). Runs go over --jobs processes; each run is seeded, so the order does not matter.

timing: a study is given --history finished trials (random points of the space, told their
objective values through add_trials), then each of --asks suggestions is timed (study.ask with
the space's distributions, which samples every parameter) and told its value untimed; the median
and the 90th percentile in milliseconds, one JSON line per space (sphere5, mixed).
"""
import argparse
import json
import logging
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
import warnings

import numpy as np
import optuna

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objectives  # noqa: E402


def quiet_optuna():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    optuna.logging.disable_default_handler()
    logging.getLogger("optuna").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def scale_logpdf():
    """Optuna's fix of its truncated normal's log-density (optuna#5109, fixed by #5110 in 3.5):
    3.1's _truncnorm.logpdf leaves out -log(scale), so every Parzen kernel's density is its
    sigma times too large and wide kernels (the prior, isolated points) outweigh narrow ones in
    l(x)/g(x). A diagnostic: the recorded peer is 3.1 as Debian ships it."""
    truncnorm = optuna.samplers._tpe._truncnorm
    if getattr(truncnorm.logpdf, "scaled", False):
        return
    unscaled = truncnorm.logpdf

    def logpdf(x, a, b, loc=0, scale=1):
        return unscaled(x, a, b, loc, scale) - np.log(scale)

    logpdf.scaled = True
    truncnorm.logpdf = logpdf


def method_name(multivariate, scaled):
    return "optuna-tpe" + ("-multivariate" if multivariate else "") + (
        "-scaled-logpdf" if scaled else "")


def run_one(task):
    name, seed, budget, batch, multivariate, scaled = task
    quiet_optuna()
    if scaled:
        scale_logpdf()
    space, value_of = objectives.OBJECTIVES[name]
    clean_of = objectives.CLEAN.get(name)
    sampler = optuna.samplers.TPESampler(
        seed=seed, constant_liar=batch > 1, multivariate=multivariate)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    best = math.inf
    best_clean = math.inf
    duplicates = False
    asked = 0
    start = time.perf_counter()
    while asked < budget:
        trials = [study.ask(space) for _ in range(min(batch, budget - asked))]
        asked += len(trials)
        points = [tuple(t.params[k] for k in space) for t in trials]
        duplicates = duplicates or len(set(points)) != len(points)
        for trial in trials:
            value = value_of(trial.params, seed, trial.number)
            if value < best:
                best = value
                best_clean = clean_of(trial.params) if clean_of else value
            study.tell(trial, value)
    return {
        "objective": name,
        "method": method_name(multivariate, scaled),
        "seed": seed,
        "budget": budget,
        "batch": batch,
        "best": best,
        "best_clean": best_clean,
        "duplicates": duplicates,
        "seconds": round(time.perf_counter() - start, 4),
    }


def runs(args):
    tasks = [
        (name, seed, budget, batch, args.multivariate, args.scaled_logpdf)
        for name in args.objectives
        for budget in args.budgets
        for batch in args.batches
        for seed in range(args.first_seed, args.first_seed + args.seeds)
    ]
    # Longest first: the pool's last jobs are short ones, so both processes finish together.
    tasks.sort(key=lambda t: -t[2])
    with multiprocessing.Pool(args.jobs) as pool:
        for line in pool.imap_unordered(run_one, tasks, chunksize=1):
            print(json.dumps(line), flush=True)


def random_point(space, rng):
    point = {}
    for name, dist in space.items():
        if isinstance(dist, optuna.distributions.CategoricalDistribution):
            point[name] = rng.choice(dist.choices)
        elif isinstance(dist, optuna.distributions.IntDistribution):
            point[name] = rng.randint(dist.low, dist.high)
        elif dist.log:
            point[name] = math.exp(rng.uniform(math.log(dist.low), math.log(dist.high)))
        else:
            point[name] = rng.uniform(dist.low, dist.high)
    return point


def timing(args):
    quiet_optuna()
    for name in ("sphere5", "mixed"):
        space, value_of = objectives.OBJECTIVES[name]
        rng = random.Random(1)
        study = optuna.create_study(
            direction="minimize", sampler=optuna.samplers.TPESampler(seed=1))
        history = []
        for number in range(args.history):
            params = random_point(space, rng)
            history.append(optuna.trial.create_trial(
                params=params, distributions=space, value=value_of(params, 1, number)))
        study.add_trials(history)
        times = []
        for _ in range(args.asks):
            start = time.perf_counter()
            trial = study.ask(space)
            times.append((time.perf_counter() - start) * 1e3)
            study.tell(trial, value_of(trial.params, 1, trial.number))
        times.sort()
        print(json.dumps({
            "timing": "ask",
            "method": "optuna-tpe",
            "space": name,
            "history": args.history,
            "asks": args.asks,
            "median_ms": statistics.median(times),
            "p90_ms": times[int(0.9 * (len(times) - 1))],
        }), flush=True)


def check(args):
    """Re-evaluates bench_search --check's points; exits 1 when a value differs."""
    worst = 0.0
    count = 0
    with open(args.file) as f:
        for line in f:
            row = json.loads(line)
            _, value_of = objectives.OBJECTIVES[row["objective"]]
            ours = value_of(row["params"], row["seed"], row["trial"])
            diff = abs(ours - row["value"]) / max(1.0, abs(row["value"]))
            worst = max(worst, diff)
            count += 1
            if diff > 1e-12:
                print("check: %s differs at %s: C++ %r, Python %r"
                      % (row["objective"], row["params"], row["value"], ours), file=sys.stderr)
    print("check: %d points, largest relative difference %.3g" % (count, worst))
    return 0 if count > 0 and worst <= 1e-12 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("runs")
    r.add_argument("--seeds", type=int, default=30)
    r.add_argument("--first-seed", type=int, default=0,
                   help="seeds FIRST .. FIRST+SEEDS-1 (a fresh set to confirm a result)")
    r.add_argument("--budgets", type=int, nargs="+", default=[50, 100])
    r.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    r.add_argument("--objectives", nargs="+", default=list(objectives.OBJECTIVES),
                   choices=list(objectives.OBJECTIVES))
    r.add_argument("--jobs", type=int, default=os.cpu_count())
    r.add_argument("--multivariate", action="store_true",
                   help="TPESampler(multivariate=True): method optuna-tpe-multivariate")
    r.add_argument("--scaled-logpdf", action="store_true",
                   help="with Optuna 3.5's fix of the kernels' log-density (optuna#5110): "
                   "method optuna-tpe[-multivariate]-scaled-logpdf")
    t = sub.add_parser("timing")
    t.add_argument("--history", type=int, default=1000)
    t.add_argument("--asks", type=int, default=50)
    c = sub.add_parser("check")
    c.add_argument("file")
    args = parser.parse_args()
    if args.mode == "runs":
        runs(args)
    elif args.mode == "timing":
        timing(args)
    else:
        sys.exit(check(args))


if __name__ == "__main__":
    main()
