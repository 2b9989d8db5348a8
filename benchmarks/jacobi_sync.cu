// The synchronous Jacobi sweep: throughput (G point-updates/s) and effective bandwidth (12 B per
// point in float32: read u, read b, write u') for N from 512 (L2-resident) to 16384 (HBM), for
// several thread-block shapes; and the ten-step diffusion solve: time to solution and the share
// of it spent in convergence checks.
#include "bench_support.hpp"

#include <relax/cpu/jacobi.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#include <cooperative_groups.h>

#include <chrono>
#include <cstring>
#include <string>

namespace {

using relax::bench::counter;
using relax::bench::time_ms;

// Deterministic pseudo-random values in [0, 100) for every element of the allocation.
template <class T>
__global__ void fill_hash_kernel(T* g, std::int64_t size, std::uint32_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < size; k += stride) {
    std::uint32_t h = static_cast<std::uint32_t>(k) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    g[k] = static_cast<T>(h % 100000u) * T(1e-3);
  }
}

template <class T>
relax::DeviceGrid<T> hashed_grid(const relax::Extents& e, std::uint32_t seed, cudaStream_t stream) {
  relax::DeviceGrid<T> g(e, stream);
  fill_hash_kernel<<<1024, 256, 0, stream>>>(g.data(), g.layout().size(), seed);
  RELAX_CUDA_CHECK_LAUNCH();
  return g;
}

// Checks one sweep `in -> out` against the stencil evaluated on the host, on the first, middle
// and last rows (2D) or planes (3D).
template <class S, class T>
bool sweep_is_exact(const S& s, const relax::DeviceGrid<T>& in, const relax::DeviceGrid<T>& out,
                    const relax::DeviceGrid<T>& b) {
  const relax::HostGrid<T> hin = relax::to_host(in), hout = relax::to_host(out), hb = relax::to_host(b);
  const relax::detail::Shape g = relax::detail::shape_of(in.layout());
  const T* u = hin.storage().data() + in.layout().lead;
  const T* o = hout.storage().data() + in.layout().lead;
  const T* rhs = hb.storage().data() + in.layout().lead;
  const std::int64_t last = S::rank == 3 ? g.nz : g.ny;
  for (std::int64_t w : {std::int64_t(1), (last + 1) / 2, last}) {
    const std::int64_t k = S::rank == 3 ? w : 0;
    for (std::int64_t i = S::rank == 3 ? 1 : w; i <= (S::rank == 3 ? g.ny : w); ++i)
      for (std::int64_t j = 1; j <= g.nx; ++j) {
        const std::int64_t at = g.at(k, i, j);
        const T want = s.update(relax::detail::gather<S::rank>(u, at, g), g.point<S::rank>(k, i, j), rhs[at]);
        if (std::memcmp(&want, &o[at], sizeof(T)) != 0) return false;
      }
  }
  return true;
}

template <class S, class Strategy>
void sweep_throughput(benchmark::State& state) {
  using T = typename S::value_type;
  const relax::Extents e = relax::Extents::cube(state.range(0), S::rank);
  const S s(10.0);
  relax::Stream stream;
  auto u = hashed_grid<T>(e, 1, stream), b = hashed_grid<T>(e, 2, stream);
  relax::DeviceGrid<T> scratch(e, stream);
  relax::copy(u, scratch, stream);
  relax::Sweeper<Strategy>::run(s, u, scratch, b, {1}, stream);  // u = sweep(old u), old u in scratch
  RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!sweep_is_exact(s, scratch, u, b)) {
    state.SkipWithError("sweep differs from the host evaluation of the stencil");
    return;
  }
  // Enough sweeps per timed batch to keep a batch above ~1 ms even when the grid sits in L2, and
  // a multiple of 8 so tiled strategies of depth 1, 2, 4, 8 run whole launches.
  const std::int64_t batch = std::max<std::int64_t>(8, (std::int64_t(1) << 28) / e.points() / 8 * 8);
  double total_ms = 0;
  for (auto _ : state) {
    const double ms = time_ms(stream, [&] { relax::Sweeper<Strategy>::run(s, u, scratch, b, {batch}, stream); });
    state.SetIterationTime(ms * 1e-3);
    total_ms += ms;
  }
  const double sweeps = static_cast<double>(batch) * state.iterations();
  const double points = static_cast<double>(e.points());
  counter(state, "gups", sweeps * points / (total_ms * 1e6));
  counter(state, "GBps", sweeps * points * 3 * sizeof(T) / (total_ms * 1e6));
  counter(state, "us_per_sweep", total_ms * 1e3 / sweeps);
}

