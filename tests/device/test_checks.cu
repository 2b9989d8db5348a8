// Overlapped convergence checks (relax::CheckMode::overlapped) against blocking ones: the same
// checks see the same ρ; a solve ends at the same check, with the batch launched ahead of it run
// on top (the final iterate is the blocking one advanced by `extra_sweeps` sweeps, bit for bit).
#include <catch2/catch.hpp>

#include "runs.hpp"

#include <relax/control/feedback.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/strategy/adaptive.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#include <algorithm>
#include <vector>

using relax::DeviceGrid;
using relax::HostGrid;

namespace {

template <class Strategy>
void check_overlapped_matches_blocking(const relax::DiffusionParams& p, std::int64_t max_sweeps) {
  INFO("N = " << p.n << ", r = " << p.r << ", max_sweeps " << max_sweeps);
  relax::SolveOptions opt;
  opt.max_sweeps = max_sweeps;
  opt.record_history = true;
  const relax::Stencil5<float> s(p.r);
  // The blocking solve stays on the device, to be advanced by the extra sweeps below.
  relax::Solver<relax::Stencil5<float>, Strategy> blocking(p.n, s, relax::Fixed(8), opt);
  relax::DiffusionState<float> bs(p, blocking.stream());
  bs.form_rhs(blocking.stream());
  const relax::SolveReport want = blocking.solve(bs.u(), bs.b());

  opt.checks = relax::CheckMode::overlapped;
  relax::Solver<relax::Stencil5<float>, Strategy> overlapped(p.n, s, relax::Fixed(8), opt);
  relax::DiffusionState<float> os(p, overlapped.stream());
  os.form_rhs(overlapped.stream());
  const relax::SolveReport got = overlapped.solve(os.u(), os.b());

  CHECK(got.status == want.status);
  CHECK(got.checks == want.checks);
  CHECK(got.rho == want.rho);
  CHECK(got.sweeps - got.extra_sweeps == want.sweeps);
  CHECK((got.extra_sweeps == 0 || got.extra_sweeps == 8 || got.status == relax::SolveStatus::sweep_cap));
  CHECK(got.sweeps <= max_sweeps);
  REQUIRE(got.history.size() == want.history.size());
  for (std::size_t k = 0; k < got.history.size(); ++k) {
    CHECK(got.history[k].sweeps == want.history[k].sweeps);
    CHECK(got.history[k].rho == want.history[k].rho);
  }
  // The overlapped iterate is the blocking one after the extra sweeps.
  DeviceGrid<float> scratch = relax::to_device(relax::to_host(bs.u(), blocking.stream()), blocking.stream());
  if (got.extra_sweeps > 0)
    relax::Sweeper<relax::Sync>::run(s, bs.u(), scratch, bs.b(), {got.extra_sweeps}, blocking.stream());
  const HostGrid<float> want_u = relax::to_host(bs.u(), blocking.stream());
  const HostGrid<float> got_u = relax::to_host(os.u(), overlapped.stream());
  INFO("extra sweeps " << got.extra_sweeps << ", differing points "
                       << relax::testing::count_differences(got_u, want_u));
  CHECK(relax::testing::same_bits(got_u, want_u));
}

}  // namespace

TEST_CASE("overlapped checks see blocking's residuals and end at the same check", "[checks][sanitize]") {
  const std::int64_t n = GENERATE(70, 257);
  const double r = GENERATE(1.0, 100.0);
  const auto p = relax::testing::diffusion_params(n, r, relax::Source::gaussian, 1);
  check_overlapped_matches_blocking<relax::Sync>(p, 1'000'000);
  check_overlapped_matches_blocking<relax::TemporalBlock<8, relax::ColumnStream>>(p, 1'000'000);
}

TEST_CASE("overlapped checks stop at the sweep cap without passing it", "[checks][sanitize]") {
  const auto p = relax::testing::diffusion_params(70, 100.0, relax::Source::gaussian, 1);
  check_overlapped_matches_blocking<relax::Sync>(p, 20);  // checks after 8, 16 and 20 sweeps
  check_overlapped_matches_blocking<relax::Sync>(p, 3);
}

TEST_CASE("Feedback on TemporalBlock<dynamic, ColumnStream> with overlapped checks solves the run",
          "[checks][control]") {
  const std::int64_t n = GENERATE(70, 512);
  const double r = GENERATE(1.0, 100.0);
  const auto p = relax::testing::diffusion_params(n, r, relax::Source::point);
  relax::SolveOptions opt;
  opt.checks = relax::CheckMode::overlapped;
  using Exact = relax::TemporalBlock<relax::dynamic, relax::ColumnStream>;
  relax::Solver<relax::Stencil5<float>, Exact, relax::Feedback> solver(p.n, relax::Stencil5<float>(p.r), {}, opt);
  relax::DiffusionState<float> state(p, solver.stream());
  const auto run = relax::run_diffusion(solver, state);
  CHECK(run.converged());
  for (const auto& s : run.steps) CHECK(s.rho < opt.tol);
}

