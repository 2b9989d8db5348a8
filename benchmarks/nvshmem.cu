// NVSHMEM with one process per GPU (issue 15): µs per sweep of the CPU-free solve
// MultiSolver<S, DeviceLoop<Sync>, Nvshmem> with k = 1 and 2 sub-domains on this process's PE
// (halos stored through NVSHMEM's mapping, and, rows `nvshmem_put`, every halo a put-with-signal:
// on one PE, to itself), at 256² and 16384² (2D) and 512³ (3D), and the single-domain
// DeviceLoop<Sync> Solver of this relocatable build (rows `one_domain_rdc`; relax_bench_multi's
// `one_domain` rows are the same solve built without relocatable device code). The figures
// `multi_nvshmem_k*_overhead_pct_*` come from these rows (benchmarks/report.py). Run it alone
// (one PE) or under `mpirun -np P` (the rows of PE 0 are reported); large boxes need a symmetric
// heap that holds their grids (NVSHMEM_SYMMETRIC_SIZE, e.g. 16G).
//
// CG on k parts a PE (issue 16), float64, ms per iteration at 100 iterations:
//   multi_cg_iter/<variant>/<comm>/k:<k>/<operator>
// variant: standard | pipelined (host-controlled) | cpufree | cpufree_pipelined; comm: nvshmem
// (MultiCG<..., Nvshmem>: k parts on each PE) or one_process (HostCopy, and PeerStore for the
// CPU-free variants, in this same build: k parts of one process, rows on one PE only); operator:
// poisson2d/N:4096, csr_like/ecology2 (the 10^6-row stand-in of relax_bench_multi_cg).
#include "multi_cg.hpp"
#include "multi_sweep.hpp"

#include <relax/core/device.hpp>
#include <relax/multi/cg_nvshmem.cuh>
#include <relax/multi/nvshmem.cuh>
#include <relax/stencil/poisson.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace relax::bench {
// Variant bit 0: every halo a put-with-signal, even where NVSHMEM maps the neighbour's memory
// here; bit 1: boundary blocks apart (`BlockRoles::specialised`).
template <>
struct BenchComm<relax::Nvshmem> {
  static relax::Nvshmem make(int variant) {
    relax::Nvshmem comm;
    comm.store_when_mapped = (variant & 1) == 0;
    if (variant & 2) comm.blocks = relax::BlockRoles::specialised;
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
  add("nvshmem_put_roles/k:2", 2, 3);  // puts from boundary blocks apart
}

// range(0): 0 poisson2d/N:4096, 1 the ecology2 stand-in; range(1): parts a PE; range(2): 1 over
// Nvshmem, 0 in one process (HostCopy or PeerStore).
template <class Variant, class Comm>
void nvshmem_cg(benchmark::State& state) {
  const relax::NvshmemRuntime& runtime = *relax::NvshmemRuntime::active();
  const bool shmem = state.range(2) != 0;
  const int pes = shmem ? runtime.pes() : 1, pe = shmem ? runtime.pe() : 0, device = runtime.device();
  const int parts = static_cast<int>(state.range(1)) * pes;
  const relax::CgOptions options = relax::bench::options_for(true);
  auto run = [&](auto split) {
    relax::MultiCG<typename decltype(split)::part_type, Variant, Comm> cg(std::move(split), options);
    relax::bench::time_split_solves(state, cg, true);
  };
  if (state.range(0) == 0)
    run(relax::split_stencil_of_rank(relax::Poisson5<double>{}, relax::Extents(4096, 4096), parts, pes, pe, device));
  else
    run(relax::split_csr_of_rank(relax::bench::cached_like(0), parts, pes, pe, device));
}

template <class Variant, class OneProcess>
void register_cg_rows(const char* variant) {
  const bool alone = relax::NvshmemRuntime::active()->pes() == 1;  // registered once NVSHMEM runs
  for (int op : {0, 1})
    for (int k : {1, 2})
      for (const bool shmem : {true, false}) {
        if (!shmem && !alone) continue;  // one process: the same split only where there is one PE
        const std::string name = std::string("multi_cg_iter/") + variant + (shmem ? "/nvshmem" : "/one_process") +
                                 "/k:" + std::to_string(k) + (op == 0 ? "/poisson2d/N:4096" : "/csr_like/ecology2");
        benchmark::RegisterBenchmark(name.c_str(),
                                     shmem ? nvshmem_cg<Variant, relax::Nvshmem> : nvshmem_cg<Variant, OneProcess>)
            ->Args({op, k, shmem ? 1 : 0})
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(5);  // the same count on every PE: each solve is collective
      }
}

void register_all() {
  register_rows<relax::Stencil5<float>>("DeviceLoop_Sync", 256, 2048);
  register_rows<relax::Stencil5<float>>("DeviceLoop_Sync", 16384, 64);
  register_rows<relax::Stencil7<float>>("DeviceLoop_Sync", 512, 64);
  register_cg_rows<relax::Unfused, relax::HostCopy>("standard");
  register_cg_rows<relax::Pipelined, relax::HostCopy>("pipelined");
  register_cg_rows<relax::Persistent, relax::PeerStore>("cpufree");
  register_cg_rows<relax::PersistentPipelined, relax::PeerStore>("cpufree_pipelined");
}

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
  register_all();  // after NVSHMEM starts: the one-process CG rows only where there is one PE
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
