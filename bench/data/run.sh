#!/usr/bin/env bash
# bench/data/run.sh [BUILD_DIR] — a folder data set's decode, sweep against Pillow.
#   1. Fashion-MNIST written as 70,000 PNG files (make_folder.py) into $FOLDER (default
#      /tmp/sweep-fmnist-png), once: kept for later runs.
#   2. bench_folder_decode on its train/ tree (60,000 files): the first load (decode on every
#      core + the cache file written) and the second (from the cache).
#   3. pillow_peer.py on the same tree: multiprocessing.Pool(2) decoding to numpy arrays.
# Both read files from the page cache (read once first). Prints both and the ratio.
# BENCH_BIN: another bench_folder_decode binary (a tree built without SWEEP_BUILD_BENCH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
folder=${FOLDER:-/tmp/sweep-fmnist-png}
python=${PYTHON:-/usr/bin/python3}
if [ ! -d "$folder/test" ]; then "$python" "$here/make_folder.py" "$folder"; fi
find "$folder/train" -type f -exec cat {} + >/dev/null  # into the page cache, for both
ours=$("${BENCH_BIN:-$build/bench/bench_folder_decode}" "$folder/train" ${THREADS:+--threads $THREADS})
echo "$ours"
peer=$("$python" "$here/pillow_peer.py" "$folder/train" "${PROCESSES:-2}")
echo "$peer"
a=$(sed -n 's/^RESULT sweep_files_per_s=//p' <<<"$ours")
b=$(sed -n 's/^RESULT pillow_files_per_s=//p' <<<"$peer")
echo "RESULT ratio_sweep_over_pillow=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
