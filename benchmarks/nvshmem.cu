// NVSHMEM with one process per GPU (issue 15): µs per sweep of the CPU-free solve
// MultiSolver<S, DeviceLoop<Sync>, Nvshmem> with k = 1 and 2 sub-domains on this process's PE
// (halos stored through NVSHMEM's mapping, and, rows `nvshmem_put`, every halo a put-with-signal:
// on one PE, to itself), at 256² and 16384² (2D) and 512³ (3D), and the single-domain
// DeviceLoop<Sync> Solver of this relocatable build (rows `one_domain_rdc`; relax_bench_multi's
// `one_domain` rows are the same solve built without relocatable device code). The figures
// `multi_nvshmem_k*_overhead_pct_*` come from these rows (benchmarks/report.py). Run it alone
// (one PE) or under `mpirun -np P` (the rows of PE 0 are reported); large boxes need a symmetric
// heap that holds their grids (NVSHMEM_SYMMETRIC_SIZE, e.g. 16G).
#include "multi_sweep.hpp"

#include <relax/core/device.hpp>
#include <relax/multi/nvshmem.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace relax::bench {
// Variant 1: every halo a put-with-signal, even where NVSHMEM maps the neighbour's memory here.
template <>
struct BenchComm<relax::Nvshmem> {
  static relax::Nvshmem make(bool put) {
    relax::Nvshmem comm;
    comm.store_when_mapped = !put;
    return comm;
  }
};
}  // namespace relax::bench

namespace {

template <class S>
void register_rows(const std::string& name, std::int64_t n, std::int64_t sweeps) {
  using CpuFree = relax::DeviceLoop<relax::Sync>;
  auto add = [&](const std::string& who, int parts, int put) {
    benchmark::RegisterBenchmark(("multi_sweep/" + who + "/" + name + "/N:" + std::to_string(n)).c_str(),
                                 relax::bench::multi_sweep<S, CpuFree, relax::Nvshmem>)
        ->Args({n, parts, sweeps, 0, put, 1})->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(3)
        ->Iterations(10)  // the same count on every PE: each solve is collective
        ->ReportAggregatesOnly(true);
  };
  add("one_domain_rdc", 0, 0);  // this build's; `relax_bench_multi` has the other's
  for (int k : {1, 2}) {
    add("nvshmem/k:" + std::to_string(k), k, 0);      // stores where mapped (on one GPU: everywhere)
    add("nvshmem_put/k:" + std::to_string(k), k, 1);  // puts with a signal
  }
}

const int registered = [] {
  register_rows<relax::Stencil5<float>>("DeviceLoop_Sync", 256, 2048);
  register_rows<relax::Stencil5<float>>("DeviceLoop_Sync", 16384, 64);
  register_rows<relax::Stencil7<float>>("DeviceLoop_Sync", 512, 64);
  return 0;
}();

// What the PEs other than 0 report: nothing.
class Quiet : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  const int gpus = relax::device_count();
  if (gpus == 0) {
    std::printf("no CUDA device is present\n");
    return 1;
  }
  const relax::NvshmemRuntime runtime(relax::NvshmemRuntime::FromEnvironment{});
  // PE 0 reports (to the console and --benchmark_out); the other PEs run the same solves, each
  // collective, and report nothing, so they leave --benchmark_out alone.
  std::vector<char*> args(argv, argv + argc);
  if (runtime.pe() != 0)
    args.erase(std::remove_if(args.begin() + 1, args.end(),
                              [](const char* a) { return std::string(a).rfind("--benchmark_out", 0) == 0; }),
               args.end());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  if (runtime.pe() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    Quiet display;
    benchmark::RunSpecifiedBenchmarks(&display);
  }
  benchmark::Shutdown();
  return 0;
}
