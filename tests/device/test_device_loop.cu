// The device loops (`DeviceLoop<Sync>`, the on-chip `DeviceLoop<TemporalBlock<D, OnChip>>` and the
// streamed `DeviceLoop<TemporalBlock<D, ColumnStream>>`, and `DeviceLoop<BlockAsync<D>>` against
// the launched BlockAsync's host loop: one cooperative kernel per solve, the convergence check and the stop decision on the device)
// against the host loop of `Sync` with blocking checks:
// the same statuses, sweeps, checks, ρ (per check, too) and final bits, on the ten-step problem
// in 2D and 3D, rectangular and degenerate boxes, the sweep cap and a non-finite residual; and a
// grid barrier that cannot complete ends with an error instead of a hang.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "grids.hpp"
#include "runs.hpp"

#include <relax/core/buffer.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

using relax::DeviceGrid;
using relax::Extents;
using relax::HostGrid;

namespace {

using OnDevice = relax::DeviceLoop<relax::Sync>;
template <int D>
using OnChip = relax::DeviceLoop<relax::TemporalBlock<D, relax::OnChip>>;
template <int D>
using InRegisters = relax::DeviceLoop<relax::TemporalBlock<D, relax::InRegisters>>;
template <int D>
using Streamed = relax::DeviceLoop<relax::TemporalBlock<D, relax::ColumnStream>>;
template <int D, class Tile = relax::Tile<32, 8>>
using OnTiles = relax::DeviceLoop<relax::BlockAsync<D, Tile>>;

// The run of `p` with `Loop` (all steps in one launch where it can, unless `launch` says
// otherwise) against Sync's host loop, one solve per step.
// `Reference`: the launched strategy whose host loop the device loop must reproduce (Sync for the
// exact inner schedules).
template <class S, class Loop = OnDevice, class Reference = relax::Sync>
void check_same_as_host_loop(const relax::DiffusionParams& p, int m = 8, const relax::SolveOptions& options = {},
                             relax::StepLaunch launch = relax::StepLaunch::fused) {
  HostGrid<typename S::value_type> host_u, device_u;
  const auto want = relax::testing::gpu_diffusion<S, Reference>(p, host_u, relax::Fixed(m), options);
  const auto got = relax::testing::gpu_diffusion<S, Loop>(p, device_u, relax::Fixed(m), options, launch);
  INFO("box " << p.extents().to_text() << ", r = " << p.r << ", source " << relax::to_string(p.source) << ", M = " << m
              << (launch == relax::StepLaunch::fused ? ", fused steps" : ", a launch per step"));
  relax::testing::check_same_run(got, device_u, want, host_u);
  if (options.record_history)
    for (std::size_t k = 0; k < std::min(got.steps.size(), want.steps.size()); ++k) {
      INFO("step " << k + 1);
      relax::testing::check_same_report(got.steps[k], want.steps[k]);
    }
}

relax::DiffusionParams box(std::int64_t nx, std::int64_t ny, std::int64_t nz, double r, relax::Source src,
                           int steps = 10) {
  relax::DiffusionParams p = relax::testing::diffusion_params(nx, r, src, steps);
  p.dims = nz > 0 ? 3 : 2;
  p.nx = nx;
  p.ny = ny;
  p.nz = nz;
  return p;
}

// One solve of random data on any box (1 × 1 included), host loop against device loop.
template <class Loop, class S, class Reference = relax::Sync>
void check_random_solve(const Extents& e, const S& s, const relax::SolveOptions& options, int m) {
  using T = typename S::value_type;
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 3 + e.nx, 0.0, 10.0);
  relax::testing::fill_random(b, 5 + e.ny);
  relax::Solver<S, Reference, relax::Fixed> host_loop(e, s, relax::Fixed(m), options);
  relax::Solver<S, Loop, relax::Fixed> device_loop(e, s, relax::Fixed(m), options);
  DeviceGrid<T> hu = relax::to_device(u, host_loop.stream()), du = relax::to_device(u, device_loop.stream());
  const DeviceGrid<T> hb = relax::to_device(b, host_loop.stream()), db = relax::to_device(b, device_loop.stream());
  const relax::SolveReport want = host_loop.solve(hu, hb);
  const relax::SolveReport got = device_loop.solve(du, db);
  INFO("box " << e.to_text() << ", M = " << m << ", cap " << options.max_sweeps);
  relax::testing::check_same_report(got, want);
  CHECK(relax::testing::same_bits(relax::to_host(du, device_loop.stream()), relax::to_host(hu, host_loop.stream())));
}

}  // namespace

