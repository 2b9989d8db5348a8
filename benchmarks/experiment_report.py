#!/usr/bin/env python3
"""Tables, plots and summary figures from the experiment runner's CSV (relax_experiment).

usage: experiment_report.py RUNS.csv [RUNS.csv ...] [--summary docs/results/h200/summary.json]
                            [--markdown docs/results/experiment.md] [--plots docs/results]
                            [--l2-bytes 62914560] [--copy-gbs 4244]

Per configuration (N, r, source) and strategy it takes the median over converged repeats of the
time to solution, the sweeps and the update rate (gups), then reports for each strategy the
speedup S = T_sync / T_x, the sweep ratio s = sweeps_x / sweeps_sync and the cost per sweep
c = (T_x / sweeps_x) / (T_sync / sweeps_sync), so that S = 1 / (c s) holds by construction.
S, s and c are always relative to plain (blocking-check) `sync`; configurations without a
converged `sync` run are left out.

Static strategies are those whose name starts with sync, temporal or blockasync; the suffix
`+overlap` marks the same strategy with overlapped convergence checks. The slowdown of a strategy
is measured against a baseline chosen by its check mode:
  - without `+overlap`: the fastest static strategy without `+overlap` (the blocking baseline);
  - with `+overlap`: the fastest static strategy of either check mode (the strict baseline).
The baseline's name is stored with each row (best_static). A configuration where fewer than
three blocking static strategies ran has no meaningful best: its rows stay in the tables with a
blank slowdown and it is left out of the slowdown figures.

Outputs:
  --summary   JSON figures, merged into the file if it exists (also printed on stdout);
  --markdown  header, pivot of S per configuration and strategy, slowdown of the adaptive
              controllers against both baselines, the strategies missing per configuration,
              and the full long table;
  --plots     speedup_vs_n.png, c_vs_s.png, speedup_heatmap.png, bandwidth_vs_n.png and
              auto_slowdown.png. Effective bandwidth is gups * 12 GB/s (read u, read b, write u'
              per point update); --l2-bytes places the "working set = L2" line, --copy-gbs the
              copy bandwidth line (0 leaves it out).
Plots need matplotlib; without it only the tables and figures are written.
"""
import argparse
import csv
import json
import re
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# onchipD, registers8: the on-chip loops; streamD: the streamed device loop
STATIC_PREFIXES = ("sync", "temporal", "blockasync", "onchip", "registers", "stream")
ADAPTIVE = ("ladder-asc", "ladder-desc", "feedback", "auto")
OVERLAP = "+overlap"
BASE_ORDER = ("sync", "temporal2", "temporal4", "temporal8", "blockasync2", "blockasync4",
              "blockasync8", "onchip4", "onchip8", "registers8", "stream4", "stream8") + ADAPTIVE
MIN_BLOCKING_STATIC = 3          # fewer blocking static strategies: no meaningful baseline
BYTES_PER_UPDATE = 12            # read u, read b, write u' (float32)
SLOWDOWN_STRATEGIES = ("feedback", "feedback-exact", "auto", "feedback+overlap", "feedback-exact+overlap",
                       "auto+overlap")
HEATMAP_STRATEGIES = ("temporal2", "temporal4", "temporal8", "blockasync4", "blockasync8",
                      "feedback", "auto", "auto+overlap")
BANDWIDTH_STRATEGIES = ("sync", "temporal4", "temporal8", "auto")


# ---------------------------------------------------------------------------------------------
# Names

def is_overlap(name):
    return name.endswith(OVERLAP)


def base_name(name):
    return name[:-len(OVERLAP)] if is_overlap(name) else name


def is_static(name):
    return base_name(name).startswith(STATIC_PREFIXES)


def is_blocking_static(name):
    return is_static(name) and not is_overlap(name)


def strategy_order(names):
    """Fixed order: the known blocking strategies, then their +overlap twins, then the rest."""
    known = list(BASE_ORDER) + [b + OVERLAP for b in BASE_ORDER]
    rank = {name: k for k, name in enumerate(known)}
    return sorted(names, key=lambda n: (rank.get(n, len(known)), n))


def config_label(cfg, short=False):
    n, r, src = cfg
    if short:
        return f"{n}/r{r:g}/{src[0]}"
    return f"N = {n}, r = {r:g}, {src}"


