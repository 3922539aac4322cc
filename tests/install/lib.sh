# lib.sh — shared by the install and package tests (source it first).
#   locked CMD...   runs CMD holding the build lock, so that an install or a build of these tests
#                   never reads a build tree while another build on the machine writes it
#                   (SWEEP_BUILD_LOCK: the lock file, default /tmp/sweep-build.lock; "none": no lock)
#   fail MESSAGE    ends the test, exit 1
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

locked() {
  local lock=${SWEEP_BUILD_LOCK:-/tmp/sweep-build.lock}
  if [ "$lock" = none ] || ! command -v flock >/dev/null; then
    "$@"
  else
    flock -w 1800 "$lock" "$@" || fail "$* (or waited 30 min for the build lock $lock)"
  fi
}

# The generator of the build trees here: Ninja when installed, as scripts/build.
generator() { command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles"; }
