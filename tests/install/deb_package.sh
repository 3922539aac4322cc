#!/usr/bin/env bash
# The .deb as a user gets it: scripts/package builds it (the CPU + MPI build, in build-deb),
# `dpkg -i` installs it, and the installed sweep works: `sweep version`; the shipped quickstart
# from /usr/share/sweep/configs (on synthetic data, small) in a temporary directory, with its
# store and report; an external-command trial that imports the Python helper installed beside
# the binary; the system Python imports the helper too. `dpkg -r sweep` at the end, whatever
# happened, leaves the machine as it was.
# It needs root and dpkg (exit 77 otherwise), and it never replaces anything it did not install:
# it skips when a sweep package is installed already or when a file of the .deb exists already.
#   deb_package.sh SOURCE_DIR
source "$(dirname "$0")/lib.sh"
SRC=$(readlink -f "$1")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: dpkg -i needs root"; exit 77; }
for tool in dpkg dpkg-deb dpkg-shlibdeps cpack sqlite3; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found (Debian: dpkg-dev, cmake, sqlite3)"; exit 77; }
done
if status=$(dpkg-query -W -f='${Status} ${Version}' sweep 2>/dev/null) &&
   [[ "$status" != *not-installed* ]]; then
  echo "SKIP: a sweep package is installed already ($status): this test would replace it"
  exit 77
fi
WORK=$(mktemp -d /tmp/sweep-deb-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

start=$SECONDS
deb=$(locked "$SRC/scripts/package" 2> package.log) || { tail -50 package.log; fail "scripts/package"; }
echo "made $deb in $((SECONDS - start)) s"
[ -f "$deb" ] || fail "scripts/package printed '$deb', which is not a file"
dpkg-deb -f "$deb" Package | grep -qx sweep || fail "the package is not named sweep"
dpkg-deb -f "$deb" Depends | grep -q libtbb || fail "no dependencies from dpkg-shlibdeps: $(dpkg-deb -f "$deb" Depends)"

# Every file it would install is new to this machine (dpkg itself refuses another package's
# files; this also keeps files no package owns, such as a `cmake --install --prefix /usr`).
clash=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' |
        while read -r f; do if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done)
if [ -n "$clash" ]; then
  echo "SKIP: installing would replace files already on this machine:" $clash
  exit 77
fi

trap 'dpkg -r sweep > /dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
dpkg -i "$deb" > dpkg.log 2>&1 || { cat dpkg.log; fail "dpkg -i $deb"; }
[ -x /usr/bin/sweep ] || fail "/usr/bin/sweep not installed"

/usr/bin/sweep version > version.txt || fail "/usr/bin/sweep version"
grep -qx "sweep $(dpkg-deb -f "$deb" Version)" version.txt || { cat version.txt; fail "sweep version"; }

# The shipped quickstart, shrunk: 6 trials of one epoch on 512 synthetic images.
/usr/bin/sweep run /usr/share/sweep/configs/quickstart.yaml --out runs --set data.dataset=synthetic \
  --set data.synthetic.train_size=512 --set data.synthetic.test_size=128 --set training.epochs=1 \
  > quickstart.txt 2>&1 || { cat quickstart.txt; fail "sweep run /usr/share/sweep/configs/quickstart.yaml"; }
completed=$(sqlite3 runs/quickstart/sweep.db "select count(*) from trials where state = 'completed'")
[ "$completed" = 6 ] || { cat quickstart.txt; fail "$completed of 6 quickstart trials completed"; }
[ -s runs/quickstart/report.html ] || fail "no report.html"

# An external trainer that imports the helper: the installed binary puts /usr/share/sweep/python
# on PYTHONPATH, and hands the trial its parameters.
cat > where.py <<'PY'
import sweep_trial
print("helper:", sweep_trial.__file__)
sweep_trial.log(step=0, x=sweep_trial.params()["x"])
PY
cat > where.yaml <<'YAML'
name: where
trainer: {command: "python3 where.py", metric_timeout: 60}
sweep: {method: grid, metric: {name: x, goal: maximize}, parameters: {x: {values: [7]}}}
resources: {execution: cpu, cpu_slots: 1}
YAML
env -u PYTHONPATH /usr/bin/sweep run where.yaml --out runs > where.txt 2>&1 ||
  { cat where.txt; fail "an external-command sweep under /usr/bin/sweep"; }
grep -qx "helper: /usr/share/sweep/python/sweep_trial.py" runs/where/trials/000/log.txt ||
  { cat runs/where/trials/000/log.txt; fail "the trial did not import /usr/share/sweep/python/sweep_trial.py"; }
[ "$(sqlite3 runs/where/sweep.db "select value from metrics where name = 'x'")" = 7.0 ] ||
  fail "the trial did not report x = 7 from sweep_trial.params()"

# The system Python finds the helper with no PYTHONPATH (dist-packages).
if [ -x /usr/bin/python3 ]; then
  found=$(cd / && env -u PYTHONPATH /usr/bin/python3 -c 'import sweep_trial; print(sweep_trial.__file__)') ||
    fail "/usr/bin/python3 cannot import sweep_trial"
  [ "$found" = /usr/lib/python3/dist-packages/sweep_trial.py ] || fail "/usr/bin/python3 imported $found"
fi

dpkg -r sweep > remove.log 2>&1 || { cat remove.log; fail "dpkg -r sweep"; }
[ ! -e /usr/bin/sweep ] || fail "/usr/bin/sweep is still there after dpkg -r"
echo "PASS: $(basename "$deb") installed, ran the quickstart and an external trainer, and was removed" \
     "($((SECONDS - start)) s in all)"