# ---------------------------------------------------------------------------------------------
# Loading and analysis

def load(paths):
    """Median time, sweeps and gups per (n, r, source, strategy) over converged repeats, and
    the number of rows read (converged or not)."""
    runs = defaultdict(list)
    total = 0
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                total += 1
                if row["converged"] != "1":
                    continue
                key = (int(row["n"]), float(row["r"]), row["source"], row["strategy"])
                runs[key].append((float(row["time_ms"]), int(row["sweeps"]), float(row["gups"])))
    med = {key: {"time_ms": statistics.median(v[0] for v in values),
                 "sweeps": statistics.median(v[1] for v in values),
                 "gups": statistics.median(v[2] for v in values)}
           for key, values in runs.items()}
    return med, total


def by_config(med):
    """{(n, r, source): {strategy: medians}}, configurations sorted."""
    out = defaultdict(dict)
    for (n, r, src, name), values in med.items():
        out[(n, r, src)][name] = values
    return dict(sorted(out.items()))


def fastest(strategies, pred):
    """(name, time_ms) of the fastest strategy satisfying pred, or None."""
    cands = [(v["time_ms"], name) for name, v in strategies.items() if pred(name)]
    if not cands:
        return None
    t, name = min(cands)
    return name, t


def baselines(strategies):
    """Blocking and strict baselines of one configuration, or (None, None) if it has fewer than
    MIN_BLOCKING_STATIC blocking static strategies."""
    if sum(map(is_blocking_static, strategies)) < MIN_BLOCKING_STATIC:
        return None, None
    return fastest(strategies, is_blocking_static), fastest(strategies, is_static)


def analyse(med):
    rows = []
    for cfg, strategies in by_config(med).items():
        sync = strategies.get("sync")
        if not sync:
            continue
        t_sync, s_sync = sync["time_ms"], sync["sweeps"]
        blocking, strict = baselines(strategies)
        for name, v in strategies.items():
            t, s = v["time_ms"], v["sweeps"]
            base = strict if is_overlap(name) else blocking
            rows.append({
                "n": cfg[0], "r": cfg[1], "source": cfg[2], "strategy": name,
                "time_ms": t, "sweeps": s, "gups": v["gups"],
                "S": t_sync / t, "s": s / s_sync, "c": (t / s) / (t_sync / s_sync),
                "best_static": base[0] if base else None,
                "best_static_ms": base[1] if base else None,
                "slowdown_pct": 100.0 * (t / base[1] - 1.0) if base else None,
            })
    return rows


def row_index(rows):
    return {(r["n"], r["r"], r["source"], r["strategy"]): r for r in rows}


def row_configs(rows):
    return sorted({(r["n"], r["r"], r["source"]) for r in rows})


def slowdown_values(rows, name):
    return [r["slowdown_pct"] for r in rows if r["strategy"] == name and r["slowdown_pct"] is not None]


def present_names(idx, cfg):
    return [key[3] for key in idx if key[:3] == cfg]


# ---------------------------------------------------------------------------------------------
# Figures

def slowdown_figures(rows, name, prefix):
    sl = slowdown_values(rows, name)
    if not sl:
        return {}
    return {f"{prefix}_mean_slowdown_pct": round(statistics.mean(sl), 2),
            f"{prefix}_max_slowdown_pct": round(max(sl), 2)}


def figures(rows, runs):
    f = {}
    at = [r for r in rows if r["n"] == 16384 and r["r"] == 10 and r["source"] == "gaussian"]
    if at:
        f["best_over_sync_time_r10_N16384"] = round(max(r["S"] for r in at), 3)
        for family, key in (("blockasync", "blockasync_best_over_sync_time_r10_N16384"),
                            ("temporal", "temporal_best_over_sync_time_r10_N16384")):
            fam = [r["S"] for r in at if r["strategy"].startswith(family)]
            if fam:
                f[key] = round(max(fam), 3)
    for name, prefix in (("feedback", "feedback"), ("auto", "auto"),
                         ("feedback+overlap", "feedback_overlap"), ("auto+overlap", "auto_overlap")):
        f.update(slowdown_figures(rows, name, prefix))
    f["experiment_configurations"] = len({(r["n"], r["r"], r["source"]) for r in rows
                                          if r["best_static"] is not None})
    f["experiment_runs"] = runs
    idx = row_index(rows)
    plain, over = idx.get((512, 10.0, "gaussian", "sync")), idx.get((512, 10.0, "gaussian", "sync+overlap"))
    if plain and over:
        f["overlap_gain_sync_pct_N512_r10"] = round(100.0 * (plain["time_ms"] / over["time_ms"] - 1.0), 2)
    return f


