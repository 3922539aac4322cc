#!/usr/bin/env python3
"""Two sweeps of the same grid, trial by trial: how many trials ended in the same state with the
same final validation accuracy, how far apart the accuracies are (points, mean and most), how many
of the logged losses, validation losses and accuracies differ, and whether either sweep logged a
point twice (the same trial, name and step: a resume must not double what it replays).

    compare_trials.py LABEL A/sweep.db B/sweep.db

Prints one line: RESULT LABEL trials_equal=N/M mean_points_apart=.. max_points_apart=..
values_differ=D/V doubled=A,B
"""
import json
import sqlite3
import sys

LOGGED = "('loss', 'val_loss', 'val_accuracy')"


def connect(db):
    # Read-only: a wrong path must not leave an empty database behind.
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def load(db):
    try:
        c = connect(db)
        finals = {n: (s, json.loads(j or "{}").get("final_val_accuracy"))
                  for n, s, j in c.execute("select number, state, summary_json from trials")}
        values = {(n, name, step): v for n, name, step, v in c.execute(
            "select t.number, m.name, m.step, m.value from metrics m join trials t "
            f"on t.id = m.trial_id where m.name in {LOGGED}")}
        rows, distinct = c.execute(
            "select count(*), count(distinct trial_id || '/' || name || '/' || step) "
            "from metrics").fetchone()
    except sqlite3.Error as e:
        sys.exit(f"compare_trials.py: {db}: {e} (expected a sweep's sweep.db)")
    return finals, values, rows - distinct


def main():
    label = sys.argv[1]
    (a, va, da), (b, vb, db) = load(sys.argv[2]), load(sys.argv[3])
    if set(a) != set(b):
        sys.exit(f"compare_trials.py: the sweeps hold other trials ({len(a)} and {len(b)})")
    same = sum(1 for n in a if a[n] == b[n])
    apart = [abs((a[n][1] or 0) - (b[n][1] or 0)) * 100 for n in a]
    keys = set(va) | set(vb)
    # NaN != NaN: a diverged trial's logged NaN counts as equal to the other's NaN.
    differ = sum(1 for k in keys
                 if not (va.get(k) == vb.get(k) or (va.get(k) != va.get(k) and vb.get(k) != vb.get(k))))
    print(f"RESULT {label} trials_equal={same}/{len(a)} "
          f"mean_points_apart={sum(apart) / len(apart):.3f} max_points_apart={max(apart):.3f} "
          f"values_differ={differ}/{len(keys)} doubled={da},{db}")


if __name__ == "__main__":
    main()