TEST_CASE("Feedback on Adaptive solves the run, blocking and overlapped, in either family",
          "[checks][control]") {
  const std::int64_t n = GENERATE(70, 512);
  const double r = GENERATE(1.0, 10.0);
  const auto mode = GENERATE(relax::CheckMode::blocking, relax::CheckMode::overlapped);
  INFO("N = " << n << ", r = " << r << (mode == relax::CheckMode::overlapped ? ", overlapped" : ", blocking"));
  const auto p = relax::testing::diffusion_params(n, r, relax::Source::gaussian);
  relax::SolveOptions opt;
  opt.checks = mode;
  // Trials even where a solve takes few checks (r = 1), so that both families run on the GPU
  // (and not the on-chip device loop, which these grids fit: the next test).
  relax::Feedback feedback;
  feedback.trial_checks = 0;
  feedback.device_loop = false;
  relax::Solver<relax::Stencil5<float>, relax::Adaptive, relax::Feedback> solver(
      p.n, relax::Stencil5<float>(p.r), feedback, opt);
  // Declined, the loop is not offered (no workspace, no kernels loaded) and no solve runs there.
  CHECK(solver.device_loop() == relax::AutoLoop::none);
  CHECK_FALSE(solver.offers_on_chip());
  relax::DiffusionState<float> state(p, solver.stream());
  const auto run = relax::run_diffusion(solver, state, [&](int, const relax::SolveReport&) {
    CHECK_FALSE(solver.last_solve_in_device_loop());
  });
  REQUIRE(run.steps.size() == static_cast<std::size_t>(p.steps));
  CHECK(run.converged());
  for (const auto& s : run.steps) CHECK(s.rho < opt.tol);
  // The first solve measured the exact family on the GPU's clock (D = 1 and 2 always; higher
  // depths while the doublings held); the grids fit in L2, so the third opened a trial of
  // BlockAsync<2> with a probe, whose speed is measured whether or not the trial went on.
  const relax::Feedback& f = solver.controller();
  CHECK(f.speed(1) > 0.0);
  CHECK(f.speed(2) > 0.0);
  CHECK(f.async_speed(2) > 0.0);
  // The last iterate solves the last step's system, by the reference backend's residual (with
  // overlapped checks the batch queued ahead of the last check ran on top of it, unchecked).
  const HostGrid<float> u = relax::to_host(state.u(), solver.stream());
  const HostGrid<float> b = relax::to_host(state.b(), solver.stream());
  const relax::Stencil5<float> s(p.r);
  const double rho = static_cast<double>(relax::reference::residual_norm(s, u, b)) /
                     static_cast<double>(relax::reference::rhs_norm(s, u, b));
  CHECK(rho < (mode == relax::CheckMode::blocking ? 1.001 : 10.0) * opt.tol);
}

TEST_CASE("Feedback on Adaptive tries the device loop offered on the grid", "[checks][control][device_loop]") {
  const std::int64_t n = GENERATE(70, 512, 1501);
  const double r = GENERATE(1.0, 10.0);
  INFO("N = " << n << ", r = " << r);
  const auto p = relax::testing::diffusion_params(n, r, relax::Source::gaussian);
  const relax::Stencil5<float> stencil(p.r);
  relax::Solver<relax::Stencil5<float>, relax::Adaptive, relax::Feedback> solver(p.n, stencil);
  // On chip where the grid fits; beyond it (1501² on an H200) the streamed loop at the depth of
  // Auto's tree (D = 4 within 8 L2s of working set).
  const relax::AutoLoop offered = relax::adaptive_device_loop<relax::Stencil5<float>>(p.extents());
  if (relax::current_sm_count() == 132)  // an H200
    CHECK(offered == (n == 1501 ? relax::AutoLoop::streamed4 : relax::AutoLoop::on_chip));
  if (offered == relax::AutoLoop::none) {  // no cooperative launch: nothing to offer
    CHECK_FALSE(solver.offers_on_chip());
    return;
  }
  CHECK(solver.device_loop() == offered);
  CHECK(solver.offers_on_chip() == (offered == relax::AutoLoop::on_chip));
  relax::DiffusionState<float> state(p, solver.stream());
  std::vector<bool> on_chip;  // the steps run in the device loop offered
  const auto run = relax::run_diffusion(solver, state, [&](int, const relax::SolveReport&) {
    on_chip.push_back(solver.last_solve_in_device_loop());
    CHECK(solver.last_solve_on_chip() == (on_chip.back() && offered == relax::AutoLoop::on_chip));
  });
  REQUIRE(run.steps.size() == static_cast<std::size_t>(p.steps));
  CHECK(run.converged());
  for (const auto& s : run.steps) CHECK(s.rho < relax::SolveOptions{}.tol);
  const relax::Feedback& f = solver.controller();
  // The first solve climbs the exact family (a short solve may need a second one to finish the
  // climb); the next solve is the device loop's trial.
  const auto trial = std::find(on_chip.begin(), on_chip.end(), true);
  REQUIRE(trial != on_chip.end());
  CHECK(trial != on_chip.begin());
  CHECK(f.device_ms_per_sweep() > 0.0);
  // Chosen (on the H200 the on-chip loop is 2-7x faster than any launch-based strategy here, the
  // streamed one up to 1.5x), it ran every solve after the decision (after the trial, or after a reference solve that decided).
  if (f.device_loop_chosen()) {
    const auto after = trial + 1;
    const auto from = after != on_chip.end() && !*after ? after + 1 : after;
    for (auto k = from; k < on_chip.end(); ++k) CHECK(*k);
  }
  // The last iterate solves the last step's system, by the reference backend's residual.
  const HostGrid<float> u = relax::to_host(state.u(), solver.stream());
  const HostGrid<float> b = relax::to_host(state.b(), solver.stream());
  const relax::Stencil5<float> s(p.r);
  const double rho = static_cast<double>(relax::reference::residual_norm(s, u, b)) /
                     static_cast<double>(relax::reference::rhs_norm(s, u, b));
  CHECK(rho < 1.001 * relax::SolveOptions{}.tol);
}

