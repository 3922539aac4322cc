#!/usr/bin/env bash
# bench/build/run.sh [TARGET] [cmake -D options...]: a clean build of TARGET (default: sweep, the
# binary ./run-demo needs) in a fresh tree without ccache, timed: wall clock, CPU (user + sys) and
# the ten costliest files from ninja's log. CPU time is what to compare between commits: it holds
# on a machine that is busy with other work, where wall time does not.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-sweep}; shift || true
dir=$(mktemp -d /tmp/sweep-build-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSWEEP_WITH_CUDA=OFF "$@" >/dev/null
/usr/bin/time -f '%e %U %S' -o "$dir/time" cmake --build "$dir" -j "$(nproc)" --target "$target" >/dev/null
read -r wall user sys < "$dir/time"
printf 'target %s on %s cores, commit %s\n' "$target" "$(nproc)" "$(git rev-parse --short HEAD)"
awk -v w="$wall" -v u="$user" -v s="$sys" \
  'BEGIN { printf "  wall %.0f s, CPU %.0f s (user %.0f + sys %.0f)\n", w, u + s, u, s }'
echo "  costliest steps (s, from .ninja_log):"
awk 'NR > 1 { printf "%8.1f  %s\n", ($2 - $1) / 1000, $4 }' "$dir/.ninja_log" | sort -rn | head -10
