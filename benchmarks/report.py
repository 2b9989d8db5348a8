#!/usr/bin/env python3
"""Turns Google Benchmark JSON from the H200 into docs/results/h200/summary.json (a flat object of
named figures) and the tables of docs/results/README.md.

usage: report.py BENCH.json [BENCH.json ...] [--summary PATH] [--readme PATH] [--mix-runs]

Figures are medians over repetitions, taken from the benchmark's `_median` aggregates. Efficiency
is quoted against the device-to-device copy bandwidth measured in the same run.

Several files: each file is one run. A row measured in several files is taken from the last file
that has it (the files given newest last); the script says on stderr how many rows each later file
replaced. A figure formed from two or more rows (a ratio, a difference, an overhead in %, a
fraction of the copy bandwidth) takes its first row as above and the others from that row's own
file, never from another run unless --mix-runs is given. Where that file lacks a row that another
file has, the figure would mix runs: the script names the figure, each row and its file, and stops
with status 2 without writing the summary or the tables. --mix-runs allows it: the missing row is
then taken from the last file that has it, and each such figure is printed on stderr with the file
of each row. The NVSHMEM figures (multi_nvshmem_*, multi_rdc_overhead_pct_*) are of that kind by
construction: relax_bench_nvshmem's rows against relax_bench_multi's single-domain row, two
executables, so two files and --mix-runs. Where no file has the other row there is no figure, as
with one file.

The tables (--readme) come from the files given and the figures they give, never from figures
already in the summary. In them `x Sync` and `% copy` compare with the row's own run and show `–`
where that run did not measure it (with --mix-runs, `% copy` then takes copy_bandwidth_gbs, the
largest copy among all the files' rows); the memory ceilings name the file of each row when they
come from several.
"""
import argparse
import json
import re
import sys
from pathlib import Path

SHAPES = ["Sync", "32x8x1", "32x8x2", "32x8x4"]
DEFAULT_SHAPE = "Sync"  # relax::Sync, rows per thread chosen at launch


MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def load_medians(paths):
    """{run_name: median row} over all files (a later file's row replaces an earlier one), and
    {file: {run_name: median row}} to compare variants within one run."""
    rows, runs, context = {}, {}, {}
    replaced = {}  # (earlier file, later file): rows of the later one that replaced the earlier's
    for path in paths:
        data = json.loads(Path(path).read_text())
        context = data.get("context", context)
        runs[path] = {}
        for b in data["benchmarks"]:
            if b.get("aggregate_name") != "median" or b.get("error_occurred"):
                continue
            name = re.sub(r"(/\d+)*(/iterations:\d+)?/repeats:\d+.*$", "", b["run_name"])
            b["_file"], b["_name"] = path, name
            # Times in ms whatever unit the row was written in (the figures' `_ms` names say ms).
            scale = MS_PER_UNIT[b.get("time_unit", "ns")]
            b["real_time"] *= scale
            b["cpu_time"] *= scale
            b["time_unit"] = "ms"
            if name in rows and rows[name]["_file"] != path:
                replaced.setdefault((rows[name]["_file"], path), []).append(name)
            rows[name] = runs[path][name] = b
    for (old, new), names in replaced.items():
        print(f"report.py: {len(names)} rows of {old} replaced by {new}'s (e.g. {names[0]})", file=sys.stderr)
    return rows, runs, context


class SameRun:
    """Finds the other rows of a figure in the run (file) of its first row. Where only another
    file has the row, it returns that file's (the last that has it) and records the mix of runs
    in `mixed`: {figure: [(row name, file), ...]}, for main() to refuse or print."""

    def __init__(self, rows, runs):
        self.rows, self.runs, self.mixed = rows, runs, {}

    def _mix(self, figure, row, other):
        used = self.mixed.setdefault(figure, [(row["_name"], row["_file"])])
        if (other["_name"], other["_file"]) not in used:
            used.append((other["_name"], other["_file"]))

    def __call__(self, figure, row, name):
        """The row `name` of `row`'s run, for the figure `figure`."""
        if (got := self.runs[row["_file"]].get(name)) is not None:
            return got
        if (other := self.rows.get(name)) is not None:
            self._mix(figure, row, other)
        return other

    def copy(self, figure, row):
        """The copy bandwidth (largest of the >= 1 GiB copies) of `row`'s run, if any."""
        if got := same_run_copy(self.runs, row):
            return got
        hbm = [r for n, r in self.rows.items() if is_hbm_copy(n)]
        if not hbm:
            return None
        best = max(hbm, key=lambda r: r["GBps"])
        self._mix(figure, row, best)
        return best["GBps"]


