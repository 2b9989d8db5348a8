#!/usr/bin/env python3
"""Turns relax_bench_multi_cg's Google Benchmark JSON (CG on k sub-domains of one GPU) into the
named figures of docs/results/h200/summary.json and a markdown table.

usage: multi_cg_report.py BENCH.json [BENCH.json ...] [--summary PATH] [--markdown PATH]

Each row is the mean of its iterations (each iteration one whole solve): its real_time (manual
time, the mean solve) over its CG iterations (the counter `iterations`, fixed for the per-iteration
rows; in the JSON it follows, and so shadows, Google Benchmark's own count of solves). The row's
`ms_per_iter` counter is the last solve's alone and is not used (the figures committed before
2026-12-05 used it: see docs/performance-notes.md). A row measured in several files is taken from
the last file that has it. Figures:

  mcg_ms_per_iter_<variant>_<who>_<operator>       ms per CG iteration at a fixed iteration count
  mcg_solve_ms_<variant>_<who>_<operator>           time to 1e-8, and mcg_solve_iterations_...
  mcg_virtual2_overhead_pct_<operator>[_pipelined|_cpufree|_cpufree_pipelined]
                                                    k = 2 parts on one GPU against k = 1, per
                                                    iteration (the issue's figures: poisson4096,
                                                    and csr_1e6, the ecology2 stand-in)
  mcg_cpufree_over_host_virtual2_<operator>         host-controlled standard CG's time per
                                                    iteration over the CPU-free one's, k = 2
  mcg_cpufree_pipelined_over_host_virtual2_<op>     the same for pipelined CG
  mcg_host_k1_over_one_domain_pct_<operator>        MultiCG's one part against CG<..., Unfused>
  mcg_nvshmem_one_pe_over_one_process_pct_<variant>_k<k>_<operator>
                                                    relax_bench_nvshmem's CG rows: MultiCG over
                                                    Nvshmem on one PE against HostCopy / PeerStore
                                                    with the same k parts in one process, per
                                                    iteration, same run
  mcg_nccl_one_rank_over_peer_store_pct_<variant>_k<k>_<operator>
                                                    the CPU-free CG over NCCL's device API on one
                                                    rank against PeerStore with the same k parts,
                                                    per iteration, same run
"""
import argparse
import json
import re
import sys
from pathlib import Path

KEYS = {"poisson2d/N:4096": "poisson4096", "poisson3d/N:256": "poisson3d_256"}
MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def solve_ms(row):
    """The row's mean solve time in ms."""
    return row["real_time"] * MS_PER_UNIT[row.get("time_unit", "ns")]


def ms_per_iter(row):
    """The mean time of one CG iteration over the row's solves."""
    return solve_ms(row) / max(1.0, row["iterations"])


def key_of(op):
    if op in KEYS:
        return KEYS[op]
    m = re.fullmatch(r"csr_like/(.+)", op)
    return "csr_like_" + re.sub(r"[^A-Za-z0-9]+", "_", m.group(1)) if m else re.sub(r"[^A-Za-z0-9]+", "_", op)


def load(paths):
    rows = {}
    for path in paths:
        for b in json.loads(Path(path).read_text())["benchmarks"]:
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            name = re.sub(r"(/\d+)+/iterations:\d+/manual_time$", "", b["run_name"])
            rows[name] = b
    return rows


