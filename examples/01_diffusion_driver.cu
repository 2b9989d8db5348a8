// The command-line driver: runs the implicit diffusion problem of the block-asynchronous Jacobi
// study (ten backward-Euler steps on an nx × ny box, or nx × ny × nz in 3D, each solved by Jacobi
// to ρ < tol) on the GPU with the chosen strategy (Sync, exact temporal blocking, BlockAsync<D>,
// or DeviceLoop<Sync>, the loop on the device), or with the reference backend on the CPU when
// there is no GPU. Prints each step's sweeps, ρ and time, a summary, and optionally a JSON report.

#include "driver_options.hpp"
#include "json_text.hpp"

#include <relax/relax.hpp>
#if RELAX_DRIVER_NCCL
#include <relax/multi/nccl.cuh>
#endif
#if RELAX_DRIVER_NCCL_DEVICE
#include <relax/multi/nccl_device.cuh>
#endif

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using relax::driver::Backend;
using relax::driver::CommName;
using relax::driver::Options;
using relax::driver::Precision;
using relax::driver::StrategyName;

void print_step(int step, const relax::SolveReport& r) {
  std::printf("step %3d: %8lld sweeps  rho %.3e  %10.3f ms  %s\n", step + 1,
              static_cast<long long>(r.sweeps), r.rho, r.time_ms, relax::to_string(r.status));
  std::fflush(stdout);
}

std::string strategy_text(const Options& o) {
  return o.strategy == StrategyName::sync || o.strategy == StrategyName::automatic ||
                 o.strategy == StrategyName::device_loop
             ? relax::driver::to_string(o.strategy)
             : std::string(relax::driver::to_string(o.strategy)) + ", D = " + std::to_string(o.depth);
}

void write_json(const std::string& path, const Options& o, const std::string& backend,
                const std::string& device, const relax::RunReport& run) {
  std::ofstream out(path);
  if (!out) throw relax::invalid_argument("--json", path, "a file that can be written");
  const relax::Extents e = o.problem.extents();
  using relax::json::number;
  using relax::json::quoted;
  // --n only sizes the axes that --nx, --ny (--nz) left out: null where it sized none.
  const bool n_used = o.problem.nx == 0 || o.problem.ny == 0 || (e.rank == 3 && o.problem.nz == 0);
  // The reference backend checks after each batch, blocking, whatever --checks says.
  const relax::CheckMode checks = backend == "cpu" ? relax::CheckMode::blocking : o.solve.checks;
  out << "{\n  \"n\": " << (n_used ? std::to_string(o.problem.n) : std::string("null")) << ",\n  \"dims\": "
      << e.rank << ",\n  \"nx\": " << e.nx
      << ",\n  \"ny\": " << e.ny << ",\n  \"nz\": " << e.nz << ",\n  \"r\": " << number(o.problem.r)
      << ",\n  \"source\": " << quoted(relax::to_string(o.problem.source))
      << ",\n  \"precision\": " << quoted(o.precision == Precision::float32 ? "float" : "double")
      << ",\n  \"tol\": " << number(o.solve.tol) << ",\n  \"check_interval\": " << o.check_interval
      << ",\n  \"strategy\": " << quoted(strategy_text(o)) << ",\n  \"checks\": "
      << quoted(relax::to_string(checks)) << ",\n  \"backend\": " << quoted(backend)
      << ",\n  \"device\": " << quoted(device) << ",\n  \"converged\": " << (run.converged() ? "true" : "false")
      << ",\n  \"total_sweeps\": " << run.sweeps() << ",\n  \"time_ms\": " << number(run.time_ms)
      << ",\n  \"gups\": " << number(run.gups()) << ",\n  \"steps\": [";
  for (std::size_t k = 0; k < run.steps.size(); ++k) {
    const auto& s = run.steps[k];
    out << (k ? ",\n" : "\n") << "    {\"sweeps\": " << s.sweeps << ", \"rho\": " << number(s.rho)
        << ", \"time_ms\": " << number(s.time_ms) << ", \"status\": " << quoted(relax::to_string(s.status))
        << "}";
  }
  out << "\n  ]\n}\n";
}

template <class S, class Strategy>
relax::RunReport run_gpu(const Options& o) {
  relax::Solver<S, Strategy, relax::Fixed> solver(o.problem.extents(), S(o.problem.r),
                                                  relax::Fixed(o.check_interval), o.solve);
  relax::DiffusionState<typename S::value_type> state(o.problem, solver.stream());
  if (solver.steps_fused())
    std::printf("all %d steps in one launch (each step's time from the GPU's timer)\n", o.problem.steps);
  return relax::run_diffusion(solver, state, print_step);
}

// The strategy types behind --strategy and --depth.
template <class S, template <int, class> class Tiled, class Shape>
relax::RunReport run_gpu_depth(const Options& o) {
  switch (o.depth) {
    case 1: return run_gpu<S, Tiled<1, Shape>>(o);
    case 2: return run_gpu<S, Tiled<2, Shape>>(o);
    case 4: return run_gpu<S, Tiled<4, Shape>>(o);
    default: return run_gpu<S, Tiled<8, Shape>>(o);
  }
}

