#!/usr/bin/python3
"""Writes the small .npy / .npz files the numpy reader tests read (npy_reader_test.cpp,
npz_reader_test.cpp), with numpy itself, so that the tests read what real users' numpy writes.
Run from this directory with Debian's python3-numpy: /usr/bin/python3 make_files.py"""
import numpy as np

x_train = np.arange(4 * 1 * 2 * 3, dtype=np.uint8).reshape(4, 1, 2, 3)
y_train = np.array([0, 1, 2, 1], dtype=np.uint8)
x_test = (np.arange(2 * 1 * 2 * 3, dtype=np.uint8) + 100).reshape(2, 1, 2, 3)
y_test = np.array([2, 0], dtype=np.int64)
np.savez("images.npz", x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
np.savez_compressed("images_compressed.npz", x_train=x_train, y_train=y_train, x_test=x_test,
                    y_test=y_test)

# (N, H, W, C): sample i, row r, column c, channel k holds 100 * i + 10 * k + 3 * r + c.
i, r, c, k = np.meshgrid(np.arange(2), np.arange(2), np.arange(3), np.arange(2), indexing="ij")
nhwc = (100 * i + 10 * k + 3 * r + c).astype(np.uint8)
np.savez("nhwc.npz", x_train=nhwc, y_train=np.array([1, 0], dtype=np.int32))

# Features and regression targets: float64 x (converted), float32 y.
features = np.array([[0.5, -1.25, 3.0], [2.0, 0.0, -0.5], [1e-3, 4.5, 7.0]], dtype=np.float64)
np.savez_compressed("regression.npz", x_train=features,
                    y_train=np.array([1.5, -2.0, 0.25], dtype=np.float32))

# One array in each header version.
for version in [(1, 0), (2, 0), (3, 0)]:
    with open("v%d.npy" % version[0], "wb") as f:
        np.lib.format.write_array(f, np.array([[1.5, 2.5], [3.5, -4.0]], dtype="<f4"),
                                  version=version)