TEMPLATE_TEST_CASE("the device loop equals Sync's host loop on the ten-step problem, 2D", "[device_loop][diffusion]",
                   OnDevice, OnChip<4>, InRegisters<4>, Streamed<8>) {
  const double r = GENERATE(1.0, 10.0, 100.0);
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  // (The diffusion problem needs N >= 3; 1 × 1 and 2 × 2 boxes are in the random-data test below.)
  for (std::int64_t n : {3, 70, 257, 1000})
    check_same_as_host_loop<relax::Stencil5<float>, TestType>(relax::testing::diffusion_params(n, r, src));
  check_same_as_host_loop<relax::Stencil5<float>, TestType>(box(1000, 70, 0, r, src));
  check_same_as_host_loop<relax::Stencil5<float>, TestType>(box(33, 517, 0, r, src));
}

TEST_CASE("the on-chip device loop at other depths, in 3D and in float64", "[device_loop][diffusion][on_chip]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  for (std::int64_t n : {3, 70, 257}) {
    check_same_as_host_loop<relax::Stencil5<float>, OnChip<1>>(relax::testing::diffusion_params(n, 10.0, src, 3));
    check_same_as_host_loop<relax::Stencil5<float>, OnChip<3>>(relax::testing::diffusion_params(n, 10.0, src, 3));
    check_same_as_host_loop<relax::Stencil5<float>, OnChip<8>>(relax::testing::diffusion_params(n, 10.0, src, 3));
  }
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<8>>(box(33, 517, 0, 100.0, src, 3));
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<3>>(box(1000, 70, 0, 1.0, src, 3));
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<4>>(relax::testing::diffusion_params(257, 10.0, src, 3), 5);
  check_same_as_host_loop<relax::Stencil5<double>, OnChip<4>>(relax::testing::diffusion_params(257, 10.0, src, 3));
  // A launch per step (Solver::solve), as a user's own time loop runs it.
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<4>>(box(1000, 70, 0, 10.0, src, 3), 8, {},
                                                             relax::StepLaunch::per_step);
  check_same_as_host_loop<relax::Stencil7<float>, OnChip<3>>(box(33, 17, 9, 10.0, src, 3), 8, {},
                                                             relax::StepLaunch::per_step);
  for (double r : {1.0, 10.0, 100.0}) {
    check_same_as_host_loop<relax::Stencil7<float>, OnChip<4>>(box(33, 17, 9, r, src));
    check_same_as_host_loop<relax::Stencil7<float>, OnChip<2>>(box(40, 40, 40, r, src, 3));
  }
}

TEST_CASE("the register-resident device loop at other depths, in float64 and on grids that fill its frame",
          "[device_loop][diffusion][in_registers]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  for (std::int64_t n : {3, 70, 257}) {
    check_same_as_host_loop<relax::Stencil5<float>, InRegisters<1>>(relax::testing::diffusion_params(n, 10.0, src, 3));
    check_same_as_host_loop<relax::Stencil5<float>, InRegisters<3>>(relax::testing::diffusion_params(n, 10.0, src, 3));
    check_same_as_host_loop<relax::Stencil5<float>, InRegisters<8>>(relax::testing::diffusion_params(n, 10.0, src, 3));
  }
  // Regions that fill the frame (1024² at D = 8: 103 × 79 tiles, regions of 119 × 95 in 128 × 96),
  // and tall and wide boxes.
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<8>>(relax::testing::diffusion_params(1024, 10.0, src, 2));
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<8>>(box(33, 517, 0, 100.0, src, 3));
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<3>>(box(1000, 70, 0, 1.0, src, 3));
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<4>>(relax::testing::diffusion_params(257, 10.0, src, 3), 5);
  check_same_as_host_loop<relax::Stencil5<double>, InRegisters<4>>(relax::testing::diffusion_params(257, 10.0, src, 3));
  check_same_as_host_loop<relax::Stencil5<double>, InRegisters<8>>(box(500, 90, 0, 10.0, src, 3));
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<4>>(box(1000, 70, 0, 10.0, src, 3), 8, {},
                                                                  relax::StepLaunch::per_step);
  relax::SolveOptions options;
  options.record_history = true;
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<4>>(relax::testing::diffusion_params(70, 10.0, src, 4), 8,
                                                                  options);
  options.max_sweeps = 40;  // a step of r = 100 ends unconverged, and the run stops after it
  check_same_as_host_loop<relax::Stencil5<float>, InRegisters<8>>(relax::testing::diffusion_params(70, 100.0, src, 5), 8,
                                                                  options);
}