// Ten implicit steps, timed from the first right-hand side to the last report (`launch`: the
// on-chip loop runs them in one launch, or one launch per step).
template <class S, class Strategy, relax::StepLaunch launch = relax::StepLaunch::fused>
void diffusion_solve(benchmark::State& state) {
  using T = typename S::value_type;
  relax::DiffusionParams p;
  p.n = state.range(0);
  p.dims = S::rank;
  p.r = static_cast<double>(state.range(1));
  p.source = relax::Source::gaussian;
  relax::Solver<S, Strategy, relax::Fixed> solver(p.extents(), S(p.r), relax::Fixed(8));
  relax::DiffusionState<T> problem(p, solver.stream());
  relax::DeviceGrid<T> u0(p.extents(), solver.stream());
  relax::copy(problem.u(), u0, solver.stream());
  relax::RunReport run;
  for (auto _ : state) {
    relax::copy(u0, problem.u(), solver.stream());
    run = relax::run_diffusion(solver, problem, {}, launch);
    if (!run.converged()) {
      state.SkipWithError("a step did not converge");
      return;
    }
    state.SetIterationTime(run.time_ms * 1e-3);
  }
  counter(state, "sweeps", static_cast<double>(run.sweeps()));
  counter(state, "ms_per_step", run.time_ms / static_cast<double>(run.steps.size()));
  counter(state, "gups", run.gups());
  if constexpr (relax::runs_on_device_v<Strategy>) {
    return;  // the checks run inside the kernel: there is no launch of sweeps alone to compare
  }
  // The same sweeps without checks, timed on the final state: what the checks add is the rest.
  relax::DeviceGrid<T> scratch(p.extents(), solver.stream());
  relax::copy(problem.u(), scratch, solver.stream());
  const std::int64_t probe = 48;  // whole launches for D = 1, 2, 4, 8
  const double sweep_ms = time_ms(solver.stream(), [&] {
    relax::Sweeper<Strategy>::run(solver.stencil(), problem.u(), scratch, problem.b(), {probe},
                                  solver.stream());
  }) / probe;
  counter(state, "check_share", 1.0 - run.sweeps() * sweep_ms / run.time_ms);
}

// Microseconds per sweep of one solve of 2048 sweeps (a tolerance no solve meets) with a check
// every `m` sweeps (m = 0: a single check after the last sweep), timed from the solve's start to
// its report: the device loop against the host loop of the same inner schedule.
template <class S, class Strategy>
void loop_sweep(benchmark::State& state) {
  using T = typename S::value_type;
  const std::int64_t n = state.range(0), m = state.range(1);
  constexpr std::int64_t sweeps = 2048;
  relax::SolveOptions options;
  options.tol = 1e-30;
  options.max_sweeps = sweeps;
  const relax::Extents e = relax::Extents::cube(n, S::rank);
  relax::Solver<S, Strategy, relax::Fixed> solver(e, S(10.0), relax::Fixed(static_cast<int>(m > 0 ? m : sweeps)),
                                                  options);
  relax::HostGrid<T> host_b(e);
  for (T& x : host_b.storage()) x = T(1);  // b = 1 (the padding is never read)
  const relax::DeviceGrid<T> b = relax::to_device(host_b, solver.stream());
  relax::DeviceGrid<T> u0(e, solver.stream()), u(e, solver.stream());
  relax::SolveReport report;
  for (auto _ : state) {
    relax::copy(u0, u, solver.stream());
    report = solver.solve(u, b);
    state.SetIterationTime(report.time_ms * 1e-3);
  }
  counter(state, "us_per_sweep", report.time_ms * 1e3 / static_cast<double>(report.sweeps));
  counter(state, "checks", static_cast<double>(report.checks));
}

