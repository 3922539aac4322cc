#!/usr/bin/env python3
"""pillow_peer.py DIR [PROCESSES] — the peer of bench_folder_decode: every image file below
DIR/<class>/ decoded by Pillow to a numpy array (np.asarray(Image.open(f).convert(mode))) in a
multiprocessing.Pool of PROCESSES (default 2) workers, chunks of 256 files, the arrays sent back
and stacked into one uint8 (N, H, W) array, as a PyTorch ImageFolder-style loader would hold it.
Listing the files is timed apart. Prints `RESULT key=value` lines.
"""
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
from PIL import Image


def decode(paths):
    return np.stack([np.asarray(Image.open(p).convert("L")) for p in paths])


def main():
    root = sys.argv[1]
    processes = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    start = time.perf_counter()
    files = []
    for c in sorted(d for d in os.listdir(root) if not d.startswith(".")):
        for f in sorted(os.listdir(os.path.join(root, c))):
            files.append(os.path.join(root, c, f))
    listed = time.perf_counter()
    chunks = [files[i:i + 256] for i in range(0, len(files), 256)]
    with Pool(processes) as pool:
        pool_started = time.perf_counter()
        arrays = np.concatenate(pool.map(decode, chunks))
        done = time.perf_counter()
    assert arrays.shape[0] == len(files)
    print(f"RESULT pillow_files={len(files)}")
    print(f"RESULT pillow_list_s={listed - start:.3f}")
    print(f"RESULT pillow_decode_s={done - pool_started:.3f}")
    print(f"RESULT pillow_files_per_s={len(files) / (done - pool_started):.0f}")
    print(f"RESULT pillow_total_s={done - start:.3f}")


if __name__ == "__main__":
    main()