TEST_CASE("the register-resident device loop refuses a grid that does not fit its frame",
          "[device_loop][validation][in_registers]") {
  // 1100² needs tiles of at most 112 × 80 at D = 8: 10 × 14 = 140 of them, more than the SMs.
  const Extents e(1100, 1100);
  relax::Solver<relax::Stencil5<float>, InRegisters<8>, relax::Fixed> solver(e, relax::Stencil5<float>(1.0));
  HostGrid<float> host_b(e);
  relax::testing::fill_random(host_b, 3);
  DeviceGrid<float> u(e);
  const DeviceGrid<float> b = relax::to_device(host_b, solver.stream());
  CHECK_THROWS_AS(solver.solve(u, b), relax::invalid_argument);
  CHECK_THROWS_WITH(solver.solve(u, b), Catch::Contains("fits on chip") && Catch::Contains("InRegisters") &&
                                            Catch::Contains("128 x 96") && Catch::Contains("DeviceLoop<Sync>"));
}

TEST_CASE("the on-chip loop's fused steps: histories, a step that stops the run, and the steps' times",
          "[device_loop][diffusion][on_chip][sanitize]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  relax::SolveOptions options;
  options.record_history = true;
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<4>>(relax::testing::diffusion_params(70, 10.0, src, 4), 8,
                                                             options);
  check_same_as_host_loop<relax::Stencil7<float>, OnChip<2>>(box(20, 13, 9, 1.0, src, 3), 3, options);
  // A cap of 40 sweeps ends a step of r = 100 unconverged, and the run stops after it.
  options.max_sweeps = 40;
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<4>>(relax::testing::diffusion_params(70, 100.0, src, 5), 8,
                                                             options);
  options.record_history = false;
  check_same_as_host_loop<relax::Stencil5<float>, OnChip<8>>(relax::testing::diffusion_params(70, 100.0, src, 5), 8,
                                                             options);
  // Every fused step has its time from the GPU's timer, and they add up to less than the run's.
  HostGrid<float> u;
  const auto run = relax::testing::gpu_diffusion<relax::Stencil5<float>, OnChip<4>>(
      relax::testing::diffusion_params(257, 10.0, src, 4), u);
  REQUIRE(run.steps.size() == 4);
  double steps_ms = 0.0;
  for (const auto& step : run.steps) {
    CHECK(step.time_ms > 0.0);
    steps_ms += step.time_ms;
  }
  CHECK(steps_ms <= run.time_ms);
}

