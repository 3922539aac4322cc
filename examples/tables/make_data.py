#!/usr/bin/python3
"""make_data.py — writes the example data sets of examples/tables/ into examples/tables/data/:

  digits.npz          scikit-learn's handwritten digits (1,797 8x8 grey images, 10 classes; they
                      ship inside scikit-learn, nothing is downloaded) as uint8 pixels 0-255,
                      written with np.savez_compressed under Keras' load_data() names
                      (x_train, y_train, x_test, y_test; x as (N, 8, 8), y as uint8)
  classification.csv  make_classification: 2,000 rows, 20 numeric features (8 informative),
  classification-val.csv   4 classes named by words; 500 more rows from the same draw
  regression.csv      make_regression: 2,000 rows, 10 features, a noisy linear target
  regression-val.csv  500 more rows from the same draw

Needs Debian's python3-numpy and python3-sklearn. Deterministic (fixed seeds). An argument names
another directory to write them into.
  /usr/bin/python3 examples/tables/make_data.py [DIR]
"""
import csv
import os
import sys

import numpy as np
from sklearn.datasets import load_digits, make_classification, make_regression

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data")
os.makedirs(OUT, exist_ok=True)

digits = load_digits()
images = np.round(digits.images * (255 / 16)).astype(np.uint8)  # (1797, 8, 8), 0-16 -> 0-255
labels = digits.target.astype(np.uint8)
order = np.random.default_rng(0).permutation(len(labels))
train, test = order[:1500], order[1500:]
np.savez_compressed(os.path.join(OUT, "digits.npz"), x_train=images[train],
                    y_train=labels[train], x_test=images[test], y_test=labels[test])


def write_csv(name, header, rows):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


x, y = make_classification(n_samples=2500, n_features=20, n_informative=8, n_redundant=4,
                           n_classes=4, class_sep=1.0, random_state=1)
names = np.array(["alpha", "beta", "gamma", "delta"])[y]
header = ["f%d" % i for i in range(20)] + ["label"]
rows = [["%.6g" % v for v in xs] + [n] for xs, n in zip(x, names)]
write_csv("classification.csv", header, rows[:2000])
write_csv("classification-val.csv", header, rows[2000:])

x, y = make_regression(n_samples=2500, n_features=10, n_informative=6, noise=10.0,
                       random_state=2)
header = ["f%d" % i for i in range(10)] + ["target"]
rows = [["%.6g" % v for v in xs] + ["%.6g" % t] for xs, t in zip(x, y)]
write_csv("regression.csv", header, rows[:2000])
write_csv("regression-val.csv", header, rows[2000:])
print("wrote", ", ".join(sorted(os.listdir(OUT))), "in", OUT)