namespace {
// A controller at a fixed D that asks the solver to time every other batch, and keeps what each
// check reports.
struct AlternateTiming {
  int d = 2;
  int queued = 0;
  std::vector<relax::CheckSample> samples;
  void validate() const {}
  void begin_solve() {}
  std::int64_t sweeps_before_check() const { return 8; }
  int depth() const { return d; }
  bool times_batch() const { return queued % 2 == 0; }
  void launched(const relax::BatchInfo&) { ++queued; }
  void observe(const relax::CheckSample& s) { samples.push_back(s); }
};
}  // namespace

TEST_CASE("the solver times the batches a controller asks it to time, and only those",
          "[checks][control]") {
  const auto p = relax::testing::diffusion_params(257, 10.0, relax::Source::gaussian, 1);
  const relax::Stencil5<float> s(p.r);
  using Exact = relax::TemporalBlock<relax::dynamic, relax::ColumnStream>;
  relax::Solver<relax::Stencil5<float>, Exact, AlternateTiming> solver(p.n, s);
  relax::DiffusionState<float> state(p, solver.stream());
  state.form_rhs(solver.stream());
  const relax::SolveReport got = solver.solve(state.u(), state.b());
  REQUIRE(got.status == relax::SolveStatus::converged);
  const auto& samples = solver.controller().samples;
  REQUIRE(samples.size() == static_cast<std::size_t>(got.checks));
  REQUIRE(samples.size() >= 4);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    INFO("check " << k);
    CHECK(samples[k].depth == 2);
    if (k % 2 == 0) {  // timed: the whole batch, and its steady part after the first launch of D
      CHECK(samples[k].batch_ms > 0.0);
      CHECK(samples[k].steady_sweeps == 6);
      CHECK(samples[k].steady_ms > 0.0);
      CHECK(samples[k].steady_ms <= samples[k].batch_ms);
    } else {
      CHECK(samples[k].batch_ms == 0.0);
      CHECK(samples[k].steady_sweeps == 0);
      CHECK(samples[k].steady_ms == 0.0);
    }
  }
  // Timed or not, the batches are the same sweeps: Sync's iterate, bit for bit.
  relax::Solver<relax::Stencil5<float>, relax::Sync> sync(p.n, s);
  relax::DiffusionState<float> want(p, sync.stream());
  want.form_rhs(sync.stream());
  const relax::SolveReport base = sync.solve(want.u(), want.b());
  CHECK(got.sweeps == base.sweeps);
  CHECK(got.rho == base.rho);
  const HostGrid<float> got_u = relax::to_host(state.u(), solver.stream());
  const HostGrid<float> want_u = relax::to_host(want.u(), sync.stream());
  INFO("differing points " << relax::testing::count_differences(got_u, want_u));
  CHECK(relax::testing::same_bits(got_u, want_u));
}

TEST_CASE("the depth-dynamic strategies load their kernels before a controller times them",
          "[checks][control]") {
  // The solver preloads only where the sweeper says how (detail::has_preload): if this detection
  // failed, Feedback would time a lazy module load as the first batch at each depth.
  using relax::detail::has_preload;
  using S = relax::Stencil5<float>;
  STATIC_REQUIRE(has_preload<relax::Sweeper<relax::TemporalBlock<relax::dynamic, relax::ColumnStream>>, S, float>::value);
  STATIC_REQUIRE(has_preload<relax::Sweeper<relax::TemporalBlock<relax::dynamic>>, S, float>::value);
  STATIC_REQUIRE(has_preload<relax::Sweeper<relax::BlockAsync<relax::dynamic>>, S, float>::value);
  STATIC_REQUIRE(has_preload<relax::Sweeper<relax::Adaptive>, S, float>::value);
  STATIC_REQUIRE_FALSE(has_preload<relax::Sweeper<relax::Sync>, S, float>::value);
  relax::Sweeper<relax::TemporalBlock<relax::dynamic, relax::ColumnStream>>::preload<S, float>();
  relax::Sweeper<relax::BlockAsync<relax::dynamic>>::preload<S, float>();
  CHECK(cudaGetLastError() == cudaSuccess);
}
