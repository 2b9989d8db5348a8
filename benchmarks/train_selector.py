#!/usr/bin/env python3
"""Trains the strategy selector of `relax::Auto` on the experiment runner's measurements and
writes it as a generated header.

usage: train_selector.py RUNS.csv [RUNS.csv ...] --l2-bytes B [--header PATH] [--summary PATH]

For each configuration (N, r, source) the label is the fastest static strategy (median time to
solution over repeats): its family (sync, temporal, blockasync) and depth, or the streamed device
loop (`streamD`, DeviceLoop<TemporalBlock<D, ColumnStream>>, at the depths Auto runs it: 4 and 8),
which the header returns as `{Family::temporal, D, true}`. The features are the
ones known before a run: the working set over the L2 size (12 bytes per point: u, u' and b) and r.
A depth-2 decision tree is fitted on all configurations; its leave-one-out accuracy (each
configuration predicted by a tree trained on the others) is printed and stored as
`loo_tree_accuracy` in the summary. The header holds the tree as plain `if`s with its split values
and a comment naming the data it came from. Needs scikit-learn.

Configurations where the on-chip device loop ran (strategies `onchipD` and `registers8`, grids that
fit on chip) are Auto's rule, not the tree's: Auto runs `registers8` there (`auto_runs_on_chip`,
`auto_in_registers`: the matrix's on-chip sizes, 512 and 1024, have at least 1024 points an SM on
an H200), so the tree is trained on the other configurations only. Auto's leave-one-out slowdown
(`auto_loo_mean_slowdown_pct`, `auto_loo_max_slowdown_pct`) covers every configuration: where the
rule applies, registers8's time against the fastest strategy measured there; elsewhere, the tree
trained without the configuration.
"""
import argparse
import csv
import datetime
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

FAMILIES = ("sync", "temporal", "blockasync")
STREAMED = "stream"  # the streamed device loop, streamD
STREAMED_DEPTHS = (4, 8)  # the depths Auto runs it at (relax::AutoStreamed<D>, relax::AutoLoop)
MIN_STRATEGIES = 3  # static strategies a configuration needs to be labelled
ON_CHIP = "registers8"  # what Auto runs at the matrix's on-chip sizes (relax::AutoOnChip)
RESIDENT = ("onchip", "registers")  # the on-chip loops' strategy names begin so


def choice_of(strategy):
    """(family, depth, device loop) of a strategy Auto can be told to run, else (None, None, False)."""
    if "+" in strategy:  # a check mode ("+overlap") is not part of the choice
        return None, None, False
    if strategy.startswith(STREAMED):
        rest = strategy[len(STREAMED):]
        if rest.isdigit() and int(rest) in STREAMED_DEPTHS:
            return "temporal", int(rest), True
        return None, None, False
    for fam in FAMILIES:
        if strategy.startswith(fam):
            rest = strategy[len(fam):]
            return fam, int(rest) if rest.isdigit() else 1, False
    return None, None, False


def family_and_depth(strategy):
    return choice_of(strategy)[:2]


def load(paths):
    """The fastest static strategy of each labelled configuration (on-chip runs included), and
    the median time of every static strategy (the on-chip loops included) per configuration."""
    times = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                fam, _ = family_and_depth(row["strategy"])
                if (fam or row["strategy"].startswith(RESIDENT)) and row["converged"] == "1":
                    times[(int(row["n"]), float(row["r"]), row["source"], row["strategy"])].append(float(row["time_ms"]))
    best, count, medians = {}, defaultdict(int), {}
    for (n, r, src, strategy), ts in times.items():
        t = statistics.median(ts)
        medians[(n, r, src, strategy)] = t
        count[(n, r, src)] += 1
        if (n, r, src) not in best or t < best[(n, r, src)][1]:
            best[(n, r, src)] = (strategy, t)
    # A configuration where few static strategies ran (a run cut short) has no meaningful label.
    return {cfg: b for cfg, b in best.items() if count[cfg] >= MIN_STRATEGIES}, medians


def features(n, r, l2_bytes):
    return [12.0 * n * n / l2_bytes, r]


