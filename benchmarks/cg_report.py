#!/usr/bin/env python3
"""Tables and summary figures from the CG benchmarks (relax_bench_cg's JSON).

usage: cg_report.py BENCH_CG.json [--summary docs/results/h200/summary.json]
                    [--markdown docs/results/cg.md] [--copy-gbs 4244]

Per precision and N: time per iteration of every path (relax's variants, the cuSPARSE + cuBLAS
library path, the OpenMP reference), kernels per iteration, the bytes an iteration must move
and the bandwidth that implies against the copy bandwidth of the device (measured by
relax_bench's copy benchmark; 4244 GB/s on the H200 of docs/results/h200). Then time to a relative
residual of 1e-8. The figures the issues name go into the summary.

Repetitions: a row run several times (--benchmark_repetitions=R) is the median of its R
repetitions, each number (ms_per_iter, iterations, bytes_per_iter, gbs, ...) the median of that
number over the repetitions, as Google Benchmark's `median` aggregate computes it (the mean of the
two middle values for an even R); report.py takes the same `_median` aggregates. A JSON written
with aggregates only (--benchmark_report_aggregates_only) is read from its `median` rows; the
other aggregates (mean, stddev, cv) are not used. A repetition that failed is listed under "Left
out" and the median is over the others. A row run once is taken as it is. (Each repetition's
ms_per_iter is the time of all its timed solves over their iterations; JSON written before
2026-12-05 holds the last solve's alone.)
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

RELAX = ("relax_unfused", "relax_fused", "relax_graph", "relax_persistent", "relax_persistent_single",
         "relax_pipelined", "relax_cluster", "relax_grid_resident")
NAME = re.compile(r"^(cg_iter|cg_solve)/([a-z_]+)/(f32|f64)/N:(\d+)")
# The fused variants on the real 1138-row CSR matrix (issue 14: "a CSR of about 1000 rows").
CSR_NAME = re.compile(r"^cg_iter/([a-z_]+)/f64/csr:1138_bus")


UNFUSED_SHAPE = ("relax_unfused", "relax_csr", "cusparse_cublas")


# Fields of a row that name or count it rather than measure it: not medians.
NOT_MEASURED = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads"}


def median_row(reps):
    """One row from the repetitions of a benchmark: each number the median over the repetitions
    (field by field, as Google Benchmark's `median` aggregate), the rest from the first."""
    row = dict(reps[0])
    for k, v in reps[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in NOT_MEASURED:
            row[k] = statistics.median(r[k] for r in reps)
    row["_repetitions"] = len(reps)
    return row


def medians(path, pattern):
    """{match of `pattern` on the row's name: row} with each row the median of its repetitions
    (or its `median` aggregate where the JSON holds aggregates only), and the rows or repetitions
    left out (errors, and solves that did no iteration)."""
    reps, aggregates, failed, match = {}, {}, {}, {}
    for b in json.loads(Path(path).read_text())["benchmarks"]:
        m = pattern.match(b["name"])
        if not m:
            continue
        key = m[0]  # the name up to the size: the same for a row's repetitions and aggregates
        match.setdefault(key, m)
        if b.get("run_type", "iteration") == "aggregate":
            if b.get("aggregate_name") == "median" and not b.get("error_occurred"):
                aggregates[key] = b
        elif b.get("error_occurred") or not b.get("iterations"):
            failed.setdefault(key, []).append(b)
        else:
            reps.setdefault(key, []).append(b)
    rows, dropped = {}, []
    for key, m in match.items():
        if key in reps:
            rows[m] = median_row(reps[key])
        elif key in aggregates and aggregates[key].get("iterations"):  # over the repetitions that ran
            rows[m] = dict(aggregates[key], _repetitions=aggregates[key].get("repetitions", 1))
        for b in failed.get(key, ()):
            why = f"{b['name'].split('/iterations')[0]}: {b.get('error_message') or 'no iteration'}"
            if b.get("repetitions", 1) > 1:
                why += f" (repetition {b.get('repetition_index', 0) + 1} of {b['repetitions']})"
            dropped.append(why)
    return rows, dropped


def load(path):
    """{(kind, path, precision, n): benchmark row} for rows that ran without error and iterated,
    each the median of its repetitions, and the rows or repetitions left out (errors, and solves
    that did no iteration)."""
    rows = {}
    found, dropped = medians(path, NAME)
    for m, b in found.items():
        key = (m[1], m[2], m[3], int(m[4]))
        if m[2] in UNFUSED_SHAPE and b["bytes_per_iter"] > 0:
            # Runs before the model's fix counted dot(r, r) as two vector reads (15 vectors, not 14).
            vector = int(m[4]) ** 2 * (8 if m[3] == "f64" else 4)
            if legacy_model(b, m[2], int(m[4]), vector):
                b["bytes_per_iter"] -= vector
                b["gbs"] = b["bytes_per_iter"] / (b["ms_per_iter"] * 1e6)
        rows[key] = b
    return rows, dropped


def legacy_model(row, path, n, vector):
    """True when a row's bytes_per_iter is the 15-vector model of the first CG benchmark runs."""
    matrix = (5 * n * n) * (vector // (n * n) + 4) + (n * n + 1) * 4 if path != "relax_unfused" else 0
    return abs(row["bytes_per_iter"] - (15 * vector + matrix)) < 0.5


def best_relax(rows, kind, precision, n, field):
    got = [(rows[(kind, p, precision, n)][field], p) for p in RELAX if (kind, p, precision, n) in rows]
    return min(got) if got else (None, None)


def csr_rows(path):
    """{variant: µs an iteration} of the cg_iter rows on the 1138-row CSR matrix, each the median
    of its repetitions as in load()."""
    return {m[1]: b["ms_per_iter"] * 1e3 for m, b in medians(path, CSR_NAME)[0].items()}


def solve_ms(row):
    return row["ms_per_iter"] * row["iterations"]


def figures(rows):
    f = {}
    best, which = best_relax(rows, "cg_iter", "f64", 4096, "ms_per_iter")
    lib = rows.get(("cg_iter", "cusparse_cublas", "f64", 4096))
    if best is not None:
        f["cg_f64_ms_per_iter_N4096_best"] = round(best, 4)
        f["cg_f64_ms_per_iter_N4096_best_variant"] = which
    if lib:
        f["cg_f64_ms_per_iter_N4096_cusparse"] = round(lib["ms_per_iter"], 4)
    if best is not None and lib:
        f["cg_f64_speedup_over_cusparse_N4096"] = round(lib["ms_per_iter"] / best, 3)
    best256, which256 = best_relax(rows, "cg_iter", "f64", 256, "ms_per_iter")
    if best256 is not None:  # issue 14: at most 4 µs an iteration at 256²
        f["cg_f64_us_per_iter_N256_best"] = round(best256 * 1e3, 3)
        f["cg_f64_us_per_iter_N256_best_variant"] = which256
    best1024, which1024 = best_relax(rows, "cg_iter", "f64", 1024, "ms_per_iter")
    if best1024 is not None:
        f["cg_f64_us_per_iter_N1024_best"] = round(best1024 * 1e3, 3)
        f["cg_f64_us_per_iter_N1024_best_variant"] = which1024
    lib256 = rows.get(("cg_iter", "cusparse_cublas", "f64", 256))
    if best256 is not None and lib256:
        f["cg_f64_speedup_over_cusparse_N256"] = round(lib256["ms_per_iter"] / best256, 3)
    solves = [solve_ms(rows[("cg_solve", p, "f64", 1024)]) for p in RELAX if ("cg_solve", p, "f64", 1024) in rows]
    lib_solve = rows.get(("cg_solve", "cusparse_cublas", "f64", 1024))
    if solves and lib_solve:
        f["cg_f64_time_to_1e-8_speedup_N1024"] = round(solve_ms(lib_solve) / min(solves), 3)
    omp = rows.get(("cg_iter", "reference_openmp", "f64", 4096))
    if omp and best is not None:
        f["cg_speedup_over_openmp_N4096"] = round(omp["ms_per_iter"] / best, 2)
    return f


def markdown(rows, dropped, f, copy_gbs, note="", source="bench_cg.json"):
    reps = max(r.get("_repetitions", 1) for r in rows.values())
    out = ["# CG on the H200", "",
           f"Generated by `benchmarks/cg_report.py` from `h200/{source}` (`relax_bench_cg`). "
           "2D Poisson, 5-point stencil, n x n unknowns, b = 1, x0 = 0. Time per iteration over 200 "
           "iterations (3 solves, the last one reported" +
           (f"; each row the median of its repetitions, up to {reps}" if reps > 1 else "") +
           "); `bytes` is the traffic an iteration must move "
           "at least, `% copy` that traffic over the time against the copy bandwidth "
           f"({copy_gbs:g} GB/s). relax variants are matrix-free unless named `csr`; the library path is "
           "cuSPARSE SpMV on CSR + cuBLAS with host scalars. Passes that mostly read can exceed the "
           "copy rate (reads alone reach about 4613 GB/s)." + (f" Provenance: {note}." if note else ""), "",
           "| precision | N | path | ms / iteration | kernels / iteration | MB / iteration | % copy |",
           "|---|---|---|---|---|---|---|"]
    for key in sorted(k for k in rows if k[0] == "cg_iter"):
        _, path, prec, n = key
        r = rows[key]
        pct = 100.0 * r["gbs"] / copy_gbs if path != "reference_openmp" else float("nan")
        out.append(f"| {prec} | {n} | {path} | {r['ms_per_iter']:.4f} | {int(r['kernels_per_iter'])} | "
                   f"{r['bytes_per_iter'] / 1e6:.1f} | {'' if pct != pct else f'{pct:.0f}'} |")
    out += ["", "## Time to a relative residual of 1e-8", "",
            "The solvers stop on the recurrence residual, as cuSPARSE + cuBLAS CG does; in float32 that "
            "passes 1e-8, while the true residual b - A x of a float32 x is not measured and is limited by "
            "float's rounding (6e-8 of each entry of x), and "
            "float32 Pipelined, whose recurrences are replaced by the true residual, breaks down first.", "",
            "| precision | N | path | iterations | ms |", "|---|---|---|---|---|"]
    for key in sorted(k for k in rows if k[0] == "cg_solve"):
        _, path, prec, n = key
        r = rows[key]
        out.append(f"| {prec} | {n} | {path} | {int(r['iterations'])} | {solve_ms(r):.2f} |")
    if dropped:
        some = " (or some of their repetitions)" if any("(repetition " in d for d in dropped) else ""
        out += ["", "## Left out", "", f"Rows{some} that failed or did no iteration (not measurements):", ""]
        out += [f"- `{d}`" for d in dropped]
    out += ["", "## Figures", ""] + [f"- `{k}`: {v}" for k, v in sorted(f.items())]
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--summary", default="docs/results/h200/summary.json")
    ap.add_argument("--markdown", default="docs/results/cg.md")
    ap.add_argument("--copy-gbs", type=float, default=4244.0)
    a = ap.parse_args(argv)
    rows, dropped = load(a.json)
    note = json.loads(Path(a.json).read_text()).get("context", {}).get("note", "")
    if not rows:
        sys.exit("cg_report.py: no CG benchmark rows in " + a.json)
    f = figures(rows)
    if csr := csr_rows(a.json):
        variant = min(csr, key=csr.get)
        f["cg_f64_us_per_iter_csr1138_best"] = round(csr[variant], 3)
        f["cg_f64_us_per_iter_csr1138_best_variant"] = variant
    path = Path(a.summary)
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary.update(f)
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    Path(a.markdown).write_text(markdown(rows, dropped, f, a.copy_gbs, note, Path(a.json).name))
    print(json.dumps(f, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