TEST_CASE("fused steps are refused where they cannot run", "[device_loop][validation][on_chip]") {
  const Extents e(70, 50);
  relax::Solver<relax::Stencil5<float>, OnChip<4>, relax::Fixed> solver(e, relax::Stencil5<float>(1.0));
  CHECK(solver.runs_on_chip());
  CHECK(solver.steps_fused());
  DeviceGrid<float> u(e);
  const DeviceGrid<float> f(e), other(Extents(70, 51));
  CHECK_THROWS_WITH(solver.solve_steps(u, f, 0, solver.stream()), Catch::Contains("steps"));
  CHECK_THROWS_WITH(solver.solve_steps(u, other, 2, solver.stream()), Catch::Contains("source"));
  relax::DeviceLoopWorkspace<float> workspace;
  workspace.reserve(2, 0);
  DeviceGrid<float> scratch(e);
  relax::detail::DeviceLoopPlan plan;
  plan.steps = 2;
  plan.rhs_on_device = true;
  plan.check_every = 0;  // a step ends at a converged check: there must be checks
  CHECK_THROWS_WITH(relax::Sweeper<OnChip<4>>::solve_steps(solver.stencil(), u, scratch, f, plan, workspace, false,
                                                           solver.stream()),
                    Catch::Contains("check_every"));
  plan.check_every = 8;
  CHECK_THROWS_WITH(relax::Sweeper<OnChip<4>>::solve(solver.stencil(), u, scratch, f, plan, workspace, false,
                                                     solver.stream()),
                    Catch::Contains("solve_steps"));
}

TEST_CASE("on-chip solvers of different grids take turns on one kernel", "[device_loop][on_chip]") {
  // Each solver keeps its launch configuration, so the large grid's second solve launches without
  // asking again: the small grid's solve in between must not have lowered the shared memory the
  // kernel may ask for.
  relax::SolveOptions options;
  options.max_sweeps = 40;
  options.tol = 1e-30;
  const relax::Stencil5<float> s(10.0);
  struct Case {
    Extents e;
    relax::Solver<relax::Stencil5<float>, OnChip<4>, relax::Fixed> on_chip;
    relax::Solver<relax::Stencil5<float>, relax::Sync, relax::Fixed> sync;
    HostGrid<float> u, b;
  };
  auto make = [&](Extents e) {
    Case c{e, {e, s, relax::Fixed(8), options}, {e, s, relax::Fixed(8), options}, HostGrid<float>(e), HostGrid<float>(e)};
    relax::testing::fill_random(c.u, 11 + e.nx, 0.0, 10.0);
    relax::testing::fill_random(c.b, 13 + e.ny);
    return c;
  };
  Case large = make(Extents(1000, 900)), small = make(Extents(70, 50));
  for (Case* c : {&large, &small, &large}) {
    DeviceGrid<float> du = relax::to_device(c->u, c->on_chip.stream()), hu = relax::to_device(c->u, c->sync.stream());
    const DeviceGrid<float> db = relax::to_device(c->b, c->on_chip.stream()), hb = relax::to_device(c->b, c->sync.stream());
    INFO("box " << c->e.to_text());
    relax::testing::check_same_report(c->on_chip.solve(du, db), c->sync.solve(hu, hb));
    CHECK(relax::testing::same_bits(relax::to_host(du, c->on_chip.stream()), relax::to_host(hu, c->sync.stream())));
  }
}

TEST_CASE("the on-chip device loop refuses a grid that does not fit on chip", "[device_loop][validation][on_chip]") {
  const Extents e(4099, 4099);
  relax::Solver<relax::Stencil5<float>, OnChip<4>, relax::Fixed> solver(e, relax::Stencil5<float>(1.0));
  DeviceGrid<float> u(e);
  const DeviceGrid<float> b(e);
  CHECK_THROWS_AS(solver.solve(u, b), relax::invalid_argument);
  CHECK_THROWS_WITH(solver.solve(u, b), Catch::Contains("fits on chip") && Catch::Contains("DeviceLoop<Sync>"));
}

TEST_CASE("the device loop equals Sync's host loop beyond the L2 and in 3D", "[device_loop][diffusion][3d]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  check_same_as_host_loop<relax::Stencil5<float>>(relax::testing::diffusion_params(4099, 1.0, src, 2));
  for (double r : {1.0, 10.0, 100.0}) {
    check_same_as_host_loop<relax::Stencil7<float>>(box(33, 17, 9, r, src));
    check_same_as_host_loop<relax::Stencil7<float>>(box(40, 40, 40, r, src, 3));
  }
  check_same_as_host_loop<relax::Stencil5<double>>(relax::testing::diffusion_params(70, 10.0, src, 3));
}

