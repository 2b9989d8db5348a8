#!/usr/bin/env bash
# Session check script (not committed): issue 16's CG on several parts, the CPU-free variant's first run.
set -uo pipefail
B=build/h200
R=$OUT/r; mkdir -p $R
budget=560
t() { local left=$((budget - SECONDS)); local lim=$1; shift; ((left < lim)) && lim=$left; ((lim <= 5)) && { echo "skip (time): $*" >> $R/main.txt; return 1; }; timeout -k 3 $lim "$@"; }
pack() { sed -i "s#$PWD/##g" $R/*.log $R/main.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; }
trap pack EXIT
echo "== [$SECONDS] configure" | tee -a $R/main.txt
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DRELAX_CUDA_ARCHITECTURES=90 > $R/configure.log 2>&1 || { tail -30 $R/configure.log; exit 1; }
echo "== [$SECONDS] build" | tee -a $R/main.txt
t 240 cmake --build $B -j 16 --target relax_device_cg_tests relax_bench_multi_cg > $R/build.log 2>&1 || { tail -40 $R/build.log; tail -40 $R/build.log >> $R/main.txt; exit 1; }
echo "== [$SECONDS] [multi_cg] tests" | tee -a $R/main.txt
t 120 $B/tests/relax_device_cg_tests "[multi_cg]" > $R/multi_cg.log 2>&1; echo "rc=$?" >> $R/main.txt; tail -60 $R/multi_cg.log >> $R/main.txt
for tool in memcheck racecheck synccheck initcheck; do
  echo "== [$SECONDS] $tool [multi_cg][sanitize]" | tee -a $R/main.txt
  t 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/relax_device_cg_tests "[multi_cg][sanitize]" > $R/san-$tool-multi_cg.log 2>&1; echo "rc=$?" >> $R/main.txt
  tail -3 $R/san-$tool-multi_cg.log >> $R/main.txt
done
echo "== [$SECONDS] all CG tests" | tee -a $R/main.txt
t 60 $B/tests/relax_device_cg_tests "~[multi_cg]" > $R/cg_all.log 2>&1; echo "rc=$?" >> $R/main.txt; tail -4 $R/cg_all.log >> $R/main.txt
echo "== [$SECONDS] bench multi_cg_iter" | tee -a $R/main.txt
t 170 $B/benchmarks/relax_bench_multi_cg --benchmark_filter='multi_cg_iter/' --benchmark_out=$R/bench_multi_cg_iter.json --benchmark_out_format=json > $R/bench_iter.log 2>&1; echo "rc=$?" >> $R/main.txt
grep "multi_cg" $R/bench_iter.log | sed 's/  */ /g' >> $R/main.txt
echo "== [$SECONDS] bench multi_cg_solve" | tee -a $R/main.txt
t 200 $B/benchmarks/relax_bench_multi_cg --benchmark_filter='multi_cg_solve/.*(poisson2d|ecology2|G3_circuit|poisson3d)' --benchmark_out=$R/bench_multi_cg_solve.json --benchmark_out_format=json > $R/bench_solve.log 2>&1; echo "rc=$?" >> $R/main.txt
grep "multi_cg" $R/bench_solve.log | sed 's/  */ /g' >> $R/main.txt
echo "== [$SECONDS] done" >> $R/main.txt