def same_run_sync(runs, row, n):
    """relax::Sync's row at size n from the run that produced `row`."""
    return runs[row["_file"]].get(f"sync_sweep/{DEFAULT_SHAPE}/N:{n}")


def is_hbm_copy(name):
    """A copy of at least 1 GiB: past the L2, the device memory's copy bandwidth."""
    return bool((m := re.fullmatch(r"copy/memcpy/MiB:(\d+)", name)) and int(m.group(1)) >= 1024)


def same_run_copy(runs, row):
    """The copy bandwidth (largest of the >= 1 GiB copies) measured in the run of `row`, if any."""
    hbm = [r["GBps"] for n, r in runs[row["_file"]].items() if is_hbm_copy(n)]
    return max(hbm) if hbm else None


def figures(rows, runs, same=None):
    """The summary's figures. `same` (a SameRun) finds the other rows of a figure in the run of its
    first row, and records where that would take a row of another run."""
    same = same or SameRun(rows, runs)
    f = {}
    copies = {int(m.group(1)): r["GBps"] for n, r in rows.items()
              if (m := re.fullmatch(r"copy/memcpy/MiB:(\d+)", n))}
    hbm = [v for mib, v in copies.items() if mib >= 1024]
    if hbm:
        f["copy_bandwidth_gbs"] = round(max(hbm), 1)
    reads = [r["GBps"] for n, r in rows.items() if re.fullmatch(r"read/MiB:(\d+)", n)
             and int(n.split(":")[1]) >= 1024]
    if reads:
        f["read_bandwidth_gbs"] = round(max(reads), 1)
    if 16 in copies:
        f["copy_bandwidth_l2_gbs"] = round(copies[16], 1)
    for n in (512, 1024, 2048, 4096, 8192, 16384):
        row = rows.get(f"sync_sweep/{DEFAULT_SHAPE}/N:{n}")
        if row:
            f[f"sync_sweep_gups_N{n}"] = round(row["gups"], 1)
            f[f"sync_sweep_gbs_N{n}"] = round(row["GBps"], 1)
    row = rows.get(f"sync_sweep/{DEFAULT_SHAPE}/N:16384")
    if row and (copy := same.copy("sync_sweep_fraction_of_copy_N16384", row)):
        f["sync_sweep_fraction_of_copy_N16384"] = round(row["GBps"] / copy, 3)
    for name, row in rows.items():
        m = re.fullmatch(r"diffusion_solve/Sync/r:(\d+)/N:(\d+)", name)
        if m:
            r, n = m.groups()
            f[f"sync_solve_ms_r{r}_N{n}"] = round(row["real_time"], 3)
            f[f"sync_solve_check_share_r{r}_N{n}"] = round(row["check_share"], 3)
    # The best exact (TemporalBlock) sweep, and its ratio to Sync measured in the same run.
    for n in (8192, 16384):
        exact = [(row["gups"], row) for name, row in rows.items()
                 if re.fullmatch(rf"tiled_sweep/TemporalBlock\w*/N:{n}", name)]
        if exact:
            gups, row = max(exact, key=lambda e: e[0])
            f[f"temporal_best_gups_N{n}"] = round(gups, 1)
            key = "temporal_over_sync_sweep_ratio_N16384"
            if n == 16384 and (sync := same(key, row, f"sync_sweep/{DEFAULT_SHAPE}/N:{n}")):
                f[key] = round(gups / sync["gups"], 2)
    # 3D: Sync at 512³ against the copy ceiling, the best exact tiled sweep against it, and the
    # ten-step time to solution at 256³ of the best strategy over Sync's.
    sync3d = rows.get("sync3d_sweep/Sync/N:512")
    if sync3d:
        f["sync3d_sweep_gups_N512"] = round(sync3d["gups"], 1)
        if copy := same.copy("sync3d_sweep_fraction_of_copy_N512", sync3d):
            f["sync3d_sweep_fraction_of_copy_N512"] = round(sync3d["GBps"] / copy, 3)
    exact3d = [(row["gups"], row) for name, row in rows.items()
               if re.fullmatch(r"tiled3d_sweep/TemporalBlock\w*/N:512", name)]
    if exact3d:
        gups, row = max(exact3d, key=lambda e: e[0])
        f["temporal3d_best_gups_N512"] = round(gups, 1)
        if sync := same("temporal3d_over_sync3d_sweep_ratio_N512", row, "sync3d_sweep/Sync/N:512"):
            f["temporal3d_over_sync3d_sweep_ratio_N512"] = round(gups / sync["gups"], 2)
    sync3d = rows.get("diffusion3d_solve/Sync/r:10/N:256")
    solves3d = {m.group(1): row for name, row in (runs[sync3d["_file"]].items() if sync3d else ())
                if (m := re.fullmatch(r"diffusion3d_solve/(\w+)/r:10/N:256", name))}  # Sync's run only
    if "Sync" in solves3d:
        best = min(row["real_time"] for row in solves3d.values())
        f["best3d_over_sync3d_time_r10_N256"] = round(solves3d["Sync"]["real_time"] / best, 3)
    # The device loops: µs per sweep with a device check every 8 sweeps (the best inner schedule,
    # and DeviceLoop<Sync> on its own), the grid barriers on their own, and ten steps against
    # the launch-based strategies of the same run.
    for n in (256, 1024):
        loops = {m.group(1): row for name, row in rows.items()
                 if (m := re.fullmatch(rf"loop_sweep/(DeviceLoop_\w+)/checks:8/N:{n}", name))}
        if loops:
            best = min(loops, key=lambda k: loops[k]["us_per_sweep"])
            f[f"persistent_us_per_sweep_N{n}"] = round(loops[best]["us_per_sweep"], 2)
            print(f"persistent_us_per_sweep_N{n}: {best}")
        if "DeviceLoop_Sync" in loops:
            f[f"device_loop_sync_us_per_sweep_N{n}"] = round(loops["DeviceLoop_Sync"]["us_per_sweep"], 2)
    for key, name in (("grid_barrier_us", "relax/blocks_per_sm:all"),
                      ("grid_barrier_us_one_per_sm", "relax/blocks_per_sm:1"),
                      ("grid_sync_us", "cg_grid_sync/blocks_per_sm:all"),
                      ("grid_sync_us_one_per_sm", "cg_grid_sync/blocks_per_sm:1")):
        row = rows.get(f"grid_barrier/{name}")
        if row:
            f[key] = round(row["us_per_barrier"], 3)
    for n in (256, 512, 1024, 4096):
        row = rows.get(f"diffusion_solve/DeviceLoop_Sync/r:10/N:{n}")
        key = f"device_loop_over_sync_time_r10_N{n}"
        if row and (sync := same(key, row, f"diffusion_solve/Sync/r:10/N:{n}")):
            f[key] = round(sync["real_time"] / row["real_time"], 2)
    # persistent_over_best: the best launch-based time over the best device-loop time, both
    # from the run of the newest device-loop row (a ratio above 1: the device loop is faster).
    for n in (256, 512, 1024, 2048, 4096, 16384):
        loops = [row for name, row in rows.items()
                 if re.fullmatch(rf"diffusion_solve/DeviceLoop_\w+/r:10/N:{n}", name)]
        if not loops:
            continue
        order = list(runs)  # the files in the order given, the newest last
        run = runs[max((row["_file"] for row in loops), key=order.index)]
        solves = {m.group(1): row for name, row in run.items()
                  if (m := re.fullmatch(rf"diffusion_solve/(\w+)/r:10/N:{n}", name))}
        device = {k: v for k, v in solves.items() if k.startswith("DeviceLoop_")}
        launch = {k: v for k, v in solves.items() if not k.startswith("DeviceLoop_")}
        if device and launch:
            d = min(device, key=lambda k: device[k]["real_time"])
            l = min(launch, key=lambda k: launch[k]["real_time"])
            f[f"persistent_over_best_time_r10_N{n}"] = round(launch[l]["real_time"] / device[d]["real_time"], 2)
            f[f"persistent_best_time_r10_N{n}_ms"] = round(device[d]["real_time"], 3)
            f[f"launch_best_time_r10_N{n}_ms"] = round(launch[l]["real_time"], 3)
            print(f"persistent_over_best_time_r10_N{n}: {d} against {l}")
    # Several sub-domains on one GPU (issue 15): k = 2 slabs of the same GPU against k = 1, host
    # controlled, for the fastest strategy of the run at each size (k = 1 from the run of k = 2).
    for key, n in (("N256", "256"), ("N16384", "16384"), ("N512_3d", "512")):
        whole = []
        for name, row in rows.items():
            if (m := re.fullmatch(rf"multi_sweep/host_copy/k:2/(\w+)/N:{n}", name)) and (one := same(
                    f"multi_virtual2_overhead_pct_{key}_host", row, f"multi_sweep/host_copy/k:1/{m.group(1)}/N:{n}")):
                whole.append((one["us_per_sweep"], row["us_per_sweep"]))
        if whole:
            one, two = min(whole)
            f[f"multi_virtual2_overhead_pct_{key}_host"] = round((two / one - 1) * 100, 2)
            f[f"multi_virtual2_us_per_sweep_{key}_host"] = round(two, 2)
        # HostCopy with the exchange overlapped with interior compute (Sync): k = 2 against k = 1,
        # and against k = 2 without the overlap.
        base = plain = None
        if over := rows.get(f"multi_sweep/host_copy_overlap/k:2/Sync/N:{n}"):
            figure = f"multi_virtual2_overhead_pct_{key}_host_overlap"
            base = same(figure, over, f"multi_sweep/host_copy/k:1/Sync/N:{n}")
            plain = same(figure, over, f"multi_sweep/host_copy/k:2/Sync/N:{n}")
        if over and base and plain:
            f[f"multi_virtual2_overhead_pct_{key}_host_overlap"] = round((over["us_per_sweep"] / base["us_per_sweep"] - 1) * 100, 2)
            f[f"multi_virtual2_us_per_sweep_{key}_host_overlap"] = round(over["us_per_sweep"], 3)
            f[f"multi_virtual2_overlap_gain_pct_{key}_host"] = round((plain["us_per_sweep"] / over["us_per_sweep"] - 1) * 100, 2)
        # NCCL with one rank (one GPU) against the single-domain solve of the same strategy.
        for name, row in rows.items():
            if m := re.fullmatch(rf"multi_sweep/nccl/k:1/(\w+)/N:{n}", name):
                if base := same(f"multi_nccl_one_rank_overhead_pct_{key}", row, f"multi_sweep/one_domain/{m.group(1)}/N:{n}"):
                    f[f"multi_nccl_one_rank_overhead_pct_{key}"] = round(
                        (row["us_per_sweep"] / base["us_per_sweep"] - 1) * 100, 2)
        # NVSHMEM, one process per GPU (benchmarks/nvshmem.cu): k = 1 and 2 sub-domains on one PE
        # (every halo a put-with-signal) against the single-domain DeviceLoop<Sync> of that run.
        # Rows `nvshmem` store the halos through NVSHMEM's mapping, `nvshmem_put` put them; the
        # baseline is relax_bench_multi's single-domain row (built without relocatable device
        # code: pass both JSON files, and --mix-runs), and `one_domain_rdc` the same solve in the
        # NVSHMEM build.
        one_name = f"multi_sweep/one_domain/DeviceLoop_Sync/N:{n}"
        if (rdc := rows.get(f"multi_sweep/one_domain_rdc/DeviceLoop_Sync/N:{n}")) and (
                one := same(f"multi_rdc_overhead_pct_{key}_one_domain", rdc, one_name)):
            f[f"multi_rdc_overhead_pct_{key}_one_domain"] = round((rdc["us_per_sweep"] / one["us_per_sweep"] - 1) * 100, 2)
        for who in ("nvshmem", "nvshmem_put"):
            for k in ("1", "2"):
                if (row := rows.get(f"multi_sweep/{who}/k:{k}/DeviceLoop_Sync/N:{n}")) and (
                        one := same(f"multi_{who}_k{k}_overhead_pct_{key}", row, one_name)):
                    f[f"multi_{who}_k{k}_overhead_pct_{key}"] = round(
                        (row["us_per_sweep"] / one["us_per_sweep"] - 1) * 100, 2)
                    f[f"multi_{who}_k{k}_us_per_sweep_{key}"] = round(row["us_per_sweep"], 3)
        # CPU-free (PeerStore, DeviceLoop<Sync>): k = 2 slabs against the single-domain solve of
        # the same strategy; one kernel for both slabs (the default), and one kernel per slab.
        for who, suffix in (("peer_store", ""), ("peer_store_apart", "_apart")):
            two = rows.get(f"multi_sweep/{who}/k:2/DeviceLoop_Sync/N:{n}")
            if two and (one := same(f"multi_virtual2_overhead_pct_{key}_cpufree{suffix}", two,
                                    f"multi_sweep/one_domain/DeviceLoop_Sync/N:{n}")):
                a, b = one["us_per_sweep"], two["us_per_sweep"]
                f[f"multi_virtual2_overhead_pct_{key}_cpufree{suffix}"] = round((b / a - 1) * 100, 2)
                f[f"multi_virtual2_us_per_sweep_{key}_cpufree{suffix}"] = round(b, 3)
                f[f"multi_virtual2_extra_us_per_sweep_{key}_cpufree{suffix}"] = round(b - a, 3)
        # CPU-free over NCCL's device API (one rank, the same kernels, every link through NCCL's
        # windows): k = 1 and 2 slabs (one kernel; `_apart`: one kernel per slab) against the
        # single-domain DeviceLoop<Sync> of the same run.
        # The streamed loop (DeviceLoop_Stream8) likewise, as multi_nccl_device_stream8_*.
        for strategy, stem in (("DeviceLoop_Sync", "multi_nccl_device"), ("DeviceLoop_Stream8", "multi_nccl_device_stream8")):
            for who, suffix in (("nccl_device", ""), ("nccl_device_apart", "_apart")):
                for k in ("1", "2"):
                    row = rows.get(f"multi_sweep/{who}/k:{k}/{strategy}/N:{n}")
                    base = same(f"{stem}_k{k}_overhead_pct_{key}{suffix}", row,
                                f"multi_sweep/one_domain/{strategy}/N:{n}") if row else None
                    if base:
                        f[f"{stem}_k{k}_overhead_pct_{key}{suffix}"] = round(
                            (row["us_per_sweep"] / base["us_per_sweep"] - 1) * 100, 2)
                        f[f"{stem}_k{k}_us_per_sweep_{key}{suffix}"] = round(row["us_per_sweep"], 3)
        # CPU-free with temporal blocking (PeerStore, DeviceLoop<TemporalBlock<D, ColumnStream>>):
        # k = 1 and 2 slabs against the single-domain streamed loop of the same D, same run.
        for name, row in rows.items():
            if not (m := re.fullmatch(rf"multi_sweep/(peer_store|peer_store_apart)/k:(1|2)/DeviceLoop_Stream(\d+)/N:{n}", name)):
                continue
            who, k, depth = m.groups()
            suffix = "_apart" if who == "peer_store_apart" else ""
            stem = f"multi_stream{depth}_k{k}"
            if one := same(f"{stem}_overhead_pct_{key}_cpufree{suffix}", row,
                           f"multi_sweep/one_domain/DeviceLoop_Stream{depth}/N:{n}"):
                f[f"{stem}_overhead_pct_{key}_cpufree{suffix}"] = round((row["us_per_sweep"] / one["us_per_sweep"] - 1) * 100, 2)
                f[f"{stem}_us_per_sweep_{key}_cpufree{suffix}"] = round(row["us_per_sweep"], 3)
                f[f"multi_stream{depth}_one_domain_us_per_sweep_{key}"] = round(one["us_per_sweep"], 3)
    # Scaling over GPUs (benchmarks/multi.cu, rows multi_scaling/{strong,weak}/<comm>/gpus:g/...):
    # efficiency against one GPU, strong t1 / (g tg) for the same box, weak t1 / tg for g times it.
    for name, row in rows.items():
        if m := re.fullmatch(r"multi_scaling/(strong|weak)/(\w+)/gpus:(\d+)/(\w+)/N:(\d+)", name):
            kind, comm, g, strategy, n = m.groups()
            figure = f"multi_{kind}_efficiency_{comm}_{strategy}_N{n}_gpus{g}"
            if int(g) > 1 and (base := same(figure, row, f"multi_scaling/strong/{comm}/gpus:1/{strategy}/N:{n}")):
                t1, tg = base["us_per_sweep"], row["us_per_sweep"]
                f[figure] = round(
                    t1 / (int(g) * tg) if kind == "strong" else t1 / tg, 3)
    return f


