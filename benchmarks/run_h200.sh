#!/usr/bin/env bash
# On the GPU machine: build with all cores, run the whole test suite, the >2^31-point test,
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the device tests tagged
# [sanitize], and the benchmarks; leave logs and JSON under $OUT.
#
#   benchmarks/run_h200.sh [build] [test] [device] [large] [sanitize] [bench] [cg] [multi] [experiment] [profile] [study]
#                                         (default: build test large sanitize bench)
#
# Stages run in the order given. Each step runs within what is left of RUN_BUDGET seconds
# (default 570, under the device tool's 600 s), so a long step cannot lose the logs.
#
# BUILD_TARGETS limits the build to those targets (default: all). The device stage runs
# relax_device_tests on the Catch2 test spec DEVICE_TESTS (default "[3d]") instead of the whole ctest.
# BENCH_FILTER, CG_FILTER and MULTI_FILTER (Google Benchmark regexes) limit the benchmarks run. The experiment stage runs the
# lines of benchmarks/experiment_plan.txt (or EXPERIMENT_PLAN), one relax_experiment invocation
# each, for at most EXPERIMENT_BUDGET seconds in all (default 300), resuming from
# docs/results/h200/experiment.csv, and leaves the CSV, and the report and plots in
# experiment.tgz, under $OUT. The study stage runs the studies named in STUDIES (default
# relax_study_lean_stream; benchmarks/studies/) with no arguments, each one's output in
# $OUT/NAME.txt; with STUDY_NCU set (a regex of kernel names), also Nsight Compute's full set on
# those kernels of NAME --one (a study that takes it: relax_study_lean_stream, whose kernels are
# 'lean_kernel|plane_stream_k_kernel') in $OUT/NAME-ncu.txt.
#
# BUILD_DIR (default build/h200) is the build tree, and CUDA_DEFINES extra flags for nvcc when it
# is configured (CMAKE_CUDA_FLAGS: .cu files only, and kept in the tree's cache), e.g. a tuning
# switch: CUDA_DEFINES=-DRELAX_TUNING_PLANE_STREAM_SPLIT=0 with BUILD_DIR=build/h200-nosplit and
# OUT=$OUT/nosplit, so one call builds and runs both forms of the library; give each run its
# share of the call with RUN_BUDGET (the build counts against it too).
#
# That machine installs nothing: Catch2 v2's header must be carried in .deps/include (see README).
set -uo pipefail
OUT=${OUT:-$PWD/build/h200-out}
BUILD=${BUILD_DIR:-build/h200}
LOGS=$OUT/logs
mkdir -p "$LOGS"
stages=${*:-build test large sanitize bench}
status=0
# The device tool stops a command at 600 s and then returns only what is under $OUT: each step
# gets what is left of RUN_BUDGET seconds, less 20 for packing the logs.
RUN_BUDGET=${RUN_BUDGET:-570}
step() { echo "== [${SECONDS} s] $*"; }
timed() {
  local left=$((RUN_BUDGET - SECONDS - 20))
  if ((left <= 0)); then
    echo "skipped, RUN_BUDGET spent: $*"
    return 1
  fi
  timeout -k 5 "$left" "$@"
}