# ---------------------------------------------------------------------------------------------
# Markdown

def fmt(value, spec, blank=""):
    """value formatted with spec, blank for None, no negative zero ("-0.0")."""
    if value is None:
        return blank
    text = format(value, spec)
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def md_table(header, body):
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(cells) + " |" for cells in body]


def md_header():
    return ["# Experiment matrix (H200)", "",
            "Generated by `benchmarks/experiment_report.py` from the runner's CSV under `h200/`. "
            "Median over converged repeats of the time to solution of ten steps (tol 1e-5, M = 8), "
            "checks included; S = T_sync / T, s = sweeps / sweeps_sync, c = cost per sweep "
            "relative to sync, all against plain `sync` with blocking checks. "
            "`+overlap` marks the same strategy with overlapped convergence checks. "
            "Slowdown is against the fastest static strategy (sync, temporal*, blockasync*, and the "
            "device loops onchip*, registers8, stream*) of "
            "the configuration, chosen by check mode: a blocking strategy is compared with the "
            "fastest blocking static strategy, a `+overlap` strategy with the fastest static "
            "strategy of either check mode. Configurations where fewer than "
            f"{MIN_BLOCKING_STATIC} blocking static strategies ran have no baseline "
            "(blank slowdown).", ""]


def md_speedup_pivot(rows, names):
    idx = row_index(rows)
    body = [[str(cfg[0]), f"{cfg[1]:g}", cfg[2]] +
            [fmt(idx.get(cfg + (name,), {}).get("S"), ".2f") for name in names]
            for cfg in row_configs(rows)]
    return ["## Speedup over Sync", "", "S = T_sync / T per configuration; blank: not run.", ""] + \
        md_table(["N", "r", "source"] + names, body) + [""]


def md_baseline_cells(base):
    return [base[0], f"{base[1]:.2f}"] if base else ["", ""]


def md_slowdown(rows):
    idx = row_index(rows)
    names = [n for n in SLOWDOWN_STRATEGIES if any(r["strategy"] == n for r in rows)]
    blocking = [n for n in names if not is_overlap(n)]
    overlap = [n for n in names if is_overlap(n)]
    header = ["N", "r", "source", "blocking baseline", "time (ms)"] + [f"{n} (%)" for n in blocking] + \
             ["strict baseline", "time (ms)"] + [f"{n} (%)" for n in overlap]
    body = []
    for cfg in row_configs(rows):
        if not any(cfg + (n,) in idx for n in names):
            continue
        block_base, strict_base = baselines({n: idx[cfg + (n,)] for n in present_names(idx, cfg)})
        def cells(group):
            return [fmt(idx.get(cfg + (n,), {}).get("slowdown_pct"), ".1f") for n in group]
        body.append([str(cfg[0]), f"{cfg[1]:g}", cfg[2]] + md_baseline_cells(block_base) + cells(blocking) +
                    md_baseline_cells(strict_base) + cells(overlap))
    for label, agg in (("mean", statistics.mean), ("max", max)):
        def agg_cells(group):
            return [f"**{fmt(agg(sl), '.1f')}**" if (sl := slowdown_values(rows, n)) else "" for n in group]
        body.append([f"**{label}**", "", "", "", ""] + agg_cells(blocking) + ["", ""] + agg_cells(overlap))
    return ["## Slowdown against the best static strategy", "",
            "Slowdown in % of the adaptive controllers against the blocking baseline (plain "
            "strategies) and the strict baseline (`+overlap` strategies); blank: no baseline "
            "or not run. Mean and max are over the configurations with a baseline.", ""] + \
        md_table(header, body) + [""]


def md_missing(rows, names):
    present = defaultdict(set)
    for r in rows:
        present[(r["n"], r["r"], r["source"])].add(r["strategy"])
    lines = [f"- {config_label(cfg)}: {', '.join(n for n in names if n not in present[cfg])}"
             for cfg in row_configs(rows) if set(names) - present[cfg]]
    return ["## What was not run", "",
            "Strategies present elsewhere in the CSV but without a converged run in the configuration.",
            ""] + (lines or ["Every strategy ran in every configuration."]) + [""]


