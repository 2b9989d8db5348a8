// Recoverable CUDA errors leave nothing behind: after a device allocation that runs out of
// memory, an invalid handle passed to a CUDA call, or a launch with an invalid configuration,
// the runtime's last-error slot is clear and a valid Jacobi run and a valid CG solve give the
// right result. (Not tagged [sanitize]: compute-sanitizer reports the provoked API errors.)
#include <catch2/catch.hpp>

#include "runs.hpp"
#include "vectors.hpp"

#include <relax/core/buffer.hpp>
#include <relax/core/device.hpp>
#include <relax/core/stream.hpp>
#include <relax/cpu/cg.hpp>
#include <relax/cpu/diffusion.hpp>
#include <relax/solver/cg.cuh>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/operator.cuh>
#include <relax/strategy/sync.cuh>

#include <cmath>
#include <cstdint>
#include <vector>

namespace ref = relax::reference;

namespace {

__global__ void empty_kernel() {}

//! Runs `f`, which must throw `relax::cuda_error` with `expected`, and checks that the failure
//! was cleared from the runtime's last-error slot, where the next launch check would read it.
template <class F>
void check_recoverable_error(F&& f, cudaError_t expected) {
  try {
    f();
    FAIL("no relax::cuda_error was thrown");
  } catch (const relax::cuda_error& e) {
    INFO(e.what());
    CHECK(e.code() == expected);
  }
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}

//! Ten implicit steps with Solver<Stencil5<float>, Sync, Fixed>: the reference's sweeps, ρ and bits.
void check_valid_jacobi_run() {
  const auto p = relax::testing::diffusion_params(70, 10.0, relax::Source::gaussian);
  relax::HostGrid<float> expected;
  const auto want = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &expected);
  relax::Solver<relax::Stencil5<float>, relax::Sync, relax::Fixed> solver(
      p.n, relax::Stencil5<float>(p.r), relax::Fixed(8));
  relax::DiffusionState<float> state(p, solver.stream());
  const auto got = relax::run_diffusion(solver, state);
  relax::testing::check_same_run(got, relax::to_host(state.u(), solver.stream()), want, expected);
  for (const auto& step : got.steps) CHECK(step.status == relax::SolveStatus::converged);
}

//! CG on the 5-point Poisson matrix recovers a known solution.
void check_valid_cg_solve() {
  const std::int64_t n = 33;
  const ref::Poisson5<double> host_op(n);
  const auto exact = relax::testing::random_vector<double>(host_op.size(), 7);
  std::vector<double> b(exact.size()), x(exact.size(), 0.0);
  host_op.apply(exact.data(), b.data());
  relax::CgOptions opt;
  opt.rel_tol = 1e-12;
  relax::CG<relax::Poisson5Operator<double>> cg(relax::Poisson5Operator<double>(n), opt);
  const relax::CgReport report = cg.solve(b, x);
  INFO("CG: " << relax::to_string(report.status) << " after " << report.iterations << " iterations");
  CHECK(report.converged());
  // The tolerance times the condition number (about 4 n² / π²), with a margin of π².
  CHECK(relax::testing::relative_error(x, exact) <= 1e-12 * 4.0 * n * n);
}

void check_valid_solves() {
  check_valid_jacobi_run();
  check_valid_cg_solve();
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}

//! Grids of n × n points whose float storage alone is four times the device's memory.
std::int64_t impossible_n() {
  return static_cast<std::int64_t>(std::sqrt(static_cast<double>(relax::device_info().global_bytes))) + 1;
}

}  // namespace

TEST_CASE("a valid solve succeeds after a device allocation ran out of memory", "[errors]") {
  SECTION("DeviceBuffer") {
    check_recoverable_error([] { relax::DeviceBuffer<char> huge(2 * relax::device_info().global_bytes); },
                            cudaErrorMemoryAllocation);
  }
  SECTION("DeviceGrid") {
    check_recoverable_error([] { relax::DeviceGrid<float> huge(impossible_n()); },
                            cudaErrorMemoryAllocation);
  }
  SECTION("Solver") {
    check_recoverable_error(
        [] {
          relax::Solver<relax::Stencil5<float>, relax::Sync, relax::Fixed> huge(
              impossible_n(), relax::Stencil5<float>(1.0), relax::Fixed(8));
        },
        cudaErrorMemoryAllocation);
  }
  SECTION("CG") {
    check_recoverable_error(
        [] { relax::CG<relax::Poisson5Operator<double>> huge{relax::Poisson5Operator<double>(impossible_n())}; },
        cudaErrorMemoryAllocation);
  }
  check_valid_solves();
}

TEST_CASE("a valid solve succeeds after a CUDA call rejected an invalid handle", "[errors]") {
  // Neither event was ever recorded, so the runtime has no time between them.
  check_recoverable_error(
      [] {
        relax::Event start, stop;
        (void)relax::elapsed_ms(start, stop);
      },
      cudaErrorInvalidResourceHandle);
  check_valid_solves();
}

TEST_CASE("a valid solve succeeds after a launch with an invalid configuration", "[errors]") {
  // More threads per block than any CUDA device allows; CUDA 13 reports it as an invalid argument
  // (seen on the H200).
  check_recoverable_error(
      [] {
        empty_kernel<<<1, 2048>>>();
        RELAX_CUDA_CHECK_LAUNCH();
      },
      cudaErrorInvalidValue);
  check_valid_solves();
}