TEST_CASE("the streamed device loop equals Sync's host loop beyond the L2, in 3D, at other depths and in float64",
          "[device_loop][diffusion][3d][streamed]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  check_same_as_host_loop<relax::Stencil5<float>, Streamed<8>>(relax::testing::diffusion_params(4099, 1.0, src, 2));
  check_same_as_host_loop<relax::Stencil5<float>, Streamed<8>>(box(2100, 3, 0, 10.0, src, 3));  // one segment, many strips
  check_same_as_host_loop<relax::Stencil5<float>, Streamed<3>>(box(1000, 70, 0, 10.0, src, 3), 5);  // passes of 3 and 2
  check_same_as_host_loop<relax::Stencil5<double>, Streamed<8>>(relax::testing::diffusion_params(257, 10.0, src, 3));
  for (double r : {1.0, 10.0, 100.0}) {
    check_same_as_host_loop<relax::Stencil7<float>, Streamed<4>>(box(33, 17, 9, r, src));
    check_same_as_host_loop<relax::Stencil7<float>, Streamed<2>>(box(40, 40, 40, r, src, 3));
  }
}

TEST_CASE("the streamed device loop in 3D, float64, equals Sync's host loop", "[device_loop][diffusion][3d][streamed]") {
  // Once refused: its float64 iterates were wrong on every box and depth tried while u was read
  // through the non-coherent path (h200/logs/stream3d_f64_bisect.txt); the plane queue now
  // stages u through L2 only. The boxes and depths of that bisection.
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  check_same_as_host_loop<relax::Stencil7<double>, Streamed<4>>(box(33, 17, 9, 10.0, src));
  check_same_as_host_loop<relax::Stencil7<double>, Streamed<2>>(box(70, 33, 20, 10.0, src, 3));
  check_same_as_host_loop<relax::Stencil7<double>, Streamed<4>>(box(70, 33, 20, 1.0, src, 3), 5);
}

TEST_CASE("the streamed device loop refuses a 3D depth whose plane queue does not fit", "[device_loop][validation][streamed]") {
  const Extents e(20, 20, 20);
  relax::Solver<relax::Stencil7<float>, Streamed<8>, relax::Fixed> solver(e, relax::Stencil7<float>(1.0));
  HostGrid<float> host_b(e);
  relax::testing::fill_random(host_b, 11);  // b = 0 would end the solve before the launch
  DeviceGrid<float> u(e);
  const DeviceGrid<float> b = relax::to_device(host_b, solver.stream());
  CHECK_THROWS_AS(solver.solve(u, b), relax::invalid_argument);
  CHECK_THROWS_WITH(solver.solve(u, b), Catch::Contains("plane queue") && Catch::Contains("at most"));
}

TEMPLATE_TEST_CASE("the device loop on degenerate boxes, with the cap, a history and other M", "[device_loop][sanitize]",
                   OnDevice, OnChip<4>, OnChip<3>, OnChip<8>, InRegisters<4>, InRegisters<3>, InRegisters<8>, Streamed<4>,
                   Streamed<3>) {
  relax::SolveOptions options;
  options.record_history = true;
  for (const Extents& e : {Extents(1, 1), Extents(1, 57), Extents(57, 1), Extents(2, 2), Extents(129, 3)})
    check_random_solve<TestType>(e, relax::Stencil5<float>(10.0), options, 8);
  if constexpr (!relax::detail::in_registers_v<TestType>)  // 2D only
    for (const Extents& e : {Extents(1, 1, 64), Extents(33, 17, 5)})
      check_random_solve<TestType>(e, relax::Stencil7<float>(1.0), options, 3);
  options.max_sweeps = 37;  // not a multiple of M: the last batch is shorter
  options.tol = 1e-30;
  check_random_solve<TestType>(Extents(70, 50), relax::Stencil5<float>(100.0), options, 8);
  check_random_solve<TestType>(Extents(70, 50), relax::Stencil5<float>(100.0), options, 1);
  options.max_sweeps = 5;  // fewer sweeps than D (on chip: one batch of 5 at D = 8)
  check_random_solve<TestType>(Extents(70, 50), relax::Stencil5<float>(100.0), options, 8);
}

