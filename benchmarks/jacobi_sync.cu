// The synchronous Jacobi sweep: throughput (G point-updates/s) and effective bandwidth (12 B per
// point in float32: read u, read b, write u') for N from 512 (L2-resident) to 16384 (HBM), for
// several thread-block shapes; and the ten-step diffusion solve: time to solution and the share
// of it spent in convergence checks.
#include "bench_support.hpp"

#include <relax/reference/jacobi.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#include <chrono>
#include <cstring>
#include <string>

namespace {

using relax::bench::counter;
using relax::bench::time_ms;

// Deterministic pseudo-random values in [0, 100) for every point, ring included.
template <class T>
__global__ void fill_hash_kernel(relax::grid_view<T> g, std::uint32_t seed) {
  const std::int64_t e = g.extent(0);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < e * e;
       k += stride) {
    std::uint32_t h = static_cast<std::uint32_t>(k) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    g(k / e, k % e) = static_cast<T>(h % 100000u) * T(1e-3);
  }
}

template <class T>
relax::DeviceGrid<T> hashed_grid(std::int64_t n, std::uint32_t seed, cudaStream_t stream) {
  relax::DeviceGrid<T> g(n, stream);
  fill_hash_kernel<<<1024, 256, 0, stream>>>(g.view(), seed);
  RELAX_CUDA_CHECK_LAUNCH();
  return g;
}

// Row i of a device grid (ring columns included), on the host.
template <class T>
std::vector<T> row(const relax::DeviceGrid<T>& g, std::int64_t i) {
  std::vector<T> out(static_cast<std::size_t>(g.n() + 2));
  RELAX_CUDA_CHECK(cudaMemcpy(out.data(), g.data() + g.layout().offset(i, 0), out.size() * sizeof(T),
                              cudaMemcpyDeviceToHost));
  return out;
}

// Checks one sweep `in -> out` on rows 1, n/2 and n against the stencil evaluated on the host.
template <class S, class T>
bool sweep_is_exact(const S& s, const relax::DeviceGrid<T>& in, const relax::DeviceGrid<T>& out,
                    const relax::DeviceGrid<T>& b) {
  const std::int64_t n = in.n();
  for (std::int64_t i : {std::int64_t(1), (n + 1) / 2, n}) {
    const auto up = row(in, i - 1), mid = row(in, i), down = row(in, i + 1), rhs = row(b, i),
               got = row(out, i);
    for (std::int64_t j = 1; j <= n; ++j) {
      const T want = s.update(rhs[j], up[j], down[j], mid[j + 1], mid[j - 1]);
      if (std::memcmp(&want, &got[j], sizeof(T)) != 0) return false;
    }
  }
  return true;
}

template <class Strategy>
void sweep_throughput(benchmark::State& state) {
  using T = float;
  const std::int64_t n = state.range(0);
  const relax::Stencil5<T> s(10.0);
  relax::Stream stream;
  auto u = hashed_grid<T>(n, 1, stream), b = hashed_grid<T>(n, 2, stream);
  relax::DeviceGrid<T> scratch(n, stream);
  relax::copy(u, scratch, stream);
  relax::Sweeper<Strategy>::run(s, u, scratch, b, 1, stream);  // u = sweep(old u), old u in scratch
  RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!sweep_is_exact(s, scratch, u, b)) {
    state.SkipWithError("sweep differs from the host evaluation of the stencil");
    return;
  }
  // Enough sweeps per timed batch to keep a batch above ~1 ms even when the grid sits in L2, and
  // a multiple of 8 so tiled strategies of depth 1, 2, 4, 8 run whole launches.
  const std::int64_t batch = std::max<std::int64_t>(8, (std::int64_t(1) << 28) / (n * n) / 8 * 8);
  double total_ms = 0;
  for (auto _ : state) {
    const double ms = time_ms(stream, [&] { relax::Sweeper<Strategy>::run(s, u, scratch, b, batch, stream); });
    state.SetIterationTime(ms * 1e-3);
    total_ms += ms;
  }
  const double sweeps = static_cast<double>(batch) * state.iterations();
  const double points = static_cast<double>(n) * n;
  counter(state, "gups", sweeps * points / (total_ms * 1e6));
  counter(state, "GBps", sweeps * points * 3 * sizeof(T) / (total_ms * 1e6));
  counter(state, "us_per_sweep", total_ms * 1e3 / sweeps);
}