def md_long(rows):
    header = ["N", "r", "source", "strategy", "time (ms)", "sweeps", "S", "s", "c", "best static",
              "slowdown vs best static"]
    rank = {n: k for k, n in enumerate(strategy_order({r["strategy"] for r in rows}))}
    body = [[str(r["n"]), f"{r['r']:g}", r["source"], r["strategy"], f"{r['time_ms']:.2f}",
             f"{r['sweeps']:.0f}", f"{r['S']:.2f}", f"{r['s']:.2f}", f"{r['c']:.2f}",
             r["best_static"] or "", fmt(r["slowdown_pct"], ".1f") + " %" * (r["slowdown_pct"] is not None)]
            for r in sorted(rows, key=lambda r: (r["n"], r["r"], r["source"], rank[r["strategy"]]))]
    return ["## All runs", ""] + md_table(header, body) + [""]


# Sweep-benchmark names (relax_bench's tiled_sweep/<name>/N:<n>) of the static strategies.
BENCH_NAME = {"temporal2": "TemporalBlock2_stream", "temporal4": "TemporalBlock4_stream",
              "temporal8": "TemporalBlock8_stream", "blockasync2": "BlockAsync2",
              "blockasync4": "BlockAsync4", "blockasync8": "BlockAsync8"}


def sweep_costs(paths):
    """{(strategy, n): c} from Google Benchmark JSON: c = Sync's sweep throughput over the
    strategy's at the same N in the same file (medians), the cost per sweep without checks."""
    costs = {}
    for path in paths:
        gups = {}
        for b in json.loads(Path(path).read_text())["benchmarks"]:
            if b.get("aggregate_name") == "median" and "gups" in b:
                m = re.match(r"^(sync_sweep|tiled_sweep)/([A-Za-z0-9_]+)/N:(\d+)", b["name"])
                if m:
                    gups[(m[2], int(m[3]))] = b["gups"]
        for name, bench in BENCH_NAME.items():
            for (got, n), g in gups.items():
                if got == bench and ("Sync", n) in gups:
                    costs[(name, n)] = gups[("Sync", n)] / g
    return costs


def md_predicted(rows, costs):
    """S predicted from the sweep benchmarks' c and the runs' sweep ratio s, against S measured."""
    if not costs:
        return []
    body = []
    for r in sorted(rows, key=lambda r: (r["n"], r["r"], r["source"], r["strategy"])):
        c = costs.get((r["strategy"], r["n"]))
        if c is None or r["source"] != "gaussian":
            continue
        predicted = 1.0 / (c * r["s"])
        body.append([str(r["n"]), f"{r['r']:g}", r["strategy"], f"{c:.2f}", f"{r['s']:.2f}",
                     f"{predicted:.2f}", f"{r['S']:.2f}", f"{100 * (r['S'] / predicted - 1):+.0f} %"])
    intro = ["## Predicted and measured speedup", "",
             "Predicted S = 1 / (c s) with c from the sweep benchmarks (Sync's sweep throughput over "
             "the strategy's at the same N, no checks) and s from these runs; measured S from the "
             "time to solution, checks included (Gaussian source). Checks cost the same pass for "
             "every strategy, so they pull the measured S of fast strategies below the prediction.", ""]
    return intro + md_table(["N", "r", "strategy", "c (sweep bench)", "s", "S predicted", "S measured",
                             "measured vs predicted"], body) + [""]


def markdown(rows, costs=None):
    names = strategy_order({r["strategy"] for r in rows})
    out = md_header() + md_speedup_pivot(rows, names) + md_predicted(rows, costs or {}) + \
        md_slowdown(rows) + md_missing(rows, names) + md_long(rows)
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Plots