def tree_to_cpp(tree, names, labels):
    t = tree.tree_
    lines = []
    def leaf(node):
        return t.children_left[node] == t.children_right[node]
    def label(node):
        return labels[int(t.value[node][0].argmax())]
    def walk(node, indent):
        pad = "  " * indent
        left, right = t.children_left[node], t.children_right[node]
        if leaf(node) or (leaf(left) and leaf(right) and label(left) == label(right)):
            fam, depth, loop = choice_of(label(node))
            lines.append(f"{pad}return {{Family::{fam}, {depth}{', true' if loop else ''}}};")
            return
        lines.append(f"{pad}if ({names[t.feature[node]]} <= {float(t.threshold[node])!r}) {{")
        walk(t.children_left[node], indent + 1)
        lines.append(f"{pad}}}")
        walk(t.children_right[node], indent)
    walk(0, 1)
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--l2-bytes", type=float, required=True, help="L2 size of the GPU that measured")
    ap.add_argument("--header", default="include/relax/strategy/auto_tree.hpp")
    ap.add_argument("--summary", default="docs/results/h200/summary.json")
    a = ap.parse_args(argv)
    from sklearn.tree import DecisionTreeClassifier

    best, medians = load(a.csv)
    on_chip = sorted(c for c in best if c + (ON_CHIP,) in medians)
    # The tree's data: configurations without the on-chip rule, labelled by their fastest static
    # strategy that Auto can run there (launch-based, or the streamed device loop).
    tree_best = {}
    for c in best:
        if c in on_chip:
            continue
        runs = [(t, k[3]) for k, t in medians.items() if k[:3] == c and family_and_depth(k[3])[0]]
        t, name = min(runs)
        tree_best[c] = (name, t)
    if len(tree_best) < 3:
        sys.exit("train_selector.py: need at least 3 configurations with static strategies")
    configs = sorted(tree_best)
    labels = sorted({tree_best[c][0] for c in configs})
    X = [features(n, r, a.l2_bytes) for n, r, _ in configs]
    y = [labels.index(tree_best[c][0]) for c in configs]
    def fit(rows):
        return DecisionTreeClassifier(max_depth=2, random_state=0).fit([X[i] for i in rows], [y[i] for i in rows])
    # Leave-one-out: each configuration predicted by a tree trained on the others. Accuracy counts
    # exact label matches; near-ties make it harsh, so also the time lost by each prediction
    # (a label that did not run on the held-out configuration counts as a miss of unknown cost).
    hits, losses = 0, []
    for i, cfg in enumerate(configs):
        guess = labels[fit([j for j in range(len(y)) if j != i]).predict([X[i]])[0]]
        hits += guess == tree_best[cfg][0]
        if cfg + (guess,) in medians:
            losses.append(100.0 * (medians[cfg + (guess,)] / tree_best[cfg][1] - 1.0))
    accuracy = hits / len(y)
    loo_slowdown = statistics.mean(losses) if losses else float("nan")
    # Auto over every configuration: the on-chip rule where it applies, else the held-out tree.
    auto_losses = [100.0 * (medians[c + (ON_CHIP,)] / best[c][1] - 1.0) for c in on_chip] + losses
    tree = fit(range(len(y)))
    body = tree_to_cpp(tree, ["ws_over_l2", "r"], labels)
    sources = ", ".join(Path(p).name for p in a.csv)
    header = f"""#pragma once
//! \\file
//! GENERATED by benchmarks/train_selector.py on {datetime.date.today()} from {sources}
//! ({len(configs)} configurations, L2 = {a.l2_bytes:.0f} bytes). Do not edit: rerun the script.
//! A depth-2 decision tree over features known before a run, trained on the configurations where
//! the on-chip device loop does not run ({len(on_chip)} configurations where it ran are Auto's
//! on-chip rule, `auto_runs_on_chip`); leave-one-out accuracy {accuracy:.3f} (exact labels), mean
//! leave-one-out slowdown {loo_slowdown:.2f}% against the best static strategy Auto can run there
//! (launch-based, or the streamed device loop: `{{Family::temporal, D, true}}`).

#include <relax/core/family.hpp>

namespace relax {{

//! The strategy the tree picks for a working set of `ws_over_l2` times the L2 size (12 bytes per
//! point) and coupling `r`.
constexpr FamilyChoice auto_choice(double ws_over_l2, double r) {{
  (void)ws_over_l2;
  (void)r;
{body}
}}

}}  // namespace relax
"""
    Path(a.header).write_text(header)
    path = Path(a.summary)
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary["loo_tree_accuracy"] = round(accuracy, 3)
    summary["loo_tree_mean_slowdown_pct"] = round(loo_slowdown, 2)
    summary["auto_loo_mean_slowdown_pct"] = round(statistics.mean(auto_losses), 2)
    summary["auto_loo_max_slowdown_pct"] = round(max(auto_losses), 2)
    summary["auto_loo_configurations"] = len(auto_losses)
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(f"tree: {len(configs)} configurations, leave-one-out accuracy {accuracy:.3f}, mean leave-one-out "
          f"slowdown {loo_slowdown:.2f}%; Auto (on-chip rule on {len(on_chip)} more): mean leave-one-out "
          f"slowdown {statistics.mean(auto_losses):.2f}%, max {max(auto_losses):.2f}% over {len(auto_losses)}; "
          f"wrote {a.header}")


if __name__ == "__main__":
    main(sys.argv[1:])
