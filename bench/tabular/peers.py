#!/usr/bin/env python3
"""peers.py DATA_DIR — the tabular benchmark's peers on make_data.py's CSV files, at the budget
sweep's configs use (bench/tabular/*.yaml): an MLP 20 -> 256 -> 128 -> out with ReLU, Adam
lr 1e-3, batch 64, 20 epochs, features standardised with the training split's mean and std.

  scikit-learn: MLPClassifier / MLPRegressor(hidden_layer_sizes=(256, 128), solver="adam",
                learning_rate_init=1e-3, batch_size=64, max_iter=20, alpha=0, tol=0,
                n_iter_no_change=20, random_state=1) (no early stopping; sklearn's own init)
  PyTorch:      the same MLP (torch.nn.Linear's default init), CrossEntropyLoss / MSELoss,
                torch.optim.Adam, shuffled every epoch, 2 threads.

Prints one JSON line per (peer, task): test accuracy (classification) or test RMSE, MAE and R^2
(regression), and the training time.
"""
import json
import sys
import time
import warnings

import numpy as np

EPOCHS, BATCH, LR = 20, 64, 1e-3


def load(path):
    data = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=np.float64)
    return data[:, :-1].astype(np.float32), data[:, -1]


def standardise(train, test):
    mean, std = train.mean(0), train.std(0)
    std[std < 1e-12] = 1
    return (train - mean) / std, (test - mean) / std


def regression_scores(pred, y):
    err = pred - y
    ss_res, ss_tot = float((err**2).sum()), float(((y - y.mean()) ** 2).sum())
    return {"rmse": float(np.sqrt((err**2).mean())), "mae": float(np.abs(err).mean()),
            "r2": 1 - ss_res / ss_tot}


def sklearn_peer(task, xtr, ytr, xte, yte):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    args = dict(hidden_layer_sizes=(256, 128), solver="adam", learning_rate_init=LR,
                batch_size=BATCH, max_iter=EPOCHS, alpha=0.0, tol=0.0, n_iter_no_change=EPOCHS,
                random_state=1)
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if task == "classification":
            m = MLPClassifier(**args).fit(xtr, ytr.astype(int))
            out = {"accuracy": float((m.predict(xte) == yte.astype(int)).mean())}
        else:
            m = MLPRegressor(**args).fit(xtr, ytr)
            out = regression_scores(m.predict(xte), yte)
    out["seconds"] = time.time() - t0
    return out


def torch_peer(task, xtr, ytr, xte, yte):
    import torch
    torch.manual_seed(1)
    torch.set_num_threads(2)
    classes = int(ytr.max()) + 1 if task == "classification" else 1
    net = torch.nn.Sequential(torch.nn.Linear(xtr.shape[1], 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, classes))
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    x = torch.from_numpy(xtr)
    y = (torch.from_numpy(ytr.astype(np.int64)) if task == "classification"
         else torch.from_numpy(ytr.astype(np.float32)).unsqueeze(1))
    loss_fn = torch.nn.CrossEntropyLoss() if task == "classification" else torch.nn.MSELoss()
    t0 = time.time()
    for _ in range(EPOCHS):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss_fn(net(x[idx]), y[idx]).backward()
            opt.step()
    seconds = time.time() - t0
    with torch.no_grad():
        out = net(torch.from_numpy(xte))
    if task == "classification":
        res = {"accuracy": float((out.argmax(1).numpy() == yte.astype(int)).mean())}
    else:
        res = regression_scores(out.squeeze(1).numpy().astype(np.float64), yte)
    res["seconds"] = seconds
    return res


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "tabular-data"
    for task in ("classification", "regression"):
        xtr, ytr = load(f"{data}/{task}_train.csv")
        xte, yte = load(f"{data}/{task}_test.csv")
        xtr, xte = standardise(xtr, xte)
        for name, peer in (("scikit-learn", sklearn_peer), ("pytorch", torch_peer)):
            print(json.dumps({"peer": name, "task": task, **peer(task, xtr, ytr, xte, yte)}),
                  flush=True)


if __name__ == "__main__":
    main()
