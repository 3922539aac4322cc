#!/usr/bin/env python3
"""Runs every command block of README.md and of docs/*.md, so the pages cannot drift from the
program.

A ```sh block runs as a bash script; a ```console block runs its `$ ` lines (their printed output
is an example and is not compared). Each must exit 0. A block that cannot run here says why, and
which test runs it instead, on the line before its fence:
    <!-- readme-test: skip: installs into /usr/local (tests/install/find_package.sh) -->
Every path in the parentheses must exist, so the skip cannot outlive its reason.

Blocks run in a scratch directory holding a copy of configs/, with `sweep` on PATH. The real
binary is wrapped to add `--set data.train_limit=... --set data.test_limit=...` to `run` and
`submit`, so a 60,000-image sweep of the README trains on a slice in CI; the command lines are the
README's, word for word. SWEEP_HOME is the scratch directory, so the queue is the test's own; the
workers it starts are stopped at the end.

    readme_commands.py SWEEP_BINARY SOURCE_DIR
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TRAIN_LIMIT = 600
TEST_LIMIT = 200


def blocks(readme_path):
    """(first line number, language, text, skip reason or None) per ```sh / ```console block."""
    lines = open(readme_path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(sh|console)\s*$", lines[i])
        if not m:
            i += 1
            continue
        prev = lines[i - 1].strip() if i > 0 else ""
        skip = re.match(r"^<!-- readme-test: skip: (.+) -->$", prev)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((i + 1, m.group(1), "\n".join(lines[i + 1:j]), skip.group(1) if skip else None))
        i = j + 1
    return out


def script_of(language, text):
    if language == "sh":
        return text
    commands = [line[2:] for line in text.split("\n") if line.startswith("$ ")]
    return "\n".join(commands)


def write_wrapper(directory, binary):
    wrapper = os.path.join(directory, "sweep")
    with open(wrapper, "w") as f:
        f.write(f"""#!/usr/bin/env bash
# tests/readme: the README's commands on a slice of the data (see readme_commands.py)
case "$1" in
  run|submit) exec {binary} "$@" --set data.train_limit={TRAIN_LIMIT} --set data.test_limit={TEST_LIMIT} ;;
  *) exec {binary} "$@" ;;
esac
""")
    os.chmod(wrapper, 0o755)


def stop_workers(home):
    """Ends the detached queue workers started with this SWEEP_HOME, and waits until they are
    gone: a worker still finishing a trial would write into the scratch directory while it is
    removed."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"SWEEP_HOME={home}".encode() in env:
            pids.append(int(pid))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + 20
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if os.path.exists(f"/proc/{p}") and not zombie(p)]
        time.sleep(0.05)
    for pid in pids:  # still there after 20 s: no more waiting
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def pages(source):
    """README.md, then every docs/*.md, as paths relative to SOURCE."""
    docs = sorted(os.path.relpath(p, source) for p in glob.glob(os.path.join(source, "docs", "*.md")))
    return ["README.md"] + docs


def run_block(binary, source, name, line, language, text, failures):
    with tempfile.TemporaryDirectory(prefix="sweep-readme-") as scratch:
        shutil.copytree(os.path.join(source, "configs"), os.path.join(scratch, "configs"))
        bin_dir = os.path.join(scratch, ".bin")
        os.mkdir(bin_dir)
        write_wrapper(bin_dir, binary)
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], SWEEP_HOME=scratch)
        script = "set -euo pipefail\n" + script_of(language, text)
        started = time.monotonic()
        try:
            result = subprocess.run(["bash", "-c", script], cwd=scratch, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, timeout=600)
            code, output = result.returncode, result.stdout
        except subprocess.TimeoutExpired as e:
            code, output = "timeout", (e.stdout or b"").decode(errors="replace")
        finally:
            stop_workers(scratch)
        took = time.monotonic() - started
        print(f"{name}:{line}: {language} block, exit {code}, {took:.0f} s")
        if code != 0:
            failures.append(f"{name}:{line}: the {language} block exited {code}:\n" +
                            "\n".join(output.split("\n")[-40:]))


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failures = []
    ran = 0
    for name in pages(source):
        for line, language, text, skip in blocks(os.path.join(source, name)):
            if skip:
                named = re.findall(r"\(([^)]*)\)", skip)
                files = [w for n in named for w in re.findall(r"[\w.-]*/[\w./-]+", n)]
                if not files:
                    failures.append(f"{name}:{line}: skipped block names no test file that runs it")
                for file in files:
                    if not os.path.exists(os.path.join(source, file)):
                        failures.append(f"{name}:{line}: the skip names {file}, which does not exist")
                print(f"{name}:{line}: skipped ({skip})")
                continue
            run_block(binary, source, name, line, language, text, failures)
            ran += 1
    if ran == 0:
        failures.append("README.md, docs/*.md: no command block ran")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