template <int D, class Shape>
using OnChipLoop = relax::DeviceLoop<relax::TemporalBlock<D, Shape>>;  // on chip, or streamed

// Exact temporal blocking streams through registers, in 2D and 3D (in 3D to D = 4 on an H200).
template <class S>
relax::RunReport run_gpu_stencil(const Options& o) {
  switch (o.strategy) {
    case StrategyName::temporal: return run_gpu_depth<S, relax::TemporalBlock, relax::ColumnStream>(o);
    case StrategyName::device_loop: return run_gpu<S, relax::DeviceLoop<relax::Sync>>(o);
    case StrategyName::on_chip: return run_gpu_depth<S, OnChipLoop, relax::OnChip>(o);
    case StrategyName::device_stream: return run_gpu_depth<S, OnChipLoop, relax::ColumnStream>(o);
    case StrategyName::blockasync: return run_gpu_depth<S, relax::BlockAsync, relax::Tile<32, 8>>(o);
    case StrategyName::automatic: return run_gpu<S, relax::Auto>(o);
    default: return run_gpu<S, relax::Sync>(o);
  }
}

template <class T>
relax::RunReport run_gpu(const Options& o) {
  if (o.problem.dims == 3) return run_gpu_stencil<relax::Stencil7<T>>(o);
  return run_gpu_stencil<relax::Stencil5<T>>(o);
}

// --devices: one slab per listed device (relax::MultiSolver), host-controlled halo copies or,
// with --comm peer-store, the CPU-free solver (device-loop: Sync's sweeps; device-stream: the
// column stream, D exact sweeps a pass).
template <class S, class Strategy, class Comm = relax::HostCopy>
relax::RunReport run_multi(const Options& o) {
  relax::MultiSolver<S, Strategy, Comm> solver(o.problem.extents(), o.devices, S(o.problem.r),
                                               relax::Fixed(o.check_interval), o.solve);
  // The state in grids the solver makes: NCCL's device API needs them in its windows.
  relax::DistributedDiffusionState<typename S::value_type> state(o.problem, solver);
  return relax::run_diffusion(solver, state, print_step);
}

// The CPU-free solver with Comm (device-loop: Sync's sweeps; device-stream: a D-row halo after
// every pass of D sweeps).
template <class S, class Comm>
relax::RunReport run_multi_cpu_free(const Options& o) {
  if (o.strategy == StrategyName::device_loop) return run_multi<S, relax::DeviceLoop<relax::Sync>, Comm>(o);
  switch (o.depth) {
    case 1: return run_multi<S, relax::DeviceLoop<relax::TemporalBlock<1, relax::ColumnStream>>, Comm>(o);
    case 2: return run_multi<S, relax::DeviceLoop<relax::TemporalBlock<2, relax::ColumnStream>>, Comm>(o);
    case 4: return run_multi<S, relax::DeviceLoop<relax::TemporalBlock<4, relax::ColumnStream>>, Comm>(o);
    default: return run_multi<S, relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>, Comm>(o);
  }
}

// The host-controlled solver with Comm (sync, or temporal: a D-row halo after every D sweeps).
template <class S, class Comm>
relax::RunReport run_multi_host(const Options& o) {
  if (o.strategy == StrategyName::sync) return run_multi<S, relax::Sync, Comm>(o);
  switch (o.depth) {
    case 1: return run_multi<S, relax::TemporalBlock<1, relax::ColumnStream>, Comm>(o);
    case 2: return run_multi<S, relax::TemporalBlock<2, relax::ColumnStream>, Comm>(o);
    case 4: return run_multi<S, relax::TemporalBlock<4, relax::ColumnStream>, Comm>(o);
    default: return run_multi<S, relax::TemporalBlock<8, relax::ColumnStream>, Comm>(o);
  }
}

template <class S>
relax::RunReport run_multi_stencil(const Options& o) {
  const bool cpu_free = o.strategy == StrategyName::device_loop || o.strategy == StrategyName::device_stream;
  if (o.comm == CommName::nccl) {
#if RELAX_DRIVER_NCCL_DEVICE
    if (cpu_free) return run_multi_cpu_free<S, relax::Nccl>(o);
#endif
#if RELAX_DRIVER_NCCL
    if (!cpu_free) return run_multi_host<S, relax::Nccl>(o);
#endif
    throw relax::unavailable_error(std::string("--comm nccl with --strategy ") + relax::driver::to_string(o.strategy) +
                                   ": this driver was built without NCCL" + (cpu_free ? "'s device API" : ""));
  }
  if (o.comm == CommName::peer_store) return run_multi_cpu_free<S, relax::PeerStore>(o);
  return run_multi_host<S, relax::HostCopy>(o);
}

