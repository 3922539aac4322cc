#!/usr/bin/env bash
# GPU throughput: sweep's CUDA backend vs PyTorch on the same GPU, in the same run.
#   bench/gpu/run.sh [BENCH_BINARY] [extra flags for both...]
# BENCH_BINARY defaults to .gpu/bin/bench_gpu_lenet (the bundle, see /work/shared/gpu/README.md),
# then build-gpu/bench/gpu/bench_gpu_lenet. Runs it, then bench_gpu_train from the same folder
# (LeNet through train() itself, the loop's graph path: what a user gets; skipped when DATA has no
# Fashion-MNIST), then bench/gpu/torch_peer.py with the same flags, and prints images/s for each
# case with sweep/torch-eager and sweep/torch-graph ratios (sweep's best of its step modes, and
# train() alone). Environment: PYTHON (python3), DATA (Fashion-MNIST directory; default .gpu/data,
# then /usr/share/datasets/fashion-mnist).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-}"
[ $# -gt 0 ] && shift
if [ -z "$bin" ]; then
  for candidate in "$root/.gpu/bin/bench_gpu_lenet" "$root/build-gpu/bench/gpu/bench_gpu_lenet"; do
    [ -x "$candidate" ] && { bin="$candidate"; break; }
  done
fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "run.sh: bench_gpu_lenet not found; build or bundle it" >&2; exit 1; }
python="${PYTHON:-python3}"
out="$(mktemp)"; trap 'rm -f "$out"' EXIT

echo "== sweep ($bin)"
"$bin" "$@" | tee -a "$out"
train_bin="$(dirname "$bin")/bench_gpu_train"
data="${DATA:-}"
if [ -z "$data" ]; then
  for candidate in "$root/.gpu/data" /usr/share/datasets/fashion-mnist; do
    [ -d "$candidate" ] && { data="$candidate"; break; }
  done
fi
if [ -x "$train_bin" ] && [ -n "$data" ]; then
  echo "== sweep train() ($train_bin --data $data)"
  "$train_bin" --data "$data" | tee -a "$out"
else
  echo "== sweep train(): skipped (no bench_gpu_train beside $bin, or no Fashion-MNIST directory)"
fi
echo "== PyTorch peer"
"$python" "$root/bench/gpu/torch_peer.py" "$@" | tee -a "$out"

"$python" - "$out" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    key = (kv["model"], int(kv["batch"]), kv["precision"])
    rows.setdefault(key, {})[(kv["peer"], kv["mode"])] = float(kv["images_per_second"])
print(f"\n== images/s per training step (gather, forward, loss, backward, SGD-momentum)")
hdr = ("model", "batch", "prec", "sweep eager", "sweep graph", "sweep train()", "torch eager",
       "torch graph", "best/t.eager", "best/t.graph", "train()/t.eager", "train()/t.graph")
print("%-8s %-6s %-5s" % hdr[:3] + " %13s" * 9 % hdr[3:])
for (model, batch, prec), r in sorted(rows.items()):
    se, sg = r.get(("sweep", "eager"), 0), r.get(("sweep", "graph"), 0)
    st = r.get(("sweep", "train"), 0)
    te, tg = r.get(("torch", "eager"), 0), r.get(("torch", "graph"), 0)
    best = max(se, sg)
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "n/a"
    print("%-8s %-6d %-5s" % (model, batch, prec) + " %13.0f" * 5 % (se, sg, st, te, tg) +
          " %13s" * 4 % (ratio(best, te), ratio(best, tg), ratio(st, te), ratio(st, tg)))
PY