template <class Strategy>
void diffusion_solve(benchmark::State& state) {
  using T = float;
  relax::DiffusionParams p;
  p.n = state.range(0);
  p.r = static_cast<double>(state.range(1));
  p.source = relax::Source::gaussian;
  relax::Solver<relax::Stencil5<T>, Strategy, relax::Fixed> solver(p.n, relax::Stencil5<T>(p.r),
                                                                  relax::Fixed(8));
  relax::DiffusionState<T> problem(p, solver.stream());
  relax::DeviceGrid<T> u0(p.n, solver.stream());
  relax::copy(problem.u(), u0, solver.stream());
  relax::RunReport run;
  for (auto _ : state) {
    relax::copy(u0, problem.u(), solver.stream());
    run = relax::run_diffusion(solver, problem);
    if (!run.converged()) {
      state.SkipWithError("a step did not converge");
      return;
    }
    state.SetIterationTime(run.time_ms * 1e-3);
  }
  // The same sweeps without checks, timed on the final state: what the checks add is the rest.
  relax::DeviceGrid<T> scratch(p.n, solver.stream());
  relax::copy(problem.u(), scratch, solver.stream());
  const std::int64_t probe = 48;  // whole launches for D = 1, 2, 4, 8
  const double sweep_ms = time_ms(solver.stream(), [&] {
    relax::Sweeper<Strategy>::run(solver.stencil(), problem.u(), scratch, problem.b(), probe,
                                  solver.stream());
  }) / probe;
  counter(state, "sweeps", static_cast<double>(run.sweeps()));
  counter(state, "ms_per_step", run.time_ms / static_cast<double>(run.steps.size()));
  counter(state, "gups", run.gups());
  counter(state, "check_share", 1.0 - run.sweeps() * sweep_ms / run.time_ms);
}

// The CPU baseline: one reference sweep, serial and with every OpenMP thread.
void reference_sweep(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const auto exec = relax::reference::Exec{static_cast<int>(state.range(1))};
  const relax::Stencil5<float> s(10.0);
  relax::HostGrid<float> u(n), out(n), b(n);
  for (std::int64_t i = 0; i <= n + 1; ++i)
    for (std::int64_t j = 0; j <= n + 1; ++j) u(i, j) = b(i, j) = float((i * 31 + j * 17) % 1000);
  double total_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    relax::reference::sweep(s, u, out, b, exec);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(sec);
    total_s += sec;
    std::swap(u, out);
  }
  counter(state, "threads", exec.resolved_threads());
  counter(state, "gups", static_cast<double>(n) * n * state.iterations() / (total_s * 1e9));
}

template <class Strategy>
void register_sweep(const char* family, const char* shape,
                    std::initializer_list<std::int64_t> sizes = {512, 1024, 2048, 4096, 8192, 16384}) {
  for (std::int64_t n : sizes)
    benchmark::RegisterBenchmark(
        (std::string(family) + "/" + shape + "/N:" + std::to_string(n)).c_str(), sweep_throughput<Strategy>)
        ->Arg(n)->UseManualTime()->Unit(benchmark::kMicrosecond)->Repetitions(5)
        ->ReportAggregatesOnly(true);
}

template <class Strategy>
void register_solve(const char* name, std::int64_t n, std::int64_t r) {
  benchmark::RegisterBenchmark((std::string("diffusion_solve/") + name + "/r:" + std::to_string(r) +
                                "/N:" + std::to_string(n)).c_str(), diffusion_solve<Strategy>)
      ->Args({n, r})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)
      ->Repetitions(3)->ReportAggregatesOnly(true);
}