// The grid barrier on its own: `rounds` barriers in one cooperative kernel over every resident
// block of 256 threads, relax's bounded barrier against cooperative groups' grid.sync().
__global__ void barrier_rounds_kernel(relax::detail::GridBarrier barrier, int rounds) {
  for (int k = 0; k < rounds; ++k)
    if (!barrier.arrive_and_wait()) return;
}
__global__ void grid_sync_rounds_kernel(int rounds) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  for (int k = 0; k < rounds; ++k) grid.sync();
}

template <bool Relax>
void grid_barrier(benchmark::State& state) {
  constexpr int threads = 256;
  const int per_sm_wanted = static_cast<int>(state.range(0));  // 0: as many as fit
  const void* kernel = Relax ? reinterpret_cast<const void*>(barrier_rounds_kernel)
                             : reinterpret_cast<const void*>(grid_sync_rounds_kernel);
  int per_sm = 0;
  RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  if (per_sm_wanted > 0) per_sm = std::min(per_sm, per_sm_wanted);
  const unsigned blocks = static_cast<unsigned>(per_sm * relax::current_sm_count());
  relax::Stream stream;
  relax::DeviceBuffer<relax::detail::GridBarrierState> words(1);
  int rounds = 10000;
  relax::detail::GridBarrier barrier{words.data(), blocks, 10'000'000'000ull};
  double total_ms = 0.0;
  for (auto _ : state) {
    RELAX_CUDA_CHECK(cudaMemsetAsync(words.data(), 0, sizeof(relax::detail::GridBarrierState), stream.get()));
    const double ms = time_ms(stream.get(), [&] {
      void* relax_args[] = {&barrier, &rounds};
      void* sync_args[] = {&rounds};
      RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(blocks), dim3(threads),
                                                   Relax ? relax_args : sync_args, 0, stream.get()));
    });
    state.SetIterationTime(ms * 1e-3);
    total_ms += ms;
  }
  relax::detail::GridBarrierState after{};
  RELAX_CUDA_CHECK(cudaMemcpy(&after, words.data(), sizeof(after), cudaMemcpyDeviceToHost));
  if (Relax && after.failed != 0) state.SkipWithError("a barrier timed out");
  counter(state, "us_per_barrier", total_ms * 1e3 / (static_cast<double>(state.iterations()) * rounds));
  counter(state, "blocks", static_cast<double>(blocks));
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

template <class Strategy, class S = relax::Stencil5<float>>
void register_sweep(const char* family, const char* shape,
                    std::initializer_list<std::int64_t> sizes = {512, 1024, 2048, 4096, 8192, 16384}) {
  for (std::int64_t n : sizes)
    benchmark::RegisterBenchmark(
        (std::string(family) + "/" + shape + "/N:" + std::to_string(n)).c_str(), sweep_throughput<S, Strategy>)
        ->Arg(n)->UseManualTime()->Unit(benchmark::kMicrosecond)->Repetitions(5)
        ->ReportAggregatesOnly(true);
}

template <class Strategy, class S = relax::Stencil5<float>, relax::StepLaunch launch = relax::StepLaunch::fused>
void register_solve(const char* name, std::int64_t n, std::int64_t r) {
  const std::string family = S::rank == 3 ? "diffusion3d_solve/" : "diffusion_solve/";
  benchmark::RegisterBenchmark((family + name + "/r:" + std::to_string(r) +
                                "/N:" + std::to_string(n)).c_str(), diffusion_solve<S, Strategy, launch>)
      ->Args({n, r})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)
      ->Repetitions(3)->ReportAggregatesOnly(true);
}