def finish(plt, fig, ax, path):
    """Legend, layout, write the PNG, free the figure."""
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_speedup_vs_n(plt, rows, folder):
    """Speedup over Sync against N, one line per strategy (Gaussian source, r = 10)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    names = [n for n in strategy_order({r["strategy"] for r in rows})
             if n != "sync" and (not is_overlap(n) or n == "auto+overlap")]
    colours = {}  # an +overlap line takes its blocking twin's colour, dashed
    palette = plt.get_cmap("tab20").colors  # more strategies than the default cycle's ten colours
    for k, name in enumerate(names):
        pts = sorted((r["n"], r["S"]) for r in rows
                     if r["strategy"] == name and r["r"] == 10 and r["source"] == "gaussian")
        if pts:
            style = ({"ls": "--", "color": colours.get(base_name(name))} if is_overlap(name)
                     else {"color": palette[k % len(palette)]})
            line, = ax.plot(*zip(*pts), marker="o", label=name, **style)
            colours[name] = line.get_color()
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N")
    ax.set_ylabel("speedup over Sync (time to solution)")
    ax.set_title("r = 10, Gaussian source")
    finish(plt, fig, ax, folder / "speedup_vs_n.png")


def plot_c_vs_s(plt, rows, folder):
    """c against s for the blocking static strategies, with the S = 1 curve c = 1 / s."""
    fig, ax = plt.subplots(figsize=(6, 5))
    static = [r for r in rows if r["strategy"] != "sync" and is_blocking_static(r["strategy"])]
    for name in strategy_order({r["strategy"] for r in static}):
        pts = [(r["s"], r["c"]) for r in static if r["strategy"] == name]
        ax.scatter(*zip(*pts), label=name, s=18)
    xs = [0.8 + 0.02 * k for k in range(100)]
    ax.plot(xs, [1 / x for x in xs], color="black", lw=1, label="S = 1")
    ax.set_xlabel("s (sweeps relative to Sync)")
    ax.set_ylabel("c (cost per sweep relative to Sync)")
    finish(plt, fig, ax, folder / "c_vs_s.png")


def plot_speedup_heatmap(plt, rows, folder):
    """One panel per strategy: S over (N, r) for the Gaussian source, shared diverging scale."""
    from matplotlib.colors import TwoSlopeNorm
    import numpy as np
    gauss = [r for r in rows if r["source"] == "gaussian"]
    names = [n for n in HEATMAP_STRATEGIES if any(r["strategy"] == n for r in gauss)]
    if not names:
        return
    ns = sorted({r["n"] for r in gauss})
    rs = sorted({r["r"] for r in gauss})
    idx = row_index(gauss)
    grids = {name: np.ma.masked_invalid(np.array(
        [[idx[(n, r, "gaussian", name)]["S"] if (n, r, "gaussian", name) in idx else np.nan
          for n in ns] for r in rs])) for name in names}
    values = [v for g in grids.values() for v in g.compressed()]
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(min(values), 0.99), vmax=max(max(values), 1.01))
    cmap = plt.get_cmap("RdBu").with_extremes(bad="white")
    cols = min(4, len(names))
    nrows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(0.55 * len(ns) * cols + 1.5, 2.1 * nrows + 0.6),
                             squeeze=False, layout="constrained")
    for ax, name in zip(axes.flat, names):
        grid = grids[name]
        im = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto", origin="lower")
        for i in range(len(rs)):
            for j in range(len(ns)):
                if grid.mask[i, j]:
                    continue
                value = grid[i, j]
                dark = abs(norm(value) - 0.5) > 0.3
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
        ax.set_title(name, fontsize=9)
        ax.set_xticks(range(len(ns)), [str(n) for n in ns], rotation=45, fontsize=7)
        ax.set_yticks(range(len(rs)), [f"{r:g}" for r in rs], fontsize=7)
        ax.set_xlabel("N", fontsize=8)
        ax.set_ylabel("r", fontsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.colorbar(im, ax=axes, label="speedup over Sync", shrink=0.9)
    fig.suptitle("Speedup over Sync, Gaussian source")
    fig.savefig(folder / "speedup_heatmap.png", dpi=120)
    plt.close(fig)


def bandwidth_points(rows, name):
    """(N, GB/s) for the Gaussian source at r = 10, falling back to r = 1 where r = 10 is missing."""
    idx = row_index(rows)
    pts = []
    for n in sorted({r["n"] for r in rows}):
        row = idx.get((n, 10.0, "gaussian", name)) or idx.get((n, 1.0, "gaussian", name))
        if row:
            pts.append((n, row["gups"] * BYTES_PER_UPDATE, row["r"]))
    return pts


def plot_bandwidth_vs_n(plt, rows, folder, l2_bytes, copy_gbs):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    fallback = False
    for name in BANDWIDTH_STRATEGIES:
        pts = bandwidth_points(rows, name)
        if not pts:
            continue
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        low = [p for p in pts if p[2] != 10]
        if low:
            fallback = True
            ax.plot([p[0] for p in low], [p[1] for p in low], ls="none", marker="o",
                    mfc="white", mec=line.get_color())
    ax.axvline(math.sqrt(l2_bytes / BYTES_PER_UPDATE), color="grey", ls="--", lw=1,
               label="working set = L2")
    if copy_gbs:
        ax.axhline(copy_gbs, color="black", ls=":", lw=1, label=f"copy bandwidth ({copy_gbs:g} GB/s)")
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("N")
    ax.set_ylabel(f"effective bandwidth (GB/s, {BYTES_PER_UPDATE} B per update)")
    ax.set_title("Gaussian source, r = 10" + (" (open markers: r = 1)" if fallback else ""))
    finish(plt, fig, ax, folder / "bandwidth_vs_n.png")


def plot_auto_slowdown(plt, rows, folder):
    """Slowdown of auto and feedback against the blocking baseline, per configuration."""
    idx = row_index(rows)
    names = ("auto", "feedback")
    cfgs = [cfg for cfg in row_configs(rows)
            if any(idx.get(cfg + (n,), {}).get("slowdown_pct") is not None for n in names)]
    if not cfgs:
        return
    width = 0.4
    fig, ax = plt.subplots(figsize=(max(7, 0.32 * len(cfgs) + 1.5), 4.5))
    for k, name in enumerate(names):
        xs = [j + (k - 0.5) * width for j in range(len(cfgs))]
        ys = [idx.get(cfg + (name,), {}).get("slowdown_pct") for cfg in cfgs]
        ax.bar([x for x, y in zip(xs, ys) if y is not None], [y for y in ys if y is not None],
               width=width, label=name)
    for level in (3, 10):
        ax.axhline(level, color="grey", ls="--", lw=0.8)
        ax.text(len(cfgs) - 0.5, level, f"{level} %", ha="right", va="bottom", fontsize=7, color="grey")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(cfgs)), [config_label(c, short=True) for c in cfgs], rotation=90, fontsize=7)
    ax.set_xlim(-0.6, len(cfgs) - 0.4)
    ax.set_ylabel("slowdown vs best blocking static strategy (%)")
    ax.set_title("Adaptive controllers against the best static strategy (blocking checks)")
    finish(plt, fig, ax, folder / "auto_slowdown.png")


def plots(rows, folder, l2_bytes, copy_gbs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("experiment_report.py: matplotlib not found, no plots written", file=sys.stderr)
        return
    folder.mkdir(parents=True, exist_ok=True)
    plot_speedup_vs_n(plt, rows, folder)
    plot_c_vs_s(plt, rows, folder)
    plot_speedup_heatmap(plt, rows, folder)
    plot_bandwidth_vs_n(plt, rows, folder, l2_bytes, copy_gbs)
    plot_auto_slowdown(plt, rows, folder)


# ---------------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--summary", default="docs/results/h200/summary.json")
    ap.add_argument("--markdown", default="docs/results/experiment.md")
    ap.add_argument("--plots", default="docs/results")
    ap.add_argument("--l2-bytes", type=float, default=62914560,
                    help="L2 size in bytes for the 'working set = L2' line (default 62914560)")
    ap.add_argument("--bench", nargs="*", default=[],
                    help="relax_bench JSON with sync_sweep and tiled_sweep rows, for predicted S")
    ap.add_argument("--copy-gbs", type=float, default=4244,
                    help="copy bandwidth in GB/s for the dotted line, 0 for none (default 4244)")
    a = ap.parse_args(argv)
    med, runs = load(a.csv)
    rows = analyse(med)
    if not rows:
        sys.exit("experiment_report.py: no configuration with a converged sync run")
    figs = figures(rows, runs)
    path = Path(a.summary)
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary.update(figs)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    Path(a.markdown).parent.mkdir(parents=True, exist_ok=True)
    Path(a.markdown).write_text(markdown(rows, sweep_costs(a.bench)))
    plots(rows, Path(a.plots), a.l2_bytes, a.copy_gbs)
    print(json.dumps(figs, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