TEMPLATE_TEST_CASE("a non-finite residual stops the device loop as it stops the host loop", "[device_loop][sanitize]",
                   OnDevice, OnChip<4>, InRegisters<4>, Streamed<8>, OnTiles<4>) {
  const Extents e(40, 30);
  HostGrid<float> u(e), b(e);
  b(10, 10) = std::numeric_limits<float>::quiet_NaN();
  relax::Solver<relax::Stencil5<float>, TestType, relax::Fixed> solver(e, relax::Stencil5<float>(1.0));
  DeviceGrid<float> du = relax::to_device(u, solver.stream());
  const DeviceGrid<float> db = relax::to_device(b, solver.stream());
  const relax::SolveReport got = solver.solve(du, db);
  CHECK(got.status == relax::SolveStatus::non_finite);
  CHECK(got.checks == 1);
  CHECK(got.sweeps == 8);
}

TEMPLATE_TEST_CASE("the device loop's batch sweeps equal Sync's sweeps", "[device_loop][sanitize]", OnDevice, OnChip<4>,
                   OnChip<3>, OnChip<8>, InRegisters<4>, InRegisters<8>, Streamed<4>, Streamed<3>) {
  for (const Extents& e : {Extents(1, 1), Extents(70, 1000), Extents(33, 17, 5)}) {
    if (relax::detail::in_registers_v<TestType> && e.rank == 3) continue;  // 2D only
    HostGrid<float> u(e), b(e);
    relax::testing::fill_random(u, 7, 0.0, 10.0);
    relax::testing::fill_random(b, 9);
    relax::Stream stream;
    DeviceGrid<float> a = relax::to_device(u, stream), a_scratch = relax::to_device(u, stream);
    DeviceGrid<float> c = relax::to_device(u, stream), c_scratch = relax::to_device(u, stream);
    const DeviceGrid<float> db = relax::to_device(b, stream);
    auto sweep = [&](auto stencil) {
      relax::Sweeper<relax::Sync>::run(stencil, a, a_scratch, db, relax::Batch{5}, stream);
      relax::Sweeper<TestType>::run(stencil, c, c_scratch, db, relax::Batch{5}, stream);
    };
    if (e.rank == 2) sweep(relax::Stencil5<float>(10.0));
    else if constexpr (!relax::detail::in_registers_v<TestType>) sweep(relax::Stencil7<float>(10.0));
    INFO("box " << e.to_text());
    CHECK(relax::testing::same_bits(relax::to_host(c, stream), relax::to_host(a, stream)));
  }
}

TEMPLATE_TEST_CASE("a grid barrier that cannot complete ends with an error naming the kernel, not a hang",
                   "[device_loop][validation]", OnDevice, OnChip<4>, InRegisters<4>, Streamed<8>, OnTiles<4>) {
  const Extents e(300, 200);
  HostGrid<float> u(e), b(e);
  relax::testing::fill_random(b, 3);
  relax::Stream stream;
  DeviceGrid<float> du = relax::to_device(u, stream), scratch = relax::to_device(u, stream);
  const DeviceGrid<float> db = relax::to_device(b, stream);
  relax::detail::DeviceLoopPlan plan;
  plan.stop = {1e-5, 0.0, 100};
  plan.check_every = 8;
  plan.barrier_timeout_ns = 50'000'000;  // 50 ms
  plan.absent_blocks = 1;                // the barrier waits for a block that does not exist
  relax::DeviceLoopWorkspace<float> workspace;
  const relax::Stencil5<float> s(1.0);
  auto run = [&] { return relax::Sweeper<TestType>::solve(s, du, scratch, db, plan, workspace, false, stream); };
  const char* kernel = std::is_same_v<TestType, OnDevice>      ? "persistent_sync_kernel"
                       : std::is_same_v<TestType, Streamed<8>> ? "persistent_stream_kernel"
                       : std::is_same_v<TestType, OnTiles<4>>  ? "persistent_tiled_kernel"
                                                               : "on_chip_kernel";
  CHECK_THROWS_AS(run(), relax::device_loop_error);
  CHECK_THROWS_WITH(run(), Catch::Contains(kernel) && Catch::Contains("did not complete"));
  if constexpr (std::is_same_v<TestType, OnChip<4>> || std::is_same_v<TestType, InRegisters<4>>) {
    // A tile that never raises its flag: its neighbours' waits time out, and every block leaves.
    plan.absent_blocks = 0;
    plan.silent_tile = 0;
    CHECK_THROWS_WITH(run(), Catch::Contains("on_chip_kernel") && Catch::Contains("did not complete"));
    plan.silent_tile = -1;
  }
  // The device and the workspace serve the next solve.
  plan.absent_blocks = 0;
  const relax::detail::DeviceLoopResult r = run();
  CHECK(r.checks >= 1);
  CHECK(r.reason != relax::StopReason::go_on);
  CHECK_FALSE(workspace.failed());
}