// A `loop_sweep` row: `name` at N = n with a check every m sweeps (0: only after the last).
template <class Strategy>
void register_loop_sweep(const char* name, std::int64_t n, std::int64_t m) {
  benchmark::RegisterBenchmark(("loop_sweep/" + std::string(name) + "/checks:" + std::to_string(m) + "/N:" +
                                std::to_string(n)).c_str(), loop_sweep<relax::Stencil5<float>, Strategy>)
      ->Args({n, m})->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(3)->ReportAggregatesOnly(true);
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
  // 3D: the seven-point stencil from L2-resident (128³: 25 MB) to HBM (512³: 1.6 GB).
  using S3 = relax::Stencil7<float>;
  register_sweep<relax::Sync, S3>("sync3d_sweep", "Sync", {128, 256, 512});
  // Other shapes of the 3D walk (`Sync` is 32 x 8 x 1 in 3D; tuning::sync_planes_3d).
  register_sweep<relax::SyncTile<32, 8, 4>, S3>("sync3d_sweep", "32x8x4", {256, 512});
  register_sweep<relax::SyncTile<32, 8, 8>, S3>("sync3d_sweep", "32x8x8", {256, 512});
  register_sweep<relax::SyncTile<32, 16, 8>, S3>("sync3d_sweep", "32x16x8", {512});
  register_sweep<relax::SyncTile<64, 8, 8>, S3>("sync3d_sweep", "64x8x8", {512});
  register_sweep<relax::TemporalBlock<2, relax::Tile<32, 8, 4>>, S3>("tiled3d_sweep", "TemporalBlock2_32x8x4", {256, 512});
  register_sweep<relax::TemporalBlock<4, relax::Tile<32, 8, 4>>, S3>("tiled3d_sweep", "TemporalBlock4_32x8x4", {256, 512});
  register_sweep<relax::TemporalBlock<2, relax::Tile<32, 8, 8>>, S3>("tiled3d_sweep", "TemporalBlock2_32x8x8", {256, 512});
  register_sweep<relax::BlockAsync<4, relax::Tile<32, 8, 4>>, S3>("tiled3d_sweep", "BlockAsync4_32x8x4", {256, 512});
  // Exact temporal blocking streaming (x, y) tiles down z (the plane queue).
  register_sweep<relax::TemporalBlock<1, relax::ColumnStream>, S3>("tiled3d_sweep", "TemporalBlock1_stream", {256, 512});
  register_sweep<relax::TemporalBlock<2, relax::ColumnStream>, S3>("tiled3d_sweep", "TemporalBlock2_stream", {256, 512});
  register_sweep<relax::TemporalBlock<3, relax::ColumnStream>, S3>("tiled3d_sweep", "TemporalBlock3_stream", {512});
  register_sweep<relax::TemporalBlock<4, relax::ColumnStream>, S3>("tiled3d_sweep", "TemporalBlock4_stream", {256, 512});
  register_solve<relax::Sync, S3>("Sync", 256, 10);
  register_solve<relax::TemporalBlock<2, relax::Tile<32, 8, 4>>, S3>("TemporalBlock2_32x8x4", 256, 10);
  register_solve<relax::TemporalBlock<4, relax::ColumnStream>, S3>("TemporalBlock4_stream", 256, 10);
  // The device loop (CPU-free): sweeps with checks every 8 and none, against the host loop, and
  // ten steps against Sync and the stream.
  for (std::int64_t n : {128, 256, 512, 1024, 2048})
    for (std::int64_t m : {8, 0}) {
      register_loop_sweep<relax::DeviceLoop<relax::Sync>>("DeviceLoop_Sync", n, m);
      if (m == 8)
        register_loop_sweep<relax::Sync>("Sync", n, m);
    }
  // The on-chip device loop (tiles resident in shared memory; grids up to about 1400²).
  for (std::int64_t n : {128, 256, 512, 1024})
    for (std::int64_t m : {8, 0}) {
      register_loop_sweep<relax::DeviceLoop<relax::TemporalBlock<4, relax::OnChip>>>("DeviceLoop_OnChip4", n, m);
      register_loop_sweep<relax::DeviceLoop<relax::TemporalBlock<8, relax::OnChip>>>("DeviceLoop_OnChip8", n, m);
      // The same loop with the tiles in registers (2D; grids up to about 1040² at D = 8).
      register_loop_sweep<relax::DeviceLoop<relax::TemporalBlock<4, relax::InRegisters>>>("DeviceLoop_Registers4", n, m);
      register_loop_sweep<relax::DeviceLoop<relax::TemporalBlock<8, relax::InRegisters>>>("DeviceLoop_Registers8", n, m);
    }
  register_solve<relax::Sync>("Sync", 256, 10);
  for (std::int64_t n : {256, 512, 1024, 4096}) register_solve<relax::DeviceLoop<relax::Sync>>("DeviceLoop_Sync", n, 10);
  // Ten steps in L2: the on-chip loop against the launch-based strategies of the same run.
  for (std::int64_t n : {256, 512, 1024})
    for (std::int64_t r : {1, 10, 100}) {
      register_solve<relax::DeviceLoop<relax::TemporalBlock<4, relax::OnChip>>>("DeviceLoop_OnChip4", n, r);
      register_solve<relax::DeviceLoop<relax::TemporalBlock<8, relax::OnChip>>>("DeviceLoop_OnChip8", n, r);
      register_solve<relax::DeviceLoop<relax::TemporalBlock<8, relax::InRegisters>>>("DeviceLoop_Registers8", n, r);
      if (r != 10) continue;
      register_solve<relax::DeviceLoop<relax::TemporalBlock<4, relax::InRegisters>>>("DeviceLoop_Registers4", n, r);
      // The same loop with a launch per step (what fusing the ten steps saves).
      register_solve<relax::DeviceLoop<relax::TemporalBlock<8, relax::OnChip>>, relax::Stencil5<float>,
                     relax::StepLaunch::per_step>("DeviceLoop_OnChip8_per_step", n, r);
      register_solve<relax::TemporalBlock<4, relax::ColumnStream>>("TemporalBlock4_stream", n, r);
      if (n != 1024) register_solve<relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", n, r);
    }
  // Where Auto's on-chip loop moves its tiles from shared memory to registers
  // (tuning::auto_registers_points_per_sm): the sizes between 256² and 512².
  for (std::int64_t n : {320, 384, 448}) {
    register_solve<relax::DeviceLoop<relax::TemporalBlock<8, relax::OnChip>>>("DeviceLoop_OnChip8", n, 10);
    register_solve<relax::DeviceLoop<relax::TemporalBlock<8, relax::InRegisters>>>("DeviceLoop_Registers8", n, 10);
  }
  // Beyond the chip: the streamed device loop against the launch-based stream of the same depth.
  for (std::int64_t n : {1024, 2048, 4096})
    for (std::int64_t m : {8, 0}) {
      register_loop_sweep<relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>>("DeviceLoop_Stream8", n, m);
      if (m == 8)
        register_loop_sweep<relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", n, m);
    }
  // At 16384² (issue 14's open bar): the passes alone (no check but the last) and with a check
  // every 8 sweeps, the device loop against the launched stream, to split the pass from the check.
  for (std::int64_t m : {8, 0}) {
    register_loop_sweep<relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>>("DeviceLoop_Stream8", 16384, m);
    register_loop_sweep<relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", 16384, m);
  }
  for (std::int64_t n : {2048, 4096, 16384})
    for (std::int64_t r : {1, 10, 100}) {
      if (n == 16384 && r == 100) continue;  // as Sync: 12 s a run
      register_solve<relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>>("DeviceLoop_Stream8", n, r);
      if (r != 10 || n == 2048) register_solve<relax::TemporalBlock<8, relax::ColumnStream>>("TemporalBlock8_stream", n, r);
    }
  register_solve<relax::DeviceLoop<relax::TemporalBlock<4, relax::ColumnStream>>, S3>("DeviceLoop_Stream4", 256, 10);
  for (std::int64_t per_sm : {1, 0}) {
    const std::string tail = "/blocks_per_sm:" + std::string(per_sm ? "1" : "all");
    benchmark::RegisterBenchmark(("grid_barrier/relax" + tail).c_str(), grid_barrier<true>)
        ->Arg(per_sm)->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(3)->ReportAggregatesOnly(true);
    benchmark::RegisterBenchmark(("grid_barrier/cg_grid_sync" + tail).c_str(), grid_barrier<false>)
        ->Arg(per_sm)->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(3)->ReportAggregatesOnly(true);
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
