// k sub-domains against one (issue 15): µs per sweep of a fixed-sweep solve (checks every 8,
// tol 1e-30) with relax::MultiSolver on k slabs of the same GPU (k = 1 is one slab, the
// decomposition's own path) and with the single-domain Solver of the same strategy, at 256² and
// 16384² (2D) and 512³ (3D): host-controlled (HostCopy with Sync, with and without the exchange
// overlapped with interior compute, and with the column stream) and
// CPU-free (PeerStore with DeviceLoop<Sync> and with DeviceLoop<TemporalBlock<D, ColumnStream>>,
// one kernel for both slabs, and one kernel per slab);
// with NCCL (built where NCCL is found), one rank per GPU: its one-rank cost on one GPU, the host
// API's (HostCopy's rounds) and the device API's (PeerStore's kernels over NCCL's windows); and
// strong and weak scaling over the GPUs there are (rows multi_scaling/*: on one GPU, g = 1 only).
// The figures `multi_virtual2_*_host` and `multi_virtual2_*_cpufree` come from these rows
// (benchmarks/report.py).
#include "multi_sweep.hpp"

#include <relax/multi/host_copy.cuh>
#include <relax/multi/peer_store.cuh>
#if RELAX_BENCH_NCCL
#include <relax/multi/nccl.cuh>
#endif
#if RELAX_BENCH_NCCL_DEVICE
#include <relax/multi/nccl_device.cuh>
#endif
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace {

using relax::bench::multi_sweep;

template <class Strategy>
constexpr bool cpu_free = false;
template <class Inner>
constexpr bool cpu_free<relax::DeviceLoop<Inner>> = true;

// The rows' name of a Comm policy (NCCL's CPU-free solver: its device API, "nccl_device").
template <class Comm, class Strategy = relax::Sync>
std::string comm_name() {
  if constexpr (std::is_same_v<Comm, relax::PeerStore>) return "peer_store";
  else if constexpr (std::is_same_v<Comm, relax::HostCopy>) return "host_copy";
  else return cpu_free<Strategy> ? "nccl_device" : "nccl";
}

// One domain; k = 1 and 2 slabs on GPU 0 (with PeerStore, also 2 kernels for k = 2; with NCCL's
// host API, which takes a GPU per slab, k = 1 only; NCCL's device API holds k slabs on its one
// rank, as PeerStore); and, with several GPUs, one slab on each.
template <class S, class Strategy, class Comm = relax::HostCopy>
void register_sweeps(const std::string& name, std::int64_t n, std::int64_t sweeps) {
  constexpr bool nccl_device = cpu_free<Strategy> && !std::is_same_v<Comm, relax::PeerStore>;
  constexpr bool peer = std::is_same_v<Comm, relax::PeerStore> || nccl_device;
  constexpr bool one_per_gpu = !peer && !std::is_same_v<Comm, relax::HostCopy>;
  const std::string comm = comm_name<Comm, Strategy>();
  auto add = [&](const std::string& who, int parts, int spread, int apart = 0, int stretch = 1) {
    benchmark::RegisterBenchmark(("multi_sweep/" + who + "/" + name + "/N:" + std::to_string(n)).c_str(),
                                 multi_sweep<S, Strategy, Comm>)
        ->Args({n, parts, sweeps, spread, apart, stretch})->UseManualTime()->Unit(benchmark::kMillisecond)
        ->Repetitions(3)->ReportAggregatesOnly(true);
  };
  if (!one_per_gpu && !nccl_device) add("one_domain", 0, 0);  // NCCL's rows: read against HostCopy's or PeerStore's
  add(comm + "/k:1", 1, 0);
  if (!one_per_gpu) add(comm + "/k:2", 2, 0);
  if (peer) add(comm + "_apart/k:2", 2, 0, 1);
  if constexpr (std::is_same_v<Comm, relax::PeerStore>) {  // boundary blocks apart (thread-block specialisation)
    add(comm + "_roles/k:2", 2, 0, 2);
    add(comm + "_apart_roles/k:2", 2, 0, 3);
  }
  if constexpr (std::is_same_v<Comm, relax::HostCopy> && relax::detail::is_sync_tile<Strategy>::value)
    add(comm + "_overlap/k:2", 2, 0, 1);  // the exchange overlapped with interior compute
  if (const int gpus = relax::device_count(); gpus > 1 && !nccl_device)  // one process per GPU: not from here
    add(comm + "/gpus:" + std::to_string(gpus), gpus, 1);
}

// Scaling over the GPUs there are, g = 1, 2, 4, ... up to all of them, one slab on each: strong
// (the box of n² or n³ split g ways) and weak (the slowest extent g × n: the same slab per GPU).
template <class S, class Strategy, class Comm>
void register_scaling(const std::string& name, std::int64_t n, std::int64_t sweeps) {
  const int gpus = relax::device_count();
  std::vector<int> counts;
  for (int g = 1; g < gpus; g *= 2) counts.push_back(g);
  if (gpus > 0) counts.push_back(gpus);
  for (const char* kind : {"strong", "weak"})
    for (int g : counts) {
      const bool weak = std::string(kind) == "weak";
      if (weak && g == 1) continue;  // the strong row of one GPU is weak scaling's base too
      benchmark::RegisterBenchmark(("multi_scaling/" + std::string(kind) + "/" + comm_name<Comm>() + "/gpus:" +
                                    std::to_string(g) + "/" + name + "/N:" + std::to_string(n))
                                       .c_str(),
                                   multi_sweep<S, Strategy, Comm>)
          ->Args({n, g, sweeps, 1, 0, weak ? g : 1})->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
}

const int registered = [] {
  using S5 = relax::Stencil5<float>;
  using S7 = relax::Stencil7<float>;
  register_sweeps<S5, relax::Sync>("Sync", 256, 2048);
  register_sweeps<S5, relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", 256, 2048);
  register_sweeps<S5, relax::Sync>("Sync", 16384, 64);
  register_sweeps<S5, relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", 16384, 256);
  register_sweeps<S7, relax::Sync>("Sync", 512, 64);
  register_sweeps<S7, relax::TemporalBlock<4, relax::ColumnStream>>("TemporalBlock4_stream", 512, 128);
  using CpuFree = relax::DeviceLoop<relax::Sync>;
  register_sweeps<S5, CpuFree, relax::PeerStore>("DeviceLoop_Sync", 256, 2048);
  register_sweeps<S5, CpuFree, relax::PeerStore>("DeviceLoop_Sync", 16384, 64);
  register_sweeps<S7, CpuFree, relax::PeerStore>("DeviceLoop_Sync", 512, 64);
  // CPU-free with exact temporal blocking: a D-row halo after every pass of D sweeps.
  using CpuFreeStream8 = relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>;
  using CpuFreeStream4 = relax::DeviceLoop<relax::TemporalBlock<4, relax::ColumnStream>>;
  register_sweeps<S5, CpuFreeStream8, relax::PeerStore>("DeviceLoop_Stream8", 256, 2048);
  register_sweeps<S5, CpuFreeStream8, relax::PeerStore>("DeviceLoop_Stream8", 16384, 256);
  register_sweeps<S7, CpuFreeStream4, relax::PeerStore>("DeviceLoop_Stream4", 512, 128);
  // Scaling (issue 15's benchmark; on one GPU, only its g = 1 rows): CPU-free and host-controlled.
  register_scaling<S5, CpuFree, relax::PeerStore>("DeviceLoop_Sync", 16384, 64);
  register_scaling<S5, relax::TemporalBlock<8, relax::ColumnStream>, relax::HostCopy>("TemporalBlock8_stream", 16384, 256);
  register_scaling<S7, CpuFree, relax::PeerStore>("DeviceLoop_Sync", 512, 64);
  register_scaling<S5, CpuFreeStream8, relax::PeerStore>("DeviceLoop_Stream8", 16384, 256);
#if RELAX_BENCH_NCCL_DEVICE
  // NCCL's device API on one rank: every link through its windows and LSA pointers.
  register_sweeps<S5, CpuFree, relax::Nccl>("DeviceLoop_Sync", 256, 2048);
  register_sweeps<S5, CpuFree, relax::Nccl>("DeviceLoop_Sync", 16384, 64);
  register_sweeps<S7, CpuFree, relax::Nccl>("DeviceLoop_Sync", 512, 64);
  register_sweeps<S5, CpuFreeStream8, relax::Nccl>("DeviceLoop_Stream8", 16384, 256);
#endif
#if RELAX_BENCH_NCCL
  register_sweeps<S5, relax::TemporalBlock<8, relax::ColumnStream>, relax::Nccl>("TemporalBlock8_stream", 256, 2048);
  register_sweeps<S5, relax::TemporalBlock<8, relax::ColumnStream>, relax::Nccl>("TemporalBlock8_stream", 16384, 256);
#endif
  return 0;
}();

}  // namespace