TEMPLATE_TEST_CASE("Ladder on the device: the host loop's run bit for bit, and its levels on the same rho",
                   "[device_loop][control][ladder]", OnChip<8>, InRegisters<8>, Streamed<8>) {
  const auto direction = GENERATE(relax::Ladder::Direction::ascending, relax::Ladder::Direction::descending);
  const relax::Ladder ladder(direction, 8);
  INFO((direction == relax::Ladder::Direction::ascending ? "ascending" : "descending"));
  // The depths change only the speed of exact sweeps: the run is the host loop's with the same
  // ladder (TemporalBlock<dynamic, ColumnStream>), and so Sync's.
  for (const auto& p : {relax::testing::diffusion_params(257, 10.0, relax::Source::gaussian, 3),
                        box(1000, 70, 0, 100.0, relax::Source::point, 3)}) {
    HostGrid<float> host_u, device_u;
    const auto want = relax::testing::gpu_diffusion<relax::Stencil5<float>, relax::TemporalBlock<relax::dynamic, relax::ColumnStream>>(
        p, host_u, ladder);
    const auto got = relax::testing::gpu_diffusion<relax::Stencil5<float>, TestType>(p, device_u, ladder);
    INFO("box " << p.extents().to_text());
    relax::testing::check_same_run(got, device_u, want, host_u);
  }
  // The level the device reached is the host ladder's on the same rho (the history's).
  const Extents e(300, 200);
  HostGrid<float> u(e), b(e);
  relax::testing::fill_random(u, 5, 0.0, 10.0);
  relax::testing::fill_random(b, 7);
  relax::Stream stream;
  DeviceGrid<float> du = relax::to_device(u, stream), scratch = relax::to_device(u, stream);
  const DeviceGrid<float> db = relax::to_device(b, stream);
  const double rhs = static_cast<double>(relax::reference::rhs_norm(relax::Stencil5<float>(10.0), u, b));
  relax::detail::DeviceLoopPlan plan;
  plan.stop = {1e-6, 0.0, 4000};
  plan.rhs_norm = rhs;
  plan.rhs_on_device = false;  // ‖b‖ from the host, for both loops
  plan.check_every = 8;
  plan.history_capacity = 500;
  plan.laddered = true;
  plan.ladder = ladder.rule();
  relax::DeviceLoopWorkspace<float> workspace(plan.history_capacity);
  const relax::detail::DeviceLoopResult r =
      relax::Sweeper<TestType>::solve(relax::Stencil5<float>(10.0), du, scratch, db, plan, workspace, true, stream);
  REQUIRE(r.checks >= 4);
  relax::Ladder host = ladder;
  host.begin_solve();
  for (std::int64_t c = 0; c < r.checks; ++c)
    host.observe({(c + 1) * 8, relax::StopCriterion::relative(workspace.history_norm(c), rhs)});
  CHECK(r.level == static_cast<int>(host.level()));
  CHECK(r.level > 0);
}

