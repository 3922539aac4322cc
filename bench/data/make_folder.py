#!/usr/bin/env python3
"""make_folder.py OUT_DIR [IDX_DIR] — Fashion-MNIST as an image folder: OUT_DIR/train/<class>/
NNNNN.png (60,000 files) and OUT_DIR/test/<class>/NNNNN.png (10,000), one grey 28x28 PNG per
image (Pillow's default PNG encoder), NNNNN the image's index in its idx file. Classes are named
0_tshirt .. 9_boot so that their sorted order is the idx labels' order (a folder set trained
against the idx set then has the same label numbers). IDX_DIR defaults to Debian's
/usr/share/datasets/fashion-mnist. Needs python3-numpy and python3-pil.
"""
import gzip
import os
import sys

import numpy as np
from PIL import Image

NAMES = ["0_tshirt", "1_trouser", "2_pullover", "3_dress", "4_coat", "5_sandal", "6_shirt",
         "7_sneaker", "8_bag", "9_boot"]


def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    out = sys.argv[1]
    idx = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/datasets/fashion-mnist"
    for split, prefix in (("train", "train"), ("test", "t10k")):
        images = read_idx(os.path.join(idx, prefix + "-images-idx3-ubyte.gz"))
        labels = read_idx(os.path.join(idx, prefix + "-labels-idx1-ubyte.gz"))
        for name in NAMES:
            os.makedirs(os.path.join(out, split, name), exist_ok=True)
        for i, (image, label) in enumerate(zip(images, labels)):
            Image.fromarray(image, "L").save(os.path.join(out, split, NAMES[label], f"{i:05d}.png"))
        print(f"{split}: {len(labels)} PNG files in {os.path.join(out, split)}")


if __name__ == "__main__":
    main()
