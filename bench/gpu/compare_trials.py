#!/usr/bin/env python3
"""Two sweeps of the same grid, trial by trial: how many trials ended in the same state with the
same final validation accuracy, and how far apart the accuracies are (points, mean and most).

    compare_trials.py LABEL A/sweep.db B/sweep.db
"""
import json
import sqlite3
import sys


def finals(db):
    try:  # read-only: a wrong path must not leave an empty database behind
        rows = sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(
            "select number, state, summary_json from trials").fetchall()
    except sqlite3.Error as e:
        sys.exit(f"compare_trials.py: {db}: {e} (expected a sweep's sweep.db)")
    return {n: (s, json.loads(j or "{}").get("final_val_accuracy")) for n, s, j in rows}


def main():
    label, a, b = sys.argv[1], finals(sys.argv[2]), finals(sys.argv[3])
    if set(a) != set(b):
        sys.exit(f"compare_trials.py: the sweeps hold other trials ({len(a)} and {len(b)})")
    same = sum(1 for n in a if a[n] == b[n])
    apart = [abs((a[n][1] or 0) - (b[n][1] or 0)) * 100 for n in a]
    print(f"RESULT {label} trials_equal={same}/{len(a)} "
          f"mean_points_apart={sum(apart) / len(apart):.3f} max_points_apart={max(apart):.3f}")


if __name__ == "__main__":
    main()
