#!/usr/bin/env bash
# Search quality: sweep's TPE vs Optuna's TPE (Debian's python3-optuna) vs sweep's random search,
# on the six objectives of objectives.h / objectives.py, in the same run. Builds nothing.
#   bench/search/run.sh [BUILD_DIR] [--quick]          (BUILD_DIR default: build)
# Needs Debian's python3-optuna (scripts/install-deps --bench).
# 1. bench_search --check and optuna_search.py check: both sides' objectives give the same values.
# 2. bench_search: sweep-tpe and sweep-random, SEEDS seeds × budgets 50, 100 × one / eight at a
#    time, then --timing (one ask with 1,000 finished trials).
# 3. optuna_search.py runs and timing: the same for Optuna's TPESampler.
# 4. compare.py: the Markdown table (medians, Mann-Whitney p-values, duplicates, ask times).
# --quick: 5 seeds instead of 30 (the recorded figures use 30). Outputs stay in OUT_DIR.
# Environment: SEEDS (30), JOBS (nproc), PYTHON (/usr/bin/python3), OUT_DIR (a new temp folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build"
seeds="${SEEDS:-30}"
for arg in "$@"; do
  case "$arg" in
    --quick) seeds="${SEEDS:-5}" ;;
    -*) echo "run.sh: unknown option $arg (usage: run.sh [BUILD_DIR] [--quick])" >&2; exit 2 ;;
    *) build="$arg" ;;
  esac
done
jobs="${JOBS:-$(nproc)}"
python="${PYTHON:-/usr/bin/python3}"
bin="$build/bench/search/bench_search"
[ -x "$bin" ] || { echo "run.sh: $bin not found; build the bench_search target first" >&2; exit 1; }
out="${OUT_DIR:-$(mktemp -d /tmp/bench-search.XXXXXX)}"
mkdir -p "$out"

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f s", b - a }'; }

echo "== objectives agree (C++ vs Python)"
"$bin" --check > "$out/check.jsonl"
"$python" "$here/optuna_search.py" check "$out/check.jsonl"

echo "== sweep: tpe and random, $seeds seeds, $jobs threads"
t=$(seconds)
"$bin" --seeds "$seeds" --jobs "$jobs" > "$out/sweep.jsonl"
"$bin" --timing >> "$out/sweep.jsonl"
echo "   $(grep -c '"objective"' "$out/sweep.jsonl") runs in $(elapsed "$t")"

echo "== Optuna $("$python" -c 'import optuna; print(optuna.__version__)'): TPESampler, $seeds seeds, $jobs processes"
t=$(seconds)
"$python" "$here/optuna_search.py" runs --seeds "$seeds" --jobs "$jobs" > "$out/optuna.jsonl"
"$python" "$here/optuna_search.py" timing >> "$out/optuna.jsonl"
echo "   $(grep -c '"objective"' "$out/optuna.jsonl") runs in $(elapsed "$t")"

echo "== comparison ($(date -u +%F), $(nproc) cores; outputs in $out)"
echo
"$python" "$here/compare.py" "$out/sweep.jsonl" "$out/optuna.jsonl"
