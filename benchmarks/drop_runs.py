#!/usr/bin/env python3
"""Removes the runs of some strategies from the experiment CSV, so that relax_experiment (which
skips runs already in the file) measures them again, e.g. after a controller changed.

usage: drop_runs.py RUNS.csv --strategies feedback,feedback+overlap [--sizes 512,1024] [--r 1,10]
"""
import argparse
import csv
import sys


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--strategies", required=True, help="comma-separated strategy names")
    ap.add_argument("--sizes", default="", help="comma-separated N (default: every N)")
    ap.add_argument("--r", default="", help="comma-separated r as the CSV writes it (default: every r)")
    a = ap.parse_args(argv)
    names = set(filter(None, a.strategies.split(",")))
    sizes = set(filter(None, a.sizes.split(",")))
    rs = set(filter(None, a.r.split(",")))
    with open(a.csv, newline="") as f:
        rows = [r for r in csv.reader(f) if r]  # blank lines carry no run (and are not written back)
    if not rows or rows[0][:4] != ["n", "r", "source", "strategy"]:
        sys.exit(f"drop_runs.py: {a.csv} is not an experiment CSV")
    if short := [i for i, r in enumerate(rows) if len(r) < 4]:
        sys.exit(f"drop_runs.py: {a.csv}: row {short[0] + 1} (blank lines not counted) has fewer than 4 fields")
    keep = [rows[0]] + [r for r in rows[1:] if not (r[3] in names and (not sizes or r[0] in sizes) and (not rs or r[1] in rs))]
    with open(a.csv, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(keep)
    print(f"{len(rows) - len(keep)} runs removed, {len(keep) - 1} kept")


if __name__ == "__main__":
    main(sys.argv[1:])
