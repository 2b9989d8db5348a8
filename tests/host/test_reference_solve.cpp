// The reference backend's solve and run: convergence, the sweep schedule, serial = OpenMP bit for
// bit, sweep counts against r and N, the error bound, and the non-converged statuses.
#include <catch2/catch.hpp>

#include "../support/runs.hpp"

#include <relax/cpu/diffusion.hpp>
#include <relax/cpu/jacobi.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using relax::DiffusionParams;
using relax::testing::diffusion_params;
using relax::HostGrid;
using relax::SolveStatus;
namespace ref = relax::reference;

namespace {
double mean_sweeps(const relax::RunReport& run) {
  return static_cast<double>(run.sweeps()) / static_cast<double>(run.steps.size());
}
}  // namespace

TEST_CASE("reference run converges every step, checking every M sweeps", "[reference]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  const int m = GENERATE(1, 3, 8);
  const auto p = diffusion_params(70, 10.0, src);
  HostGrid<float> u;
  relax::SolveOptions opt;
  opt.record_history = true;
  const auto run = ref::run_diffusion<float>(p, m, opt, ref::Exec::openmp(), &u);
  REQUIRE(run.steps.size() == 10);
  for (const auto& s : run.steps) {
    CHECK(s.status == SolveStatus::converged);
    CHECK(s.rho < opt.tol);
    CHECK(s.sweeps % m == 0);
    CHECK(s.checks == s.sweeps / m);
    REQUIRE(s.history.size() == static_cast<std::size_t>(s.checks));
    CHECK(s.history.back().rho == s.rho);
    CHECK(s.history.front().rho >= opt.tol);  // not converged before the last check
  }
  // ρ recomputed from the returned state agrees with the last step's report.
  const relax::Stencil5<float> s(p.r);
  HostGrid<float> b(p.n), prev(p.n);
  (void)ref::run_diffusion<float>(diffusion_params(70, 10.0, src, 9), m, opt, ref::Exec::serial(), &prev);
  ref::add(prev, relax::source_term<float>(p), b);
  const double rho = static_cast<double>(ref::residual_norm(s, u, b)) /
                     static_cast<double>(ref::rhs_norm(s, u, b));
  CHECK(rho == run.steps.back().rho);
}

TEST_CASE("OpenMP reference equals serial reference bit for bit", "[reference]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  const auto p = diffusion_params(70, 100.0, src, 3);
  HostGrid<float> serial_u, parallel_u;
  const auto serial = ref::run_diffusion<float>(p, 8, {}, ref::Exec::serial(), &serial_u);
  const auto parallel = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(2), &parallel_u);
  REQUIRE(serial.steps.size() == parallel.steps.size());
  for (std::size_t k = 0; k < serial.steps.size(); ++k) {
    CHECK(serial.steps[k].sweeps == parallel.steps[k].sweeps);
    CHECK(serial.steps[k].rho == parallel.steps[k].rho);
  }
  CHECK(relax::testing::same_bits(serial_u, parallel_u));
}

TEST_CASE("sweeps per step grow with r and stay flat in N", "[reference][sweeps]") {
  // The seed study reports about 35, 226 and 1417 sweeps per step for r = 1, 10, 100; the counts
  // depend on r through the spectral radius 4r / (1 + 4r), not on N. docs/results/README.md
  // lists the counts measured here.
  const double rs[] = {1.0, 10.0, 100.0};
  const std::int64_t ns[] = {64, 128, 256};
  double mean[3][3];
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k) {
      const auto run = ref::run_diffusion<float>(diffusion_params(ns[k], rs[a], relax::Source::gaussian), 8,
                                                 {}, ref::Exec::openmp());
      REQUIRE(run.converged());
      mean[a][k] = mean_sweeps(run);
      std::printf("sweeps per step: r = %5.0f, N = %3lld: %8.1f\n", rs[a],
                  static_cast<long long>(ns[k]), mean[a][k]);
    }
  for (int k = 0; k < 3; ++k) {
    CHECK(mean[1][k] > 3 * mean[0][k]);
    CHECK(mean[2][k] > 3 * mean[1][k]);
  }
  for (int a = 0; a < 3; ++a) {
    const double lo = std::min({mean[a][0], mean[a][1], mean[a][2]});
    const double hi = std::max({mean[a][0], mean[a][1], mean[a][2]});
    INFO("r = " << rs[a]);
    CHECK(hi <= 1.5 * lo);
  }
}

TEST_CASE("a converged float32 step is within rho * ||b|| of the exact solution", "[reference]") {
  // A is strictly diagonally dominant with margin 1: ||u - u*||inf <= ||b - A u||inf = rho ||b||.
  const auto p = diffusion_params(64, 10.0, relax::Source::gaussian, 1);
  HostGrid<float> u;
  HostGrid<double> exact;
  const auto run = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &u);
  relax::SolveOptions tight;
  tight.tol = 1e-13;
  REQUIRE(ref::run_diffusion<double>(p, 8, tight, ref::Exec::openmp(), &exact).converged());
  REQUIRE(run.converged());
  double err = 0, scale = 0;
  for (std::int64_t i = 1; i <= p.n; ++i)
    for (std::int64_t j = 1; j <= p.n; ++j) {
      err = std::max(err, std::abs(double(u(i, j)) - exact(i, j)));
      scale = std::max(scale, std::abs(exact(i, j)));
    }
  const double bound = run.steps[0].rho * run.steps[0].rhs_norm;
  INFO("error " << err << ", bound " << bound);
  // The bound holds for the float32 iterate up to rounding of its own values.
  CHECK(err <= bound + 4 * std::numeric_limits<float>::epsilon() * scale);
  CHECK(err > 0);
}

TEST_CASE("sweep cap ends a solve as not converged and stops the run", "[reference]") {
  relax::SolveOptions opt;
  opt.max_sweeps = 5;
  const auto run =
      ref::run_diffusion<float>(diffusion_params(70, 100.0, relax::Source::point), 8, opt, ref::Exec::serial());
  REQUIRE(run.steps.size() == 1);
  CHECK(run.steps[0].status == SolveStatus::sweep_cap);
  CHECK(run.steps[0].sweeps == 5);  // the last batch is cut to the cap
  CHECK(run.steps[0].rho >= opt.tol);
  CHECK_FALSE(run.converged());
}

TEST_CASE("a NaN in the right-hand side ends the solve as non-finite", "[reference]") {
  const relax::Stencil5<float> s(1.0);
  HostGrid<float> u(16), scratch(16), b(16);
  b(5, 7) = std::numeric_limits<float>::quiet_NaN();
  const auto rep = ref::solve(s, u, scratch, b, 4, {});
  CHECK(rep.status == SolveStatus::non_finite);
  CHECK(rep.checks == 1);
}

TEST_CASE("a zero system converges at the first check with the absolute residual", "[reference]") {
  const relax::Stencil5<double> s(10.0);
  HostGrid<double> u(9), scratch(9), b(9);
  const auto rep = ref::solve(s, u, scratch, b, 8, {});
  CHECK(rep.status == SolveStatus::converged);
  CHECK(rep.rhs_norm == 0.0);
  CHECK(rep.rho == 0.0);
  CHECK(rep.sweeps == 8);
}
