#!/usr/bin/env python3
"""make_model_file_corpus.py — writes the seeds of tests/fuzz/corpus/model_file/.

Small model files (trainer/model_file.h) behind the harness's flag byte: an MLP on float values, a
net of every layer kind (conv, batch norm, ReLU, both poolings, a residual block with a projection
shortcut, GAP, dropout, flatten, dense) on pixels with folder decode settings, and near-misses (a
bad checksum, cut short, another version, absurd sizes, layers that take other arrays).
Deterministic: run it again and the files come out byte for byte the same.

  python3 tests/fuzz/make_model_file_corpus.py
"""
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "model_file")


def model_file(desc, params, state, version=1):
    text = json.dumps(desc, separators=(",", ":")).encode()
    body = b"SWEEPMDL" + struct.pack("<IQQQ", version, len(text), params, state) + text
    body += struct.pack("<%df" % (params + state), *[((i * 37) % 17) / 8.0 + 0.25
                                                      for i in range(params + state)])
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def desc(layers, c, h, w, outputs, values="uint8", decode=None, task="classification"):
    inp = {"c": c, "h": h, "w": w, "values": values, "scale": 1 / 255 if values == "uint8" else 1,
           "mean": [0.5] * c, "stdev": [0.25] * c}
    if decode:
        inp["decode"] = decode
    return {"task": task, "outputs": outputs,
            "class_names": [] if task == "regression" else ["c%d" % i for i in range(outputs)],
            "input": inp, "layers": layers, "sweep": "fuzz", "trial": 0, "output_network": "last"}


def dense(units):
    return {"type": "dense", "bias": 1, "units": units}


MLP = desc([{"type": "flatten"}, dense(4), {"type": "relu"}, {"type": "dropout", "rate": 0.5},
            dense(3)], 2, 1, 1, 3, values="float")
MLP_PARAMS = 2 * 4 + 4 + 4 * 3 + 3

conv = {"type": "conv", "bias": 0, "filters": 2, "kernel": 3, "stride": 1, "padding": "same"}
block = {"type": "residual", "activation": "relu",
         "layers": [{"type": "conv", "bias": 0, "filters": 3, "kernel": 3, "stride": 2,
                     "padding": 1}, {"type": "batchnorm", "eps": 1e-5, "momentum": 0.1}]}
ALL = desc([conv, {"type": "batchnorm", "eps": 1e-5, "momentum": 0.1}, {"type": "relu"},
            {"type": "maxpool", "size": 2, "stride": 1, "padding": 1},
            {"type": "avgpool", "size": 2, "stride": 1, "padding": 0}, block, {"type": "gap"},
            dense(2)], 1, 5, 5, 2, decode={"channels": 1, "height": 5, "width": 5,
                                            "resize": "stretch"})
# conv 2*1*9; bn 2+2 state 2+2; block conv 3*2*9, bn 3+3 state 3+3, projection 3*2 + bn 3+3
# state 3+3; dense 2*3+2
ALL_PARAMS = 18 + 4 + 54 + 6 + 6 + 6 + 8
ALL_STATE = 4 + 6 + 6

REGRESSION = desc([{"type": "flatten"}, dense(1)], 3, 1, 1, 1, values="float", task="regression")

seeds = {
    "mlp-float": model_file(MLP, MLP_PARAMS, 0),
    "every-layer": model_file(ALL, ALL_PARAMS, ALL_STATE),
    "regression": model_file(REGRESSION, 4, 0),
    "wrong-param-count": model_file(MLP, MLP_PARAMS - 1, 0),
    "version-2": model_file(MLP, MLP_PARAMS, 0, version=2),
}
good = seeds["mlp-float"]
seeds["bad-checksum"] = good[:-1] + bytes([good[-1] ^ 1])
seeds["truncated"] = good[: len(good) // 2]
seeds["absurd-sizes"] = good[:12] + struct.pack("<QQQ", 1 << 40, 1 << 40, 1 << 40) + good[36:]

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    # The flag byte: 1 (fix the checksum) for every seed but the one about the checksum.
    flag = b"\x00" if name == "bad-checksum" else b"\x01"
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(flag + data)
