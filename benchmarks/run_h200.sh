#!/usr/bin/env bash
# On the GPU machine: build with all cores, run the whole test suite, the >2^31-point test,
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the device tests tagged
# [sanitize], and the benchmarks; leave logs and JSON under $OUT.
#
#   benchmarks/run_h200.sh [build] [test] [large] [sanitize] [bench] [cg] [experiment]
#                                         (default: all but cg and experiment)
#
# BENCH_FILTER (a Google Benchmark regex) limits the benchmarks run. The experiment stage runs the
# lines of benchmarks/experiment_plan.txt (or EXPERIMENT_PLAN), one relax_experiment invocation
# each, for at most EXPERIMENT_BUDGET seconds in all (default 300), resuming from
# docs/results/h200/experiment.csv, and leaves the CSV, and the report and plots in
# experiment.tgz, under $OUT.
#
# That machine installs nothing: Catch2 v2's header must be carried in .deps/include (see README).
set -uo pipefail
OUT=${OUT:-$PWD/build/h200-out}
BUILD=build/h200
LOGS=$OUT/logs
mkdir -p "$LOGS"
stages=${*:-build test large sanitize bench}
status=0
has() { [[ " $stages " == *" $1 "* ]]; }
step() { echo "== $*"; }

nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv \
  > "$LOGS/nvidia-smi.txt" 2>&1
if has build; then
  step configure and build
  cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DRELAX_CUDA_ARCHITECTURES=90 \
    > "$LOGS/configure.log" 2>&1 &&
  cmake --build $BUILD -j "$(nproc)" > "$LOGS/build.log" 2>&1 ||
    { tail -40 "$LOGS/configure.log" "$LOGS/build.log"; exit 1; }
fi
if has test; then
  step tests
  ctest --test-dir $BUILD --output-on-failure > "$LOGS/ctest.log" 2>&1 || status=1
  tail -15 "$LOGS/ctest.log"
  step "demo: relax-diffusion --n 4096 --r 10"
  $BUILD/examples/relax-diffusion --n 4096 --r 10 --json "$OUT/demo.json" || status=1
fi
if has large; then
  step "large grid (> 2^31 points)"
  $BUILD/tests/relax_device_tests "[.large]" > "$LOGS/large.log" 2>&1 || status=1
  tail -3 "$LOGS/large.log"
fi
if has sanitize; then
  # SANITIZE_TESTS names the test executables (default both), SANITIZE_TOOLS the tools.
  for exe in ${SANITIZE_TESTS:-relax_device_tests relax_device_cg_tests}; do
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
      step "compute-sanitizer $tool $exe"
      compute-sanitizer --tool $tool --error-exitcode 9 $BUILD/tests/$exe "[sanitize]" \
        > "$LOGS/sanitize-$tool-$exe.log" 2>&1 || status=1
      tail -2 "$LOGS/sanitize-$tool-$exe.log"
    done
  done
fi
if has bench; then
  step benchmarks
  $BUILD/benchmarks/relax_bench --benchmark_filter="${BENCH_FILTER:-.}" \
    --benchmark_out="$OUT/bench.json" --benchmark_out_format=json \
    > "$LOGS/bench.log" 2>&1 || status=1
  python3 benchmarks/report.py "$OUT/bench.json" --summary "$OUT/summary.json" \
    --readme "$OUT/results-README.md" || status=1
fi
if has cg; then
  step "CG benchmarks"
  $BUILD/benchmarks/relax_bench_cg --benchmark_filter="${CG_FILTER:-.}" \
    --benchmark_out="$OUT/bench_cg.json" --benchmark_out_format=json > "$LOGS/bench_cg.log" 2>&1 || status=1
  tail -5 "$LOGS/bench_cg.log"
  python3 benchmarks/cg_report.py "$OUT/bench_cg.json" --summary "$OUT/summary.json" \
    --markdown "$OUT/cg.md" || status=1
fi
if has experiment; then
  step "experiment matrix"
  cp docs/results/h200/experiment.csv "$OUT/experiment.csv" 2>/dev/null || true
  deadline=$((SECONDS + ${EXPERIMENT_BUDGET:-300}))
  while read -r line; do
    [[ -z "$line" || "$line" == \#* ]] && continue
    left=$((deadline - SECONDS))
    ((left > 0)) || break
    echo "relax_experiment $line" >> "$LOGS/experiment.log"
    # shellcheck disable=SC2086
    $BUILD/benchmarks/relax_experiment --out "$OUT/experiment.csv" --budget-seconds $left $line \
      >> "$LOGS/experiment.log" 2>&1 || status=1
  done < "${EXPERIMENT_PLAN:-benchmarks/experiment_plan.txt}"
  tail -3 "$LOGS/experiment.log"
  mkdir -p "$OUT/experiment"
  python3 benchmarks/experiment_report.py "$OUT/experiment.csv" --summary "$OUT/summary.json" \
    --markdown "$OUT/experiment/experiment.md" --plots "$OUT/experiment" || status=1
  tar czf "$OUT/experiment.tgz" -C "$OUT" experiment && rm -rf "$OUT/experiment"
fi
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$LOGS"
echo "run_h200.sh: status $status"
exit $status
