#pragma once
// The multi-sub-domain benchmarks' row (benchmarks/multi.cu, benchmarks/nvshmem.cu): µs per sweep
// of a fixed-sweep solve (checks every 8, tol 1e-30) of the box n² (n³ in 3D) with b = 1, by the
// single-domain Solver or a MultiSolver of the Comm policy. Args: n, sub-domains (0: the
// single-domain Solver), sweeps, spread (slab s on GPU s), variant (BenchComm: HostCopy's overlap,
// PeerStore's kernel per slab), stretch (the slowest extent n × stretch: weak scaling).
#include "bench_support.hpp"

#include <relax/core/cuda_check.hpp>
#include <relax/multi/distributed.cuh>
#if RELAX_BENCH_NCCL
#include <relax/multi/nccl.cuh>
#endif
#include <relax/solver/solver.cuh>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace relax::bench {

// The Comm settings of a row's variant (Arg 4): bit 0, HostCopy's overlap, PeerStore's one kernel
// per slab; bit 1, PeerStore's boundary blocks apart (`BlockRoles::specialised`); a benchmark may
// specialise it for its Comm policy.
template <class Comm>
struct BenchComm {
  static Comm make(int) { return Comm{}; }
};
template <>
struct BenchComm<relax::HostCopy> {
  static relax::HostCopy make(int variant) {
    relax::HostCopy comm;
    comm.overlap = (variant & 1) != 0;
    return comm;
  }
};
template <>
struct BenchComm<relax::PeerStore> {
  static relax::PeerStore make(int variant) {
    relax::PeerStore comm;
    comm.launch_per_subdomain = (variant & 1) != 0;
    if (variant & 2) comm.blocks = relax::BlockRoles::specialised;
    return comm;
  }
};

#if RELAX_BENCH_NCCL
template <>
struct BenchComm<relax::Nccl> {  // the device API's one kernel per slab
  static relax::Nccl make(int variant) {
    relax::Nccl comm;
    comm.launch_per_subdomain = (variant & 1) != 0;
    return comm;
  }
};
#endif

// Fixed-sweep solve: 0 sub-domains means the single-domain Solver; `spread` puts slab s on GPU s
// (otherwise every slab is on the current GPU); the variant picks the Comm settings (BenchComm).
template <class S, class Strategy, class Comm>
void multi_sweep(benchmark::State& state) {
  using T = typename S::value_type;
  const std::int64_t n = state.range(0);
  const int parts = static_cast<int>(state.range(1));
  const std::int64_t sweeps = state.range(2);
  const bool spread = state.range(3) != 0;
  const int variant = static_cast<int>(state.range(4));
  const std::int64_t stretch = state.range(5);  // the slowest extent is n times this (weak scaling)
  relax::SolveOptions options;
  options.tol = 1e-30;
  options.max_sweeps = sweeps;
  relax::Extents e = relax::Extents::cube(n, S::rank);
  (S::rank == 3 ? e.nz : e.ny) *= stretch;
  relax::HostGrid<T> host_b(e);
  for (T& x : host_b.storage()) x = T(1);
  relax::SolveReport report;
  if (parts == 0) {
    relax::Solver<S, Strategy, relax::Fixed> solver(e, S(10.0), relax::Fixed(8), options);
    const relax::DeviceGrid<T> b = relax::to_device(host_b, solver.stream());
    relax::DeviceGrid<T> u0(e, solver.stream()), u(e, solver.stream());
    for (auto _ : state) {
      relax::copy(u0, u, solver.stream());
      report = solver.solve(u, b);
      state.SetIterationTime(report.time_ms * 1e-3);
    }
  } else {
    int home = 0;  // the current device (a PE's, with one process per GPU)
    RELAX_CUDA_CHECK(cudaGetDevice(&home));
    std::vector<int> devices(static_cast<std::size_t>(parts), home);
    if (spread)
      for (int k = 0; k < parts; ++k) devices[static_cast<std::size_t>(k)] = k;
    using Split = relax::MultiSolver<S, Strategy, Comm>;
    auto solver = [&] {
      if constexpr (std::is_constructible_v<Split, relax::Extents, std::vector<int>, S, relax::Fixed, relax::SolveOptions,
                                            Comm>)
        return Split(e, devices, S(10.0), relax::Fixed(8), options, BenchComm<Comm>::make(variant));
      else
        return Split(e, devices, S(10.0), relax::Fixed(8), options);
    }();
    auto u = solver.make_grid(), b = solver.make_grid();
    const auto zero = solver.make_grid();
    b.scatter(host_b);
    for (auto _ : state) {
      relax::copy(zero, u);
      report = solver.solve(u, b);
      state.SetIterationTime(report.time_ms * 1e-3);
    }
  }
  counter(state, "us_per_sweep", report.time_ms * 1e3 / static_cast<double>(report.sweeps));
  counter(state, "sweeps", static_cast<double>(report.sweeps));
}

}  // namespace relax::bench
