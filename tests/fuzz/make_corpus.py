#!/usr/bin/env python3
"""make_corpus.py — writes the generated seeds of tests/fuzz/corpus/ (idx/, cifar/, checkpoint/).

Tiny valid files of each reader's format, raw and gzip (one member and concatenated members),
plus a few near-misses (a label out of range, a truncated gzip stream, counts that differ) for the
fuzzer to start from. Checkpoints in each version the reader takes (1, 2 without an identity; 3
with one), each behind the harness's flag byte, and near-misses (cut short, a flag byte of 2, a
negative epoch, a name longer than its bound). The config seeds are YAML files kept by hand (config/). Deterministic:
run it again and the files come out byte for byte the same.

  python3 tests/fuzz/make_corpus.py
"""
import gzip
import os
import random
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(1)


def gz(data):
    return gzip.compress(data, mtime=0)


def idx_images(n, h, w, pixels=None):
    pixels = pixels if pixels is not None else bytes((i * 7) % 256 for i in range(n * h * w))
    return struct.pack(">IIII", 0x803, n, h, w) + pixels


def idx_labels(labels):
    return struct.pack(">II", 0x801, len(labels)) + bytes(labels)


def idx_input(images, labels):
    """The fuzz_idx input: 2-byte big-endian images length, images file, labels file."""
    return struct.pack(">H", len(images)) + images + labels


def cifar_records(labels):
    out = b""
    for k, label in enumerate(labels):
        out += bytes([label]) + bytes((i + 31 * k) % 256 for i in range(3072))
    return out


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


three = idx_images(3, 4, 4)
three_labels = idx_labels([0, 9, 5])
write("idx", "raw-3x4x4", idx_input(three, three_labels))
write("idx", "gzip-images", idx_input(gz(three), three_labels))
write("idx", "gzip-labels", idx_input(three, gz(three_labels)))
write("idx", "gzip-both", idx_input(gz(three), gz(three_labels)))
write("idx", "gzip-two-members", idx_input(gz(three[:10]) + gz(three[10:]), three_labels))
write("idx", "mnist-shape-28x28",
      idx_input(idx_images(1, 28, 28, bytes(rng.randrange(256) for _ in range(784))),
                idx_labels([7])))
write("idx", "no-images", idx_input(idx_images(0, 1, 1), idx_labels([])))
write("idx", "trailing-bytes", idx_input(three + b"\0" * 5, three_labels + b"xyz"))
write("idx", "label-out-of-range", idx_input(three, idx_labels([0, 10, 1])))
write("idx", "counts-differ", idx_input(three, idx_labels([0, 1])))
write("idx", "gzip-truncated", idx_input(gz(three)[:-6], three_labels))
write("idx", "header-only", idx_input(three[:16], three_labels))

write("cifar", "raw-1-record", cifar_records([3]))
write("cifar", "raw-2-records", cifar_records([0, 9]))
write("cifar", "gzip-3-records", gz(cifar_records([1, 2, 3])))
write("cifar", "gzip-two-members", gz(cifar_records([4])) + gz(cifar_records([5, 6])))
write("cifar", "label-out-of-range", cifar_records([10]))
write("cifar", "truncated-record", cifar_records([2])[:-1])
write("cifar", "gzip-truncated", gz(cifar_records([7, 8]))[:-4])
write("cifar", "empty", b"")


def checkpoint(version, arrays, identity=(b"quickstart", 3, 0x1234ABCD5678EF00), flags=None,
               epoch=2, crc=True):
    """A checkpoint file as trainer/checkpoint.cpp writes it (little-endian, no padding)."""
    out = b"SWEEPCKP" + struct.pack("<I", version)
    out += b"".join(struct.pack("<Q", len(a)) for a in arrays)
    if version >= 3:
        name, trial, config_hash = identity
        out += struct.pack("<I", len(name)) + name + struct.pack("<qQ", trial, config_hash)
    out += struct.pack("<Qqq", 7, 32, 512)  # seed, batch size, training-set size
    has_last, has_best = flags if flags else (1, 1)
    out += struct.pack("<iqqqiqd", epoch, 3, 35, 35, epoch, 1120, 1.5)  # epoch .. elapsed
    for k in range(4):  # since_log, since_validation, this_epoch, last_epoch
        out += struct.pack("<ddd", 2.5 + k, 20.0, 32.0)
    out += struct.pack("<iBdd", 2, has_last, 0.7, 0.8)  # validations, last validation
    out += struct.pack("<BdddiqI", has_best, 0.8, 0.7, 0.8, 2, 32, 0)  # best .. bad_validations
    if version >= 2:
        out += struct.pack("<ddd", 0.5, 4.0, 8.0)  # pending
    out += b"".join(struct.pack("<%df" % len(a), *a) for a in arrays)
    return out + struct.pack("<I", zlib.crc32(out) if crc else 0)


def fixed_crc(data):
    """The harness input that writes the file's CRC itself (flag byte 1)."""
    return b"\x01" + data


arrays = [[0.5 * i - 1 for i in range(6)], [1.0, 2.0], [0.25] * 6, [], [-1.0] * 6, [3.0, 4.0]]
write("checkpoint", "v3-valid", b"\x00" + checkpoint(3, arrays))
write("checkpoint", "v3-outside-a-sweep", b"\x00" + checkpoint(3, arrays, identity=(b"", -1, 0)))
write("checkpoint", "v2-without-identity", b"\x00" + checkpoint(2, arrays))
write("checkpoint", "v1-without-identity", b"\x00" + checkpoint(1, arrays))
write("checkpoint", "v3-no-best-copy", b"\x00" + checkpoint(3, arrays[:4] + [[], []]))
write("checkpoint", "v3-truncated", b"\x00" + checkpoint(3, arrays)[:-9])
write("checkpoint", "v3-flag-of-2", fixed_crc(checkpoint(3, arrays, flags=(2, 1))))
write("checkpoint", "v3-negative-epoch", fixed_crc(checkpoint(3, arrays, epoch=-4)))
write("checkpoint", "v3-name-too-long",
      fixed_crc(checkpoint(3, arrays, identity=(b"n" * 5000, 0, 1))))
write("checkpoint", "v3-bad-checksum", b"\x00" + checkpoint(3, arrays, crc=False))
write("checkpoint", "v4-future", fixed_crc(checkpoint(3, arrays)[:8] + struct.pack("<I", 4) +
                                           checkpoint(3, arrays)[12:]))
write("checkpoint", "not-a-checkpoint", b"\x01PK\x03\x04" + bytes(40))