def figures(rows):
    f = {}
    for name, row in rows.items():
        m = re.fullmatch(r"multi_cg_(iter|solve)/(standard|pipelined|cpufree|cpufree_pipelined)/(one_domain|k:\d)/(.+)", name)
        if not m:
            continue
        mode, variant, who, op = m.groups()
        stem = f"{variant}_{who.replace(':', '')}_{key_of(op)}"
        if mode == "iter":
            f[f"mcg_ms_per_iter_{stem}"] = round(ms_per_iter(row), 4)
        else:
            f[f"mcg_solve_ms_{stem}"] = round(solve_ms(row), 2)
            f[f"mcg_solve_iterations_{stem}"] = int(row["iterations"])
    for name, row in rows.items():
        m = re.fullmatch(r"multi_cg_iter/(standard|pipelined|cpufree|cpufree_pipelined)/k:2/(.+)", name)
        if not m:
            continue
        variant, op = m.groups()
        one = rows.get(f"multi_cg_iter/{variant}/k:1/{op}")
        if not one:
            continue
        suffix = "" if variant == "standard" else "_" + variant
        pct = round((ms_per_iter(row) / ms_per_iter(one) - 1) * 100, 2)
        f[f"mcg_virtual2_overhead_pct_{key_of(op)}{suffix}"] = pct
        if op == "csr_like/ecology2":  # about 10^6 rows: the CSR figure
            f[f"mcg_virtual2_overhead_pct_csr_1e6{suffix}"] = pct
    # CPU-free over host-controlled CG at k = 2 (the bar: 1.3x on Poisson 4096^2), standard
    # over standard and pipelined over pipelined.
    for free, host_variant, stem in (("cpufree", "standard", "mcg_cpufree_over_host_virtual2_"),
                                     ("cpufree_pipelined", "pipelined", "mcg_cpufree_pipelined_over_host_virtual2_")):
        for name, row in rows.items():
            m = re.fullmatch(rf"multi_cg_iter/{free}/k:2/(.+)", name)
            if m and (host := rows.get(f"multi_cg_iter/{host_variant}/k:2/{m.group(1)}")):
                f[stem + key_of(m.group(1))] = round(ms_per_iter(host) / ms_per_iter(row), 3)
    for name, row in rows.items():
        m = re.fullmatch(r"multi_cg_iter/standard/k:1/(.+)", name)
        if m and (single := rows.get(f"multi_cg_iter/standard/one_domain/{m.group(1)}")):
            f[f"mcg_host_k1_over_one_domain_pct_{key_of(m.group(1))}"] = round(
                (ms_per_iter(row) / ms_per_iter(single) - 1) * 100, 2)
    for name, row in rows.items():
        m = re.fullmatch(r"multi_cg_iter/(standard|pipelined|cpufree|cpufree_pipelined)/nvshmem/k:(\d)/(.+)", name)
        if m and (alone := rows.get(f"multi_cg_iter/{m.group(1)}/one_process/k:{m.group(2)}/{m.group(3)}")):
            key = f"mcg_nvshmem_one_pe_over_one_process_pct_{m.group(1)}_k{m.group(2)}_{key_of(m.group(3))}"
            f[key] = round((ms_per_iter(row) / ms_per_iter(alone) - 1) * 100, 2)
    for name, row in rows.items():
        m = re.fullmatch(r"multi_cg_iter/(cpufree|cpufree_pipelined)/nccl/k:(\d)/(.+)", name)
        if m and (peer := rows.get(f"multi_cg_iter/{m.group(1)}/k:{m.group(2)}/{m.group(3)}")):
            key = f"mcg_nccl_one_rank_over_peer_store_pct_{m.group(1)}_k{m.group(2)}_{key_of(m.group(3))}"
            f[key] = round((ms_per_iter(row) / ms_per_iter(peer) - 1) * 100, 2)
    return f


def markdown(rows):
    out = ["| row | ms per iteration | iterations | time (ms) |", "|---|---:|---:|---:|"]
    for name in sorted(rows):
        row = rows[name]
        out.append(f"| `{name}` | {ms_per_iter(row):.4f} | {int(row['iterations'])} | {solve_ms(row):.2f} |")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--summary", default="docs/results/h200/summary.json")
    ap.add_argument("--markdown")
    a = ap.parse_args(argv)
    rows = load(a.json)
    if not rows:
        sys.exit("multi_cg_report.py: no rows in " + ", ".join(a.json))
    summary_path = Path(a.summary)
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    new = figures(rows)
    summary.update(new)
    summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if a.markdown:
        Path(a.markdown).write_text(markdown(rows))
    print(json.dumps(new, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