TEST_CASE("a ladder deeper than the device loop, or on DeviceLoop<Sync>, is refused", "[device_loop][validation][ladder]") {
  const Extents e(70, 50);
  HostGrid<float> b(e);
  relax::testing::fill_random(b, 3);
  relax::Ladder deep;
  deep.depths = {1, 2, 4, 16};
  relax::Solver<relax::Stencil5<float>, OnChip<8>, relax::Ladder> solver(e, relax::Stencil5<float>(1.0), deep);
  DeviceGrid<float> u(e);
  const DeviceGrid<float> db = relax::to_device(b, solver.stream());
  CHECK_THROWS_AS(solver.solve(u, db), relax::invalid_argument);
  CHECK_THROWS_WITH(solver.solve(u, db), Catch::Contains("Ladder::depths") && Catch::Contains("loop's D"));
  relax::detail::DeviceLoopPlan plan;
  plan.stop = {1e-5, 0.0, 100};
  plan.rhs_norm = 1.0;
  plan.check_every = 8;
  plan.laddered = true;
  relax::DeviceLoopWorkspace<float> workspace;
  relax::Stream stream;
  DeviceGrid<float> du(e), scratch(e);
  CHECK_THROWS_WITH(relax::Sweeper<OnDevice>::solve(relax::Stencil5<float>(1.0), du, scratch, db, plan, workspace, false, stream),
                    Catch::Contains("no depth for a ladder"));
}

TEST_CASE("the block-asynchronous device loop equals the launched BlockAsync's host loop, bit for bit",
          "[device_loop][diffusion][block_async]") {
  // (And so its host emulation: the launched strategy is tested against it in test_tiled.cu.)
  using S5 = relax::Stencil5<float>;
  using S7 = relax::Stencil7<float>;
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  for (double r : {1.0, 10.0, 100.0}) {
    for (std::int64_t n : {3, 70, 257, 1000})
      check_same_as_host_loop<S5, OnTiles<4>, relax::BlockAsync<4>>(relax::testing::diffusion_params(n, r, src, 3));
    check_same_as_host_loop<S5, OnTiles<4>, relax::BlockAsync<4>>(box(1000, 70, 0, r, src, 3));
    check_same_as_host_loop<S5, OnTiles<8>, relax::BlockAsync<8>>(box(33, 517, 0, r, src, 3));
    check_same_as_host_loop<S7, OnTiles<2, relax::Tile<32, 8, 4>>, relax::BlockAsync<2, relax::Tile<32, 8, 4>>>(
        box(33, 17, 9, r, src, 3));
  }
  // Checks every 5 sweeps at D = 4: passes of 4 and 1, as the launched strategy's launches.
  check_same_as_host_loop<S5, OnTiles<4>, relax::BlockAsync<4>>(relax::testing::diffusion_params(257, 10.0, src, 3), 5);
  check_same_as_host_loop<relax::Stencil5<double>, OnTiles<4>, relax::BlockAsync<4>>(
      relax::testing::diffusion_params(257, 10.0, src, 3));
  check_same_as_host_loop<S5, OnTiles<4>, relax::BlockAsync<4>>(relax::testing::diffusion_params(4099, 1.0, src, 1));
}

TEST_CASE("the block-asynchronous device loop on degenerate boxes and at the cap", "[device_loop][block_async][sanitize]") {
  relax::SolveOptions options;
  options.record_history = true;
  for (const Extents& e : {Extents(1, 1), Extents(1, 57), Extents(57, 1), Extents(2, 2), Extents(129, 3)})
    check_random_solve<OnTiles<4>, relax::Stencil5<float>, relax::BlockAsync<4>>(e, relax::Stencil5<float>(10.0), options, 8);
  for (const Extents& e : {Extents(1, 1, 64), Extents(33, 17, 5)})
    check_random_solve<OnTiles<3, relax::Tile<32, 8, 4>>, relax::Stencil7<float>, relax::BlockAsync<3, relax::Tile<32, 8, 4>>>(
        e, relax::Stencil7<float>(1.0), options, 3);
  options.max_sweeps = 37;
  options.tol = 1e-30;
  check_random_solve<OnTiles<4>, relax::Stencil5<float>, relax::BlockAsync<4>>(Extents(70, 50), relax::Stencil5<float>(100.0),
                                                                                options, 8);
}