template <class T>
relax::RunReport run_gpu_multi(const Options& o) {
  std::string list;
  for (int d : o.devices) list += (list.empty() ? "" : ",") + std::to_string(d);
  std::printf("%zu sub-domains (slabs along %s) on devices %s, %s\n", o.devices.size(), o.problem.dims == 3 ? "z" : "y",
              list.c_str(),
              o.comm == CommName::peer_store ? "halos stored by the kernels (PeerStore), no host in the loop"
              : o.comm == CommName::host_copy ? "halo copies from the host (HostCopy)"
              : o.strategy == StrategyName::device_loop || o.strategy == StrategyName::device_stream
                  ? "halos stored by the kernels through NCCL's windows (its device API), no host in the loop"
                  : "halos sent and received by NCCL after each batch (its host API)");
  if (o.problem.dims == 3) return run_multi_stencil<relax::Stencil7<T>>(o);
  return run_multi_stencil<relax::Stencil5<T>>(o);
}

// On the host, TemporalBlock's and the device loop's iterates are Sync's (exact), so the plain
// schedule serves, and serves for auto too (the choice needs a GPU's L2); the block-asynchronous schedule is emulated
// with the GPU's default 32 x 8 tiles.
template <class T>
relax::RunReport run_cpu(const Options& o, relax::reference::Exec exec) {
  if (o.strategy == StrategyName::blockasync)
    return relax::reference::run_diffusion<T>(o.problem, o.check_interval, o.solve, exec, nullptr,
                                              print_step,
                                              relax::reference::TiledSchedule{32, 8, o.depth, false});
  return relax::reference::run_diffusion<T>(o.problem, o.check_interval, o.solve, exec, nullptr,
                                            print_step);
}

template <class T>
int run(const Options& o, Backend backend) {
  relax::RunReport report;
  std::string backend_name, device;
  if (backend == Backend::gpu) {
    const relax::DeviceInfo info = relax::device_info(0);
    backend_name = "gpu";
    device = info.name;
    std::string strategy = strategy_text(o);
    if (o.strategy == StrategyName::automatic) {
      const relax::Extents e = o.problem.extents();
      const std::string chosen = e.rank == 2 ? relax::auto_strategy_name(relax::Stencil5<T>(o.problem.r), e)
                                             : relax::auto_strategy_name(relax::Stencil7<T>(o.problem.r), e);
      strategy += " (" + chosen + " for this grid on this GPU)";
    }
    std::printf("backend: GPU (%s, %d SMs, %.0f MiB L2), strategy %s, %s checks\n", info.name.c_str(),
                info.sm_count, static_cast<double>(info.l2_bytes) / (1 << 20), strategy.c_str(),
                relax::to_string(o.solve.checks));
    report = o.devices.empty() ? run_gpu<T>(o) : run_gpu_multi<T>(o);
  } else {
    if (!o.devices.empty())
      throw relax::unavailable_error("--devices needs the GPU backend, and no CUDA device is present");
    const relax::reference::Exec exec = relax::reference::Exec::openmp(o.threads);
    backend_name = "cpu";
    device = "reference backend, " + std::to_string(exec.resolved_threads()) + " thread(s)";
    std::printf("backend: CPU reference (%s), strategy %s%s%s\n", device.c_str(),
                strategy_text(o).c_str(), o.strategy == StrategyName::automatic ? " (sync schedule on the CPU)" : "",
                o.backend == Backend::automatic ? ": no CUDA device is present" : "");
    report = run_cpu<T>(o, exec);
  }
  std::printf("summary: %s points, r = %g, %s source, %zu steps, %lld sweeps, %.3f ms, %.2f G "
              "point-updates/s, %s\n",
              o.problem.extents().to_text().c_str(), o.problem.r, relax::to_string(o.problem.source),
              report.steps.size(), static_cast<long long>(report.sweeps()), report.time_ms,
              report.gups(), report.converged() ? "all steps converged" : "NOT CONVERGED");
  if (!o.json_path.empty()) write_json(o.json_path, o, backend_name, device, report);
  return report.converged() ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = relax::driver::parse(std::vector<std::string>(argv + 1, argv + argc));
    if (o.help) {
      std::cout << relax::driver::usage();
      return 0;
    }
    const Backend backend = relax::driver::resolve(o.backend, relax::device_count());
    std::printf("implicit diffusion (%dD): %s points, r = %g, %s source, %d steps, tol %g, check every "
                "%d sweeps, %s\n",
                o.problem.dims, o.problem.extents().to_text().c_str(), o.problem.r,
                relax::to_string(o.problem.source), o.problem.steps, o.solve.tol, o.check_interval,
                o.precision == Precision::float32 ? "float32" : "float64");
    return o.precision == Precision::float32 ? run<float>(o, backend) : run<double>(o, backend);
  } catch (const relax::invalid_argument& e) {
    std::cerr << e.what() << "\n\n" << relax::driver::usage();
    return 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
