// The ten-step implicit diffusion problem on the GPU with Solver<Stencil5, Sync, Fixed> against
// the reference backend: identical sweep counts and ρ for every step, identical final bits.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "runs.hpp"

#include <relax/cpu/diffusion.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/strategy/sync.cuh>

#include <cstdio>

using relax::HostGrid;
namespace ref = relax::reference;

namespace {

template <class T, class Strategy = relax::Sync>
void check_run_matches(const relax::DiffusionParams& p, int m, const relax::SolveOptions& opt = {}) {
  HostGrid<T> expected;
  const auto want = ref::run_diffusion<T>(p, m, opt, ref::Exec::openmp(), &expected);

  HostGrid<T> u;
  const auto got = relax::testing::gpu_diffusion<relax::Stencil5<T>, Strategy>(p, u, relax::Fixed(m), opt);

  INFO("N = " << p.n << ", r = " << p.r << ", source " << relax::to_string(p.source) << ", M = " << m);
  relax::testing::check_same_run(got, u, want, expected);
}

using relax::testing::diffusion_params;

}  // namespace

TEST_CASE("SyncMatchesReference: ten steps, same sweeps and bits", "[diffusion]") {
  const std::int64_t n = GENERATE(70, 512, 1000);
  const double r = GENERATE(1.0, 10.0, 100.0);
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  const auto p = diffusion_params(n, r, src);
  check_run_matches<float>(p, 8);
}

TEST_CASE("SyncMatchesReference: short runs in float64 and other shapes", "[diffusion][sanitize]") {
  check_run_matches<double>(diffusion_params(70, 10.0, relax::Source::gaussian, 2), 8);
  check_run_matches<float, relax::SyncTile<32, 8, 4>>(diffusion_params(70, 1.0, relax::Source::point, 2), 3);
  check_run_matches<float>(diffusion_params(3, 1.0, relax::Source::point, 2), 1);
}

TEST_CASE("GPU sweep cap ends the run as the reference does", "[diffusion][sanitize]") {
  relax::SolveOptions opt;
  opt.max_sweeps = 12;
  check_run_matches<float>(diffusion_params(70, 100.0, relax::Source::gaussian), 8, opt);
}

TEST_CASE("grids of more than 2^31 points sweep and reduce exactly", "[.large]") {
  // 46341² > 2³¹. One sweep and one residual norm, compared with the reference bit for bit.
  const std::int64_t n = 46341;
  const relax::Stencil5<float> s(10.0);
  HostGrid<float> u(n), b(n);
  relax::testing::fill_random(u, 11, 0.0, 100.0);
  relax::testing::fill_random(b, 12);
  relax::Stream stream;
  relax::DeviceGrid<float> du = relax::to_device(u, stream), db = relax::to_device(b, stream);
  relax::DeviceGrid<float> scratch = relax::to_device(u, stream);
  relax::MaxNormSlot<float> slot;
  relax::Sweeper<relax::Sync>::run(s, du, scratch, db, {1}, stream);
  const float gpu_norm = relax::residual_norm(s, du, db, slot, stream);
  const HostGrid<float> got = relax::to_host(du, stream);
  HostGrid<float> out = u;
  ref::sweep(s, u, out, b, ref::Exec::openmp());
  CHECK(relax::testing::same_bits(got, out));
  CHECK(gpu_norm == ref::residual_norm(s, out, b, ref::Exec::openmp()));
}