stage_build() {
  step configure and build
  rm -f "$LOGS/configure.log" "$LOGS/build.log"
  cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DRELAX_CUDA_ARCHITECTURES=90 \
    ${CUDA_DEFINES:+"-DCMAKE_CUDA_FLAGS=$CUDA_DEFINES"} > "$LOGS/configure.log" 2>&1 &&
  # shellcheck disable=SC2086
  timed cmake --build $BUILD -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} > "$LOGS/build.log" 2>&1 ||
    { tail -n 40 "$LOGS/configure.log" "$LOGS/build.log" 2>/dev/null; exit 1; }
}
stage_test() {
  step tests
  timed ctest --test-dir $BUILD --output-on-failure > "$LOGS/ctest.log" 2>&1 || status=1
  tail -15 "$LOGS/ctest.log"
  step "demo: relax-diffusion --n 4096 --r 10"
  timed $BUILD/examples/relax-diffusion --n 4096 --r 10 --json "$OUT/demo.json" || status=1
}
stage_device() {
  step "device tests ${DEVICE_TESTS:-[3d]}"
  timed $BUILD/tests/relax_device_tests "${DEVICE_TESTS:-[3d]}" > "$LOGS/device.log" 2>&1 || status=1
  tail -3 "$LOGS/device.log"
}
stage_large() {
  step "large grid (> 2^31 points)"
  timed $BUILD/tests/relax_device_tests "[.large]" > "$LOGS/large.log" 2>&1 || status=1
  tail -3 "$LOGS/large.log"
}
stage_sanitize() {
  # SANITIZE_TESTS names the test executables (default both), SANITIZE_TOOLS the tools,
  # SANITIZE_SKIP pairs tool:executable to leave out (e.g. racecheck:relax_device_cg_tests), and
  # SANITIZE_FILTER the Catch2 test spec (default "[sanitize]"). SANITIZE_JOBS > 1 runs one
  # sanitizer process per test case, that many at a time (racecheck on the whole set in one
  # process takes more than one call's time; per case, 8 at a time, about 500 s:
  # SANITIZE_JOBS=8 SANITIZE_TOOLS=racecheck benchmarks/run_h200.sh sanitize).
  for exe in ${SANITIZE_TESTS:-relax_device_tests relax_device_cg_tests}; do
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
      [[ " ${SANITIZE_SKIP:-} " == *" $tool:$exe "* ]] && continue
      step "compute-sanitizer $tool $exe"
      if ((${SANITIZE_JOBS:-1} > 1)); then
        sanitize_per_case "$tool" "$exe" || status=1
        continue
      fi
      timed compute-sanitizer --tool $tool --error-exitcode 9 $BUILD/tests/$exe "${SANITIZE_FILTER:-[sanitize]}" \
        > "$LOGS/sanitize-$tool-$exe.log" 2>&1 || status=1
      tail -2 "$LOGS/sanitize-$tool-$exe.log"
    done
  done
}
# sanitize_per_case TOOL EXE: TOOL on each test case of EXE that SANITIZE_FILTER selects, in its own
# process, SANITIZE_JOBS at a time, each within what is left of RUN_BUDGET when it starts; one
# line per case (name, exit code, seconds, result) in $LOGS/sanitize-TOOL-EXE.tsv, the logs in
# $LOGS/sanitize-TOOL-EXE.tgz. A name's commas and brackets are escaped (Catch2 v2 reads them as
# separators and tags), and a name that matches no case fails (-w NoTests), as does an empty list.
sanitize_per_case() {
  local tool=$1 exe=$2 dir="$LOGS/sanitize-$1-$2"
  mkdir -p "$dir"
  # (Catch2 v2 exits with the number of cases listed: the list's status says nothing.)
  $BUILD/tests/$exe --list-test-names-only "${SANITIZE_FILTER:-[sanitize]}" > "$dir/listed.txt"
  grep -v '^device [0-9]*:' "$dir/listed.txt" | grep -v '^$' | sed 's/[\\,[]/\\&/g' > "$dir/cases.txt"
  [[ -s "$dir/cases.txt" ]] || { echo "no test case of $exe matches ${SANITIZE_FILTER:-[sanitize]}"; return 1; }
  local deadline=$((EPOCHSECONDS + RUN_BUDGET - SECONDS - 20))
  # shellcheck disable=SC2016
  xargs -d '\n' -P "$SANITIZE_JOBS" -I{} bash -c '
    log="$0/$(printf %s "$4" | tr -c "A-Za-z0-9_" _ | cut -c1-100)-$$.log"; start=$SECONDS
    left=$(($1 - EPOCHSECONDS))
    if ((left <= 0)); then printf "%s\tskipped\t0s\tRUN_BUDGET spent\n" "$4"; exit 0; fi
    timeout -k 5 "$left" compute-sanitizer --tool "$2" --error-exitcode 9 "$3" "$4" -w NoTests > "$log" 2>&1
    rc=$?
    printf "%s\trc=%d\t%ds\t%s\n" "$4" $rc $((SECONDS - start)) \
      "$(grep -h "SUMMARY\|All tests passed\|test cases:\|No test cases" "$log" | tr "\n" " ")"
  ' "$dir" "$deadline" "$tool" "$BUILD/tests/$exe" {} < "$dir/cases.txt" > "$LOGS/sanitize-$tool-$exe.tsv"
  tar czf "$LOGS/sanitize-$tool-$exe.tgz" -C "$dir" . && rm -rf "$dir"
  local bad
  bad=$(grep -cv $'\trc=0\t' "$LOGS/sanitize-$tool-$exe.tsv")
  echo "$(wc -l < "$LOGS/sanitize-$tool-$exe.tsv") cases, $bad not clean"
  grep -v $'\trc=0\t' "$LOGS/sanitize-$tool-$exe.tsv"
  ((bad == 0))
}
# run_benchmark EXE FILTER NAME: the Google Benchmark executable EXE on FILTER, its JSON in
# $OUT/NAME.json and its log in $LOGS/NAME.log.
run_benchmark() {
  timed $BUILD/benchmarks/$1 --benchmark_filter="$2" --benchmark_out="$OUT/$3.json" --benchmark_out_format=json \
    > "$LOGS/$3.log" 2>&1 || status=1
}
stage_bench() {
  step benchmarks
  run_benchmark relax_bench "${BENCH_FILTER:-.}" bench
  python3 benchmarks/report.py "$OUT/bench.json" --summary "$OUT/summary.json" \
    --readme "$OUT/results-README.md" || status=1
}
stage_cg() {
  step "CG benchmarks"
  # The default leaves out time to 1e-8 at N = 8192 (about 6 minutes): CG_FILTER='cg_solve/.*/N:8192'.
  run_benchmark relax_bench_cg "${CG_FILTER:-^(cg_iter|cg_solve/.*/N:(256|1024|4096)/)}" bench_cg
  tail -5 "$LOGS/bench_cg.log"
  python3 benchmarks/cg_report.py "$OUT/bench_cg.json" --summary "$OUT/summary.json" \
    --markdown "$OUT/cg.md" || status=1
}
stage_multi() {
  step "several sub-domains (relax_bench_multi)"
  run_benchmark relax_bench_multi "${MULTI_FILTER:-.}" bench_multi
  tail -5 "$LOGS/bench_multi.log"
  python3 benchmarks/report.py "$OUT/bench_multi.json" --summary "$OUT/summary.json" \
    --readme "$OUT/results-README-multi.md" || status=1
}
stage_experiment() {
  step "experiment matrix"
  cp docs/results/h200/experiment.csv "$OUT/experiment.csv" 2>/dev/null || true
  local deadline=$((SECONDS + ${EXPERIMENT_BUDGET:-300}))
  while read -r line; do
    [[ -z "$line" || "$line" == \#* ]] && continue
    local left=$((deadline - SECONDS))
    ((left > 0)) || break
    echo "relax_experiment $line" >> "$LOGS/experiment.log"
    # shellcheck disable=SC2086
    timed $BUILD/benchmarks/relax_experiment --out "$OUT/experiment.csv" --budget-seconds $left $line \
      >> "$LOGS/experiment.log" 2>&1 || status=1
  done < "${EXPERIMENT_PLAN:-benchmarks/experiment_plan.txt}"
  tail -3 "$LOGS/experiment.log"
  mkdir -p "$OUT/experiment"
  python3 benchmarks/experiment_report.py "$OUT/experiment.csv" --summary "$OUT/summary.json" \
    --markdown "$OUT/experiment/experiment.md" --plots "$OUT/experiment" || status=1
  tar czf "$OUT/experiment.tgz" -C "$OUT" experiment && rm -rf "$OUT/experiment"
}

stage_profile() {
  step "ncu: DRAM bytes of one launch of each kernel"
  timed ncu --clock-control none --csv --page raw --print-units base \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum \
    $BUILD/benchmarks/relax_profile_kernels "$OUT/profile_manifest.json" > "$OUT/profile_ncu.csv" 2> "$LOGS/profile.log" ||
    status=1
  python3 benchmarks/profile_report.py "$OUT/profile_ncu.csv" "$OUT/profile_manifest.json" \
    --summary "$OUT/summary.json" --markdown "$OUT/profile.md" || status=1
}

stage_study() {
  for study in ${STUDIES:-relax_study_lean_stream}; do
    step "study $study"
    timed $BUILD/benchmarks/"$study" > "$OUT/$study.txt" 2>&1 || status=1
    tail -5 "$OUT/$study.txt"
    if [[ -n "${STUDY_NCU:-}" ]]; then
      step "ncu --set full: $study --one"
      timed ncu --set full -k "regex:$STUDY_NCU" $BUILD/benchmarks/"$study" --one > "$OUT/$study-ncu.txt" 2>&1 ||
        status=1
      tail -3 "$OUT/$study-ncu.txt"
    fi
  done
}

nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv \
  > "$LOGS/nvidia-smi.txt" 2>&1
for stage in $stages; do
  case $stage in
    build | test | device | large | sanitize | bench | cg | multi | experiment | profile | study) "stage_$stage" ;;
    *) echo "run_h200.sh: unknown stage '$stage'"; exit 2 ;;
  esac
done
step done
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$LOGS"
echo "run_h200.sh: status $status"
exit $status