const int registered = [] {
  register_sweep<relax::Sync>("sync_sweep", "Sync");
  register_sweep<relax::SyncTile<32, 8, 1>>("sync_sweep", "32x8x1");
  register_sweep<relax::SyncTile<32, 8, 2>>("sync_sweep", "32x8x2");
  register_sweep<relax::SyncTile<32, 8, 4>>("sync_sweep", "32x8x4");
  // First, textbook versions of the tiled strategies (one point per thread, shared memory).
  register_sweep<relax::BlockAsync<1>>("tiled_sweep", "BlockAsync1", {4096, 16384});
  register_sweep<relax::BlockAsync<2>>("tiled_sweep", "BlockAsync2", {4096, 16384});
  register_sweep<relax::BlockAsync<4>>("tiled_sweep", "BlockAsync4", {4096, 16384});
  register_sweep<relax::BlockAsync<8>>("tiled_sweep", "BlockAsync8", {4096, 16384});
  register_sweep<relax::TemporalBlock<2, relax::Tile<32, 8>>>("tiled_sweep", "TemporalBlock2", {4096, 16384});
  register_sweep<relax::TemporalBlock<4, relax::Tile<32, 8>>>("tiled_sweep", "TemporalBlock4", {4096, 16384});
  register_sweep<relax::TemporalBlock<8, relax::Tile<32, 8>>>("tiled_sweep", "TemporalBlock8", {4096, 16384});
  register_sweep<relax::TemporalBlock<4, relax::Tile<64, 16>>>("tiled_sweep", "TemporalBlock4_64x16",
                                                               {4096, 16384});
  register_sweep<relax::TemporalBlock<8, relax::Tile<64, 16>>>("tiled_sweep", "TemporalBlock8_64x16",
                                                               {4096, 16384});
  // The tile shapes the defaults are chosen from (issue 3: at least 32x8, 32x16, 64x8).
  register_sweep<relax::BlockAsync<8, relax::Tile<32, 16>>>("tiled_sweep", "BlockAsync8_32x16", {4096, 16384});
  register_sweep<relax::BlockAsync<8, relax::Tile<64, 8>>>("tiled_sweep", "BlockAsync8_64x8", {4096, 16384});
  register_sweep<relax::BlockAsync<8, relax::Tile<64, 16>>>("tiled_sweep", "BlockAsync8_64x16", {4096, 16384});
  register_sweep<relax::TemporalBlock<4, relax::Tile<32, 16>>>("tiled_sweep", "TemporalBlock4_32x16",
                                                               {4096, 16384});
  register_sweep<relax::TemporalBlock<4, relax::Tile<64, 8>>>("tiled_sweep", "TemporalBlock4_64x8",
                                                              {4096, 16384});
  // Exact temporal blocking streaming along y through registers.
  register_sweep<relax::TemporalBlock<2, relax::ColumnStream>>("tiled_sweep", "TemporalBlock2_stream",
                                                               {4096, 8192, 16384});
  register_sweep<relax::TemporalBlock<4, relax::ColumnStream>>("tiled_sweep", "TemporalBlock4_stream",
                                                               {4096, 8192, 16384});
  register_sweep<relax::TemporalBlock<8, relax::ColumnStream>>("tiled_sweep", "TemporalBlock8_stream",
                                                               {4096, 8192, 16384});
  for (std::int64_t n : {512, 1024, 4096, 16384})
    for (std::int64_t r : {1, 10, 100}) {
      if (n == 16384 && r == 100) continue;  // 12 s a run: left out to fit the device-time budget
      register_solve<relax::Sync>("Sync", n, r);
    }
  // Time to solution of the tiled strategies at r = 10 (the full matrix is issue 3's runner).
  for (std::int64_t n : {1024, 4096, 16384}) {
    register_solve<relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", n, 10);
    register_solve<relax::BlockAsync<8>>("BlockAsync8", n, 10);
  }
  for (std::int64_t n : {1024, 4096})
    for (std::int64_t threads : {1, 0})
      benchmark::RegisterBenchmark(("reference_sweep/threads:" + std::string(threads ? "1" : "all") +
                                    "/N:" + std::to_string(n)).c_str(), reference_sweep)
          ->Args({n, threads})->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(3)
          ->ReportAggregatesOnly(true);
  return 0;
}();

}  // namespace