def markdown(rows, runs, f, context, mix=False):
    """The tables, from the rows and this invocation's figures `f` (not the summary's others)."""
    everywhere = f.get("copy_bandwidth_gbs") if mix else None

    def copy_of(row):
        """The copy bandwidth of `row`'s run (with --mix-runs, of all the files where it has none)."""
        return same_run_copy(runs, row) or everywhere

    ceilings = sorted((name, row) for name, row in rows.items() if name.startswith(("copy/", "read/")))
    several = len({row["_file"] for _, row in ceilings}) > 1
    out = ["# Results", "",
           "Generated by `benchmarks/report.py` from the Google Benchmark JSON in `h200/`; "
           "every figure is the median over repetitions; ratios and `% copy` compare rows of the same run. "
           f"Latest run: {context.get('date', '')}.",
           "Figures named in issues are in `h200/summary.json`, which later runs (of fewer rows) "
           "update, so its figures may be newer than this page's; `docs/performance-notes.md` names "
           "the run behind each. Also generated here: "
           "`experiment.md` and the plots beside it (the time-to-solution matrix, "
           "`benchmarks/experiment_report.py` from `h200/experiment.csv`) and `cg.md` (CG, "
           "`benchmarks/cg_report.py` from `h200/bench_cg.json`) and `profile.md` (DRAM bytes per point and "
           "sweep of each kernel, `benchmarks/profile_report.py` from `h200/profile_ncu.csv`).", "",
           "## Memory ceilings" + (" (file of each row)" if several else " (same run)"), "",
           "| measurement | GB/s |" + (" file |" if several else ""), "|---|---|" + ("---|" if several else "")]
    for name, row in ceilings:
        out.append(f"| {name} | {row['GBps']:.0f} |" + (f" {Path(row['_file']).name} |" if several else ""))
    sync = f.get("sync_sweep_gups_N16384")
    if sync and "sync_sweep_fraction_of_copy_N16384" in f:
        out += ["", "## Against the bar and the public anchors", "",
                f"- Sync sweep at N = 16384: {sync:.0f} G updates/s, "
                f"{100 * f['sync_sweep_fraction_of_copy_N16384']:.0f}% of the copy bandwidth of this run "
                f"(bar: 85%); NVIDIA's single-GPU Jacobi sample reaches about 187 G updates/s "
                f"there with a norm every iteration ({sync / 187:.2f}x).",
                "- The arithmetic limit is an order of magnitude higher: the sweep moves 12 B per point, so memory "
                "bandwidth is the ceiling until strategies reuse data across sweeps."]
    if "temporal_best_gups_N8192" in f:
        out.append(f"- Best exact temporal blocking: {f['temporal_best_gups_N8192']:.0f} G updates/s at "
                   f"N = 8192 (EBISU, ICS'23, plain 5-point Jacobi without a right-hand side: about 683 "
                   f"on the same GPU)")
    if "temporal_over_sync_sweep_ratio_N16384" in f:
        out.append(f"- and {f['temporal_best_gups_N16384']:.0f} G updates/s at N = 16384, "
                   f"{f['temporal_over_sync_sweep_ratio_N16384']:.2f}x Sync in the same run (bar: 2.5x).")
    out += ["", "## Sync sweep shape", "",
            "Jacobi sweep of `Stencil5<float>`, 12 B per point (read u, read b, write u'); "
            "`% copy` is effective bandwidth over the copy ceiling of the same run. Shapes are "
            "`BlockX x BlockY x RowsPerThread` (each thread updates 16 bytes of a row); `Sync` is "
            "`relax::Sync`, 32 x 8 with the rows per thread picked at launch.", "",
            "| N | " + " | ".join(f"{s} G upd/s" for s in SHAPES) + " | " +
            " | ".join(f"{s} % copy" for s in SHAPES) + " |",
            "|---|" + "---|" * (2 * len(SHAPES))]
    for n in (512, 1024, 2048, 4096, 8192, 16384):
        cells, pct = [], []
        for s in SHAPES:
            row = rows.get(f"sync_sweep/{s}/N:{n}")
            cells.append(f"{row['gups']:.1f}" if row else "–")
            pct.append(f"{100 * row['GBps'] / copy:.0f}" if row and (copy := copy_of(row)) else "–")
        out.append(f"| {n} | " + " | ".join(cells) + " | " + " | ".join(pct) + " |")
    out += ["", "## Ten-step diffusion solve (Fixed M = 8, tol 1e-5, Gaussian source)", "",
            "| N | r | strategy | time to solution (ms) | sweeps | G upd/s | share in checks |",
            "|---|---|---|---|---|---|---|"]
    solves = []
    for name, row in rows.items():
        m = re.fullmatch(r"diffusion(3d)?_solve/(\w+)/r:(\d+)/N:(\d+)", name)
        if m:
            solves.append((int(m.group(4)), int(m.group(3)), m.group(2) + (" (3D)" if m.group(1) else ""), row))
    for n, r, strategy, row in sorted(solves):
        share = f"{100 * row['check_share']:.1f} %" if "check_share" in row else "in the kernel"
        out.append(f"| {n} | {r} | {strategy} | {row['real_time']:.2f} | {row['sweeps']:.0f} | "
                   f"{row['gups']:.1f} | {share} |")
    tiled = []
    for name, row in rows.items():
        m = re.fullmatch(r"tiled_sweep/(\w+)/N:(\d+)", name)
        if m:
            tiled.append((m.group(1), int(m.group(2)), row))
    if tiled:
        out += ["", "## Tiled strategies, sweep throughput", "",
                "A launch of depth D counts as D sweeps; `x Sync` is the throughput over "
                "`relax::Sync`'s at the same N in the same run (c = 1 / that ratio is the cost per "
                "sweep). `_stream` is `TemporalBlock<D, ColumnStream>`; the others are the "
                "shared-memory tile kernels (32 x 8 tiles unless named).", "",
                "| strategy | N | G upd/s | x Sync |", "|---|---|---|---|"]
        for name, n, row in sorted(tiled, key=lambda t: (t[1], t[0])):
            sync = same_run_sync(runs, row, n)
            ratio = f"{row['gups'] / sync['gups']:.2f}" if sync else "–"
            out.append(f"| {name} | {n} | {row['gups']:.1f} | {ratio} |")
    sweeps3d = []
    for name, row in rows.items():
        m = re.fullmatch(r"(sync3d|tiled3d)_sweep/(\w+)/N:(\d+)", name)
        if m:
            sweeps3d.append((int(m.group(3)), m.group(1), m.group(2), row))
    if sweeps3d:
        out += ["", "## 3D sweeps (`Stencil7<float>`, N³ points, 12 B per point for Sync)", "",
                "`x Sync` compares with `relax::Sync` on the same cube in the same run, `% copy` with "
                "the copy ceiling of the same run.", "",
                "| N | kernel | G upd/s | GB/s (12 B/point) | % copy | x Sync |", "|---|---|---|---|---|---|"]
        for n, kind, name, row in sorted(sweeps3d, key=lambda t: (t[0], t[1], t[2])):
            sync = runs[row["_file"]].get(f"sync3d_sweep/Sync/N:{n}")
            ratio = f"{row['gups'] / sync['gups']:.2f}" if sync else "–"
            pct = f"{100 * row['GBps'] / copy:.0f}" if (copy := copy_of(row)) else "–"
            out.append(f"| {n} | {kind}/{name} | {row['gups']:.1f} | {row['GBps']:.0f} | {pct} | {ratio} |")
    out += ["", "## CPU reference sweep", "", "| N | threads | G upd/s |", "|---|---|---|"]
    for name, row in sorted(rows.items()):
        m = re.fullmatch(r"reference_sweep/threads:(\w+)/N:(\d+)", name)
        if m:
            out.append(f"| {m.group(2)} | {row['threads']:.0f} | {row['gups']:.2f} |")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--summary", default="docs/results/h200/summary.json")
    ap.add_argument("--readme", default="docs/results/README.md")
    ap.add_argument("--mix-runs", action="store_true",
                    help="let a figure take a row of another file where its own file lacks it (printed)")
    a = ap.parse_args(argv)
    rows, runs, context = load_medians(a.json)
    if not rows:
        sys.exit("report.py: no median rows in " + ", ".join(a.json))
    same = SameRun(rows, runs)
    new = figures(rows, runs, same)
    mixed = {figure: used for figure, used in same.mixed.items() if figure in new}
    for figure, used in sorted(mixed.items()):
        print(f"report.py: {figure} {'from' if a.mix_runs else 'would mix runs:'} " +
              ", ".join(f"{name} ({file})" for name, file in used), file=sys.stderr)
    if mixed and not a.mix_runs:
        print(f"report.py: {len(mixed)} figures would take rows of different runs (above): nothing written. "
              "Give the files of one run, or pass --mix-runs to allow it.", file=sys.stderr)
        sys.exit(2)
    summary_path = Path(a.summary)
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    summary.update(new)
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    Path(a.readme).write_text(markdown(rows, runs, new, context, a.mix_runs))
    print(json.dumps(summary, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
