#!/usr/bin/env python3
"""make_data.py OUT_DIR — the tabular benchmark's two data sets, as CSV files, from scikit-learn's
documented generators with fixed seeds:

  classification: make_classification(n_samples=20000, n_features=20, n_informative=12,
                  n_redundant=4, n_classes=5, class_sep=1.0, flip_y=0.01, random_state=7)
  regression:     make_regression(n_samples=20000, n_features=20, n_informative=12, noise=10.0,
                  random_state=7), then y = y + 0.01 * y**2 / std(y) (a mild non-linearity, so an
                  MLP has something to learn beyond a linear fit)

Each is split 80/20 in file order into NAME_train.csv and NAME_test.csv, header f0..f19,label
(the regression target column is called `target`). Features are written as generated, not scaled:
standardisation is the trainer's job.
"""
import csv
import os
import sys

import numpy as np
from sklearn.datasets import make_classification, make_regression


def write(path, x, y, label):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"f{i}" for i in range(x.shape[1])] + [label])
        for row, t in zip(x, y):
            w.writerow([f"{v:.7g}" for v in row] + [t if label == "label" else f"{t:.7g}"])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tabular-data"
    os.makedirs(out, exist_ok=True)
    x, y = make_classification(n_samples=20000, n_features=20, n_informative=12, n_redundant=4,
                               n_classes=5, class_sep=1.0, flip_y=0.01, random_state=7)
    cut = 16000
    write(f"{out}/classification_train.csv", x[:cut], y[:cut], "label")
    write(f"{out}/classification_test.csv", x[cut:], y[cut:], "label")
    x, y = make_regression(n_samples=20000, n_features=20, n_informative=12, noise=10.0,
                           random_state=7)
    y = y + 0.01 * y**2 / np.std(y)
    write(f"{out}/regression_train.csv", x[:cut], y[:cut], "target")
    write(f"{out}/regression_test.csv", x[cut:], y[cut:], "target")
    print(f"wrote {out}/{{classification,regression}}_{{train,test}}.csv")


if __name__ == "__main__":
    main()
