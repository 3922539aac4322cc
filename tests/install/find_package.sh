#!/usr/bin/env bash
# `cmake --install` of the build tree into a temporary prefix, then examples/ built as a separate
# project through find_package(sweep) against that prefix alone, and run (three tiny LeNet trials
# on synthetic data, two CPU slots). Also checked: every header the installed headers include is
# installed; the exported targets carry no flag of our build (warnings, sanitizers) and no path
# into the source or build tree; the installed binary finds the Python helper installed beside it.
#   find_package.sh BUILD_DIR SOURCE_DIR
source "$(dirname "$0")/lib.sh"
BUILD=$(readlink -f "$1")
SRC=$(readlink -f "$2")
WORK=$(mktemp -d /tmp/sweep-install-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix

# An install copies what the build made; it builds nothing.
locked cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; fail "cmake --install $BUILD"; }
for f in bin/sweep include/sweep/sweep/queue/queue.h include/sweep/scheduler/scheduler.h \
         include/sweep/trainer/train.h share/sweep/python/sweep_trial.py \
         share/sweep/configs/quickstart.yaml share/sweep/examples/CMakeLists.txt; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
config=$(find "$PREFIX" -name sweepConfig.cmake)
[ -n "$config" ] || fail "no sweepConfig.cmake under $PREFIX"
cmake_dir=$(dirname "$config")
for f in sweepConfigVersion.cmake sweepTargets.cmake; do
  [ -f "$cmake_dir/$f" ] || fail "not installed: $cmake_dir/$f"
done
! grep -lE -- '-W(all|extra|shadow)|fsanitize' "$cmake_dir"/*.cmake ||
  fail "the exported targets carry our build's warning or sanitizer flags"
! grep -lF -e "$SRC/" -e "$BUILD/" "$cmake_dir"/*.cmake ||
  fail "the exported targets name a path in the source or build tree"

# Headers: each #include "..." of an installed header is installed.
cd "$PREFIX/include/sweep"
missing=$(grep -rhoE '#include "[^"]+"' . | sed 's/#include "//; s/"$//' | sort -u |
          while read -r h; do [ -f "$h" ] || echo "$h"; done)
[ -z "$missing" ] || fail "installed headers include headers that are not installed: $missing"
cd "$WORK"

# The consumer: examples/ on its own, nothing of the source tree but its two files.
cmake -S "$SRC/examples" -B consumer -G "$(generator)" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > configure.log 2>&1 ||
  { cat configure.log; fail "configuring examples/ with find_package(sweep)"; }
! grep -qE -- "-I(system )?$SRC( |/)" consumer/compile_commands.json ||
  fail "the consumer compiled against the source tree's headers, not the installed ones"
grep -q -- "$PREFIX/include/sweep" consumer/compile_commands.json ||
  fail "the consumer did not compile against $PREFIX/include/sweep"
locked cmake --build consumer > build.log 2>&1 || { cat build.log; fail "building examples/"; }
timeout 300 consumer/parfor_learning_rates > run.txt 2>&1 ||
  { cat run.txt; fail "parfor_learning_rates exited with $?"; }
for lr in 0.003 0.010 0.030; do
  grep -qE "^learning_rate $lr: val_accuracy (0|1)\.[0-9]{4}$" run.txt ||
    { cat run.txt; fail "no result line for learning_rate $lr"; }
done
timeout 300 consumer/fused_array > fused.txt 2>&1 || { cat fused.txt; fail "fused_array exited with $?"; }
grep -q "^4 members trained at once$" fused.txt || { cat fused.txt; fail "fused_array: no array of 4"; }

# The installed binary, its version, and the helper it puts on PYTHONPATH: its own, not the
# source tree's.
"$PREFIX/bin/sweep" version | grep -q "^sweep [0-9]" || fail "installed sweep version"
cat > where.py <<'PY'
import sweep_trial
print("helper:", sweep_trial.__file__)
sweep_trial.log(step=0, found=1)
PY
cat > where.yaml <<'YAML'
name: where
trainer: {command: "python3 where.py", metric_timeout: 60}
sweep: {method: grid, metric: {name: found, goal: maximize}, parameters: {x: {values: [1]}}}
resources: {execution: cpu, cpu_slots: 1}
YAML
env -u PYTHONPATH "$PREFIX/bin/sweep" run where.yaml > where.txt 2>&1 ||
  { cat where.txt; fail "a command trial under the installed binary"; }
grep -q "^helper: $PREFIX/share/sweep/python/sweep_trial.py$" runs/where/trials/000/log.txt ||
  { cat runs/where/trials/000/log.txt; fail "the installed binary's trial did not import $PREFIX/share/sweep/python/sweep_trial.py"; }
# sweep::serve from outside: the sweep just run, as `sweep serve` would list it.
consumer/list_sweeps runs > list.txt 2>&1 || { cat list.txt; fail "list_sweeps exited with $?"; }
grep -q "^where: best 1 (trial 0)$" list.txt || { cat list.txt; fail "list_sweeps did not list 'where'"; }
echo "PASS: installed into $PREFIX; examples/ built with find_package(sweep), ran 3 trials, a" \
     "fused array of 4 and listed a sweep; the installed sweep found its Python helper"
