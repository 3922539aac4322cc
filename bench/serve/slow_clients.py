#!/usr/bin/env python3
"""slow_clients.py — `sweep serve` under slow clients and held polls, and its exit on SIGTERM.

    bench/serve/slow_clients.py build/sweep [--slow 200] [--polls 200] [--fresh 5] [--points N]

Makes a small sweep (configs/examples/train_external.py: no data set needed), starts `sweep serve` on
it, then opens at once:
  - SLOW connections that send a request head one byte every 3 s and never finish it;
  - POLLS long polls (/api/sweep/NAME?since=VERSION&wait=20) on the settled version;
and times FRESH plain GETs of /api/sweeps, each on a new connection, while all of them are open
(with the baseline before they opened; a GET not answered within 15 s counts as timed out and
ends the series). Then it sends SIGTERM and times the exit (killed past 20 s). Standard library
only; every wait is bounded (the whole run ends within two minutes). Prints one JSON object with
the figures.

With --points N it first makes a sweep of about N metric points (4 trials of a trainer that
prints N / 8 lines of two metrics) and reads the server's peak memory (VmHWM) before and after
10 requests for its JSON at once, each on its own connection.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

TRAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs",
                       "examples", "train_external.py")
CONFIG = """name: slow-bench
trainer:
  command: "python3 {trainer} --lr {{lr}} --epochs 3 --seed {{seed}}"
  metric_timeout: 60
sweep:
  method: grid
  metric: {{name: val_accuracy, goal: maximize}}
  parameters:
    lr: {{values: [0.01, 0.1, 1.0]}}
resources:
  execution: cpu
  cpu_slots: 2
"""


def fresh_get(port, path="/api/sweeps", timeout=15.0):
    """Seconds to a whole 200 answer of `path` on a new connection; None past `timeout`."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            r.read()
            assert r.status == 200, r.status
    except (TimeoutError, socket.timeout, urllib.error.URLError):
        return None
    return time.monotonic() - t0


def gets(port, count, path="/api/sweeps"):
    """`count` fresh GETs one after another, stopping at the first that times out."""
    times = []
    for _ in range(count):
        times.append(fresh_get(port, path))
        if times[-1] is None:
            break
    return times


def summary(times):
    done = [t for t in times if t is not None]
    return {"median_s": round(statistics.median(done), 4) if done else None,
            "max_s": round(max(done), 4) if done else None,
            "timed_out": len(times) - len(done)}


POINTS_TRAINER = """import json, sys
lines, lr = int(sys.argv[1]), float(sys.argv[2])
for i in range(lines):
    print(json.dumps(dict(step=i, epoch=1 + i // 1000, train_loss=1.0 / (1 + i * lr),
                          val_accuracy=0.5 + 0.4 * i / lines)))
"""
POINTS_CONFIG = """name: points-bench
trainer:
  command: "python3 {trainer} {lines} {{lr}}"
  metric_timeout: 120
sweep:
  method: grid
  metric: {{name: val_accuracy, goal: maximize}}
  parameters:
    lr: {{values: [0.01, 0.02, 0.03, 0.04]}}
resources:
  execution: cpu
  cpu_slots: 2
"""


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def memory_phase(sweep, work, points):
    """Peak memory of `sweep serve` before and after 10 requests at once for a big sweep's JSON."""
    trainer = os.path.join(work, "points_trainer.py")
    with open(trainer, "w") as f:
        f.write(POINTS_TRAINER)
    config = os.path.join(work, "points-bench.yaml")
    with open(config, "w") as f:
        f.write(POINTS_CONFIG.format(trainer=trainer, lines=max(points // 8, 1)))
    runs = os.path.join(work, "runs-points")
    t0 = time.monotonic()
    subprocess.run([sweep, "run", config, "--out", runs], check=True, stdout=subprocess.DEVNULL,
                   timeout=600)
    made = time.monotonic() - t0
    server = subprocess.Popen([sweep, "serve", "--out", runs, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = serve_port(server, time.monotonic() + 10)
        before = peak_kib(server.pid)
        times = [None] * 10

        def ask(i):
            times[i] = fresh_get(port, "/api/sweep/points-bench", timeout=120)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(10)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        after = peak_kib(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return {"points": points, "sweep_run_s": round(made, 1),
            "peak_rss_mib_before": round(before / 1024, 1),
            "peak_rss_mib_after_10_at_once": round(after / 1024, 1),
            "ten_requests_wall_s": round(wall, 3),
            "answered": sum(t is not None for t in times)}


def serve_port(process, deadline):
    """The port in `sweep serve: http://127.0.0.1:PORT/...`, read from its stdout."""
    line = ""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("sweep serve: http://"):
            return int(line.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if not line and process.poll() is not None:
            break
    raise RuntimeError(f"sweep serve printed no URL: {line!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sweep", help="the sweep binary")
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--polls", type=int, default=200)
    parser.add_argument("--fresh", type=int, default=5)
    parser.add_argument("--points", type=int, default=0)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="sweep-serve-bench-")
    try:
        return measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, work):
    memory = memory_phase(args.sweep, work, args.points) if args.points else None
    config = os.path.join(work, "slow-bench.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(trainer=os.path.abspath(TRAINER)))
    runs = os.path.join(work, "runs")
    subprocess.run([args.sweep, "run", config, "--out", runs], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)

    server = subprocess.Popen([args.sweep, "serve", "--out", runs, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sockets = []
    stop_trickle = threading.Event()
    try:
        port = serve_port(server, time.monotonic() + 10)
        baseline = gets(port, args.fresh)
        time.sleep(1.1)  # the store's files settle: a poll on this version is held
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sweep/slow-bench",
                                    timeout=30) as r:
            version = json.load(r)["version"]

        head = b"GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 64
        slow = []
        for _ in range(args.slow):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(head[:1])
            slow.append(s)
        sockets += slow

        def trickle():  # one more byte of each head every 3 s, as the attack did
            sent = 1
            while not stop_trickle.wait(3.0) and sent < len(head):
                for s in slow:
                    try:
                        s.send(head[sent:sent + 1])
                    except OSError:
                        pass
                sent += 1

        threading.Thread(target=trickle, daemon=True).start()

        poll = (f"GET /api/sweep/slow-bench?since={version}&wait=20 HTTP/1.1\r\n"
                "Host: localhost\r\n\r\n").encode()
        polls = []
        for _ in range(args.polls):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(poll)
            polls.append(s)
        sockets += polls
        time.sleep(0.5)  # every request has arrived; the held ones are held

        loaded = gets(port, args.fresh)
        page = gets(port, 1, "/sweep/slow-bench")
        answered_at_once = 0
        for s in polls:
            s.settimeout(0)
            try:
                if s.recv(1, socket.MSG_PEEK):
                    answered_at_once += 1
            except BlockingIOError:
                pass

        t0 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=20)
            exit_seconds = round(time.monotonic() - t0, 4)
        except subprocess.TimeoutExpired:
            code, exit_seconds = None, "over 20 s (killed)"
    finally:
        stop_trickle.set()
        for s in sockets:
            s.close()
        if server.poll() is None:
            server.kill()
            server.wait()

    print(json.dumps({
        "slow_connections": args.slow,
        "held_polls_opened": args.polls,
        "polls_answered_at_once": answered_at_once,
        "fresh_get_baseline": summary(baseline),
        "fresh_get_loaded": summary(loaded),
        "report_page_loaded": summary(page),
        "sigterm_exit_s": exit_seconds,
        "exit_code": code,
        "memory": memory,
    }, indent=1))
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
