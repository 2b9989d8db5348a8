// Controllers driven by synthetic residual traces (latching, no oscillation, settling windows,
// the fallback to synchronous sweeps), and by real solves of the reference backend (the stop on
// ρ < tol and the sweep cap).
#include <catch2/catch.hpp>

#include <relax/control/feedback.hpp>
#include <relax/control/fixed.hpp>
#include <relax/control/ladder.hpp>
#include <relax/reference/diffusion.hpp>
#include <relax/reference/tiled.hpp>

#include <cmath>
#include <map>
#include <vector>

using relax::CheckSample;

namespace {

// Feeds ρ values (one check per millisecond) and returns the depth after each check.
template <class C>
std::vector<int> depths_for(C& c, const std::vector<double>& rhos) {
  std::vector<int> out;
  std::int64_t sweeps = 0;
  for (double rho : rhos) {
    sweeps += c.sweeps_before_check();
    c.observe({sweeps, rho, 1.0});
    out.push_back(c.depth());
  }
  return out;
}

// A synthetic solve in which ρ falls at `rate_at[D]` per millisecond at depth D, and the first
// check after each change of D sees a bump (ρ rises 10x) that a controller must not act on.
std::vector<int> feedback_trace(relax::Feedback& c, std::map<int, double> rate_at, int checks,
                                double bump = 10.0) {
  c.begin_solve();
  std::vector<int> depths;
  double rho = 1.0;
  int last = c.depth();
  bool bumped = false;
  for (int k = 0; k < checks; ++k) {
    const int d = c.depth();
    rho *= std::exp(-rate_at.at(d));
    if (d != last && !bumped) {
      rho *= bump;
      bumped = true;
    } else {
      bumped = false;
      last = d;
    }
    c.observe({8 * (k + 1), rho, 1.0});
    depths.push_back(c.depth());
  }
  return depths;
}

int changes(const std::vector<int>& depths, int start) {
  int n = 0;
  for (int d : depths) {
    n += d != start;
    start = d;
  }
  return n;
}

}  // namespace

TEST_CASE("Ladder ascending steps D up as rho crosses 1e-2, 1e-3, 1e-4, latched", "[control]") {
  relax::Ladder c(relax::Ladder::Direction::ascending);
  c.begin_solve();
  CHECK(c.depth() == 1);
  CHECK(depths_for(c, {0.5, 5e-3, 2e-2, 5e-4, 3e-3, 5e-5, 1.0}) ==
        std::vector<int>{1, 2, 2, 4, 4, 8, 8});  // bumps back above a threshold change nothing
  c.begin_solve();  // the next time step starts over
  CHECK(c.depth() == 1);
  CHECK(depths_for(c, {1e-6}) == std::vector<int>{8});  // several thresholds at once
}

TEST_CASE("Ladder descending steps D down and never oscillates around a threshold", "[control]") {
  relax::Ladder c(relax::Ladder::Direction::descending);
  c.begin_solve();
  CHECK(c.depth() == 8);
  std::vector<double> around;
  for (int k = 0; k < 40; ++k) around.push_back(k % 2 ? 0.9e-3 : 1.1e-3);
  const auto d = depths_for(c, around);
  CHECK(d.front() == 4);  // 1.1e-3 is below 1e-2: one step down
  CHECK(d[1] == 2);       // 0.9e-3 is below 1e-3: two steps down
  CHECK(changes(d, 8) == 2);
  CHECK(d.back() == 2);   // rising back above 1e-3 twenty times changes nothing
}

TEST_CASE("Ladder and Feedback reject bad settings", "[control][validation]") {
  relax::Ladder l;
  l.thresholds = {1e-2, 1e-2, 1e-4};
  CHECK_THROWS_WITH(l.validate(), Catch::Contains("thresholds"));
  l = {};
  l.check_interval = 0;
  CHECK_THROWS_WITH(l.validate(), Catch::Contains("check_interval"));
  relax::Feedback f;
  f.max_depth = 6;
  CHECK_THROWS_WITH(f.validate(), Catch::Contains("max_depth"));
  f.max_depth = 2048;  // a power of two, but past what any strategy can run
  CHECK_THROWS_WITH(f.validate(), Catch::Contains("max_depth"));
  f = {};
  f.drop = 1.5;
  CHECK_THROWS_WITH(f.validate(), Catch::Contains("drop"));
  STATIC_REQUIRE(relax::chooses_depth_v<relax::Ladder>);
  STATIC_REQUIRE(relax::chooses_depth_v<relax::Feedback>);
  STATIC_REQUIRE_FALSE(relax::chooses_depth_v<relax::Fixed>);
  STATIC_REQUIRE(relax::is_controller_v<relax::Ladder>);
  STATIC_REQUIRE(relax::is_controller_v<relax::Feedback>);
}

TEST_CASE("Feedback climbs while the rate holds and returns to the best depth", "[control]") {
  relax::Feedback c;
  // Faster per millisecond up to D = 4, slower at 8.
  const auto d = feedback_trace(c, {{1, 0.10}, {2, 0.15}, {4, 0.18}, {8, 0.12}}, 30);
  CHECK(d.back() == 4);
  CHECK(c.changes() == 4);  // 1 -> 2 -> 4 -> 8 -> 4, then it holds
  CHECK_FALSE(c.synchronous());
}

TEST_CASE("Feedback ignores the residual bump after a change (settling window)", "[control]") {
  relax::Feedback settled;
  // With the settling window the bump after each change is ignored and D reaches 8.
  feedback_trace(settled, {{1, 0.10}, {2, 0.12}, {4, 0.14}, {8, 0.16}}, 30);
  CHECK(settled.depth() == 8);
  relax::Feedback hasty;
  hasty.settle_checks = 0;
  // Without it, the bump reads as a collapse of the rate and the controller retreats at once.
  feedback_trace(hasty, {{1, 0.10}, {2, 0.12}, {4, 0.14}, {8, 0.16}}, 30);
  CHECK(hasty.depth() == 1);
}

TEST_CASE("Feedback falls back to synchronous sweeps when D = 2 does not pay", "[control]") {
  relax::Feedback c;
  const auto d = feedback_trace(c, {{1, 0.10}, {2, 0.07}, {4, 0.2}, {8, 0.3}}, 40);
  CHECK(c.synchronous());
  CHECK(d.back() == 1);
  CHECK(c.changes() == 2);  // 1 -> 2 -> 1, latched for the rest of the solve
  c.begin_solve();
  CHECK_FALSE(c.synchronous());  // a new solve tries D = 2 again
  CHECK(c.depth() == 1);
}

TEST_CASE("Feedback carries the depth into the next solve, or starts over without carry_over", "[control]") {
  relax::Feedback c;
  feedback_trace(c, {{1, 0.10}, {2, 0.15}, {4, 0.18}, {8, 0.12}}, 30);
  REQUIRE(c.depth() == 4);
  // The next solve starts at 4 and probes 8 once; 8 does not pay, so it returns to 4 and holds.
  const auto d = feedback_trace(c, {{1, 0.10}, {2, 0.15}, {4, 0.18}, {8, 0.12}}, 30);
  CHECK(d[0] == 4);  // the first check of a solve has no rate yet
  CHECK(d[1] == 4);  // a window is two checks
  CHECK(d[2] == 8);
  CHECK(d.back() == 4);
  CHECK(c.changes() == 2);
  // At the maximum depth a carried solve just holds.
  relax::Feedback top;
  feedback_trace(top, {{1, 0.1}, {2, 0.2}, {4, 0.3}, {8, 0.4}}, 30);
  REQUIRE(top.depth() == 8);
  CHECK(feedback_trace(top, {{1, 0.1}, {2, 0.2}, {4, 0.3}, {8, 0.4}}, 10) == std::vector<int>(10, 8));
  CHECK(top.changes() == 0);
  top.carry_over = false;
  top.begin_solve();
  CHECK(top.depth() == 1);
}

TEST_CASE("Feedback halves D on a drop while holding", "[control]") {
  relax::Feedback c;
  c.max_depth = 4;
  c.begin_solve();
  double rho = 1.0;
  auto check = [&](double rate, int times) {
    for (int k = 0; k < times; ++k) {
      rho *= std::exp(-rate);
      c.observe({0, rho, 1.0});
    }
  };
  check(0.1, 1);   // the first check of a solve: no rate yet
  check(0.1, 2);   // a window at D = 1 -> try 2
  REQUIRE(c.depth() == 2);
  check(0.05, 1);  // settling
  check(0.2, 2);   // holds -> try 4
  REQUIRE(c.depth() == 4);
  check(0.05, 1);  // settling
  check(0.25, 2);  // at the maximum: hold here, rate 0.25
  check(0.24, 2);  // within 10 %
  CHECK(c.depth() == 4);
  check(0.2, 1);   // half a window: no decision yet
  CHECK(c.depth() == 4);
  check(0.2, 1);   // a window 20 % below: halve
  CHECK(c.depth() == 2);
}

TEST_CASE("Feedback compares sweeps per millisecond for exact strategies", "[control]") {
  // ρ falls fast in the first checks of a solve and slower later, whatever D (the transient of
  // Jacobi); the depths differ only in time per check: 8 sweeps take 1.0, 0.6, 0.5, 0.6 ms.
  const std::map<int, double> ms_at{{1, 1.0}, {2, 0.6}, {4, 0.5}, {8, 0.6}};
  auto run = [&](bool exact) {
    relax::Feedback c;
    c.begin_solve();
    std::vector<int> depths;
    double rho = 1.0;
    for (int k = 0; k < 40; ++k) {
      const double per_sweep = 0.5 / (1.0 + k);  // convergence per check, falling with k
      rho *= std::exp(-per_sweep);
      c.observe({8 * (k + 1), rho, ms_at.at(c.depth()), exact});
      depths.push_back(c.depth());
    }
    return std::make_pair(depths, c.synchronous());
  };
  const auto [exact_depths, exact_sync] = run(true);
  CHECK(exact_depths.back() == 4);  // 8 is 17 % slower than 4: back to 4
  CHECK_FALSE(exact_sync);
  // Measured as ρ per millisecond, the falling rate reads as "D = 2 does not pay".
  const auto [rate_depths, rate_sync] = run(false);
  CHECK(rate_depths.back() == 1);
  CHECK(rate_sync);
}

TEST_CASE("controlled reference solves stop on rho < tol and at the sweep cap", "[control][reference]") {
  relax::DiffusionParams p;
  p.n = 70;
  p.r = 10.0;
  p.steps = 3;
  const relax::reference::TiledSchedule block_async{32, 8, 1, false};
  for (auto dir : {relax::Ladder::Direction::ascending, relax::Ladder::Direction::descending}) {
    const auto run = relax::reference::run_diffusion<float>(
        p, relax::Ladder(dir), {}, relax::reference::Exec::openmp(), nullptr, {}, block_async);
    CHECK(run.converged());
    for (const auto& s : run.steps) CHECK(s.rho < 1e-5);
  }
  const auto fb = relax::reference::run_diffusion<float>(p, relax::Feedback{}, {},
                                                         relax::reference::Exec::openmp(), nullptr,
                                                         {}, block_async);
  CHECK(fb.converged());
  relax::SolveOptions capped;
  capped.max_sweeps = 20;
  const auto cap = relax::reference::run_diffusion<float>(
      p, relax::Ladder(), capped, relax::reference::Exec::serial(), nullptr, {}, block_async);
  REQUIRE(cap.steps.size() == 1);
  CHECK(cap.steps[0].status == relax::SolveStatus::sweep_cap);
  CHECK(cap.steps[0].sweeps == 20);
}

TEST_CASE("Feedback skips checks of sweeps that ran before its last change of D", "[control]") {
  relax::Feedback c;
  c.begin_solve();
  auto check = [&](std::int64_t sweeps, double ms, int ran_at) {
    c.observe({sweeps, 1.0, ms, true, ran_at});
    return c.depth();
  };
  CHECK(check(8, 1.0, 1) == 2);   // 8 sweeps/ms at D = 1 (exact: the first check counts): try 2
  // An overlapped check: this batch was queued at D = 1 before the change, and was slow. Read as
  // D = 2 it would say "2 does not pay" and fall back to synchronous sweeps.
  CHECK(check(16, 5.0, 1) == 2);
  CHECK_FALSE(c.synchronous());
  CHECK(check(24, 0.5, 2) == 4);  // 16 sweeps/ms at D = 2: try 4
  CHECK(check(32, 0.53, 4) == 2); // 6% slower than D = 2: not noise, so back to 2 and hold
  CHECK_FALSE(c.synchronous());
}

TEST_CASE("Feedback scores the GPU time of the batches where the solver measures it", "[control]") {
  // In L2 a check interval is mostly the host round trip: every depth shows about the same 1 ms
  // between checks, while the sweeps themselves take 0.40, 0.30, 0.33 and 0.50 ms at D = 1..8.
  const std::map<int, double> batch_at{{1, 0.40}, {2, 0.30}, {4, 0.33}, {8, 0.50}};
  auto run = [&](bool measured) {
    relax::Feedback c;
    c.begin_solve();
    for (int k = 0; k < 20; ++k) {
      const int d = c.depth();
      c.observe({8 * (k + 1), 1.0, 1.0, true, d, measured ? batch_at.at(d) : 0.0});
    }
    return c.depth();
  };
  CHECK(run(true) == 2);   // 4 is 10% slower than 2: back to 2
  CHECK(run(false) == 8);  // host time alone cannot tell the depths apart and drifts to the top
}

TEST_CASE("Feedback keeps the speed of each depth of an exact strategy across the solves of a run",
          "[control]") {
  // Batches of 8 sweeps take 0.40, 0.30, 0.36 and 0.50 ms at D = 1..8: D = 2 is fastest.
  const std::map<int, double> batch_at{{1, 0.40}, {2, 0.30}, {4, 0.36}, {8, 0.50}};
  auto solve = [&](relax::Feedback& c, int checks) {
    c.begin_solve();
    std::vector<int> depths;
    for (int k = 0; k < checks; ++k) {
      const int d = c.depth();
      c.observe({8 * (k + 1), 1.0, 1.0, true, d, batch_at.at(d)});
      depths.push_back(c.depth());
    }
    return depths;
  };
  relax::Feedback c;
  // The first solve (five checks, as at r = 1) probes 1, 2 and 4 once each and comes back to 2.
  CHECK(solve(c, 5) == std::vector<int>{2, 4, 2, 2, 2});
  CHECK(c.changes() == 3);
  CHECK(c.speed(1) == Approx(8 / 0.40));
  CHECK(c.speed(2) == Approx(8 / 0.30));
  CHECK(c.speed(4) == Approx(8 / 0.36));
  CHECK(c.speed(8) == 0.0);  // never worth probing: 4 already lost to 2
  // Every later solve of the run starts at 2 and probes nothing.
  for (int step = 0; step < 9; ++step) {
    CHECK(solve(c, 5) == std::vector<int>(5, 2));
    CHECK(c.changes() == 0);
  }
  // Without carry_over each solve starts over at D = 1 with nothing known.
  c.carry_over = false;
  CHECK(solve(c, 5) == std::vector<int>{2, 4, 2, 2, 2});
  CHECK(c.changes() == 3);

  // D = 2 slower than D = 1: the run falls back to synchronous sweeps and stays there.
  const std::map<int, double> slow_at{{1, 0.30}, {2, 0.40}, {4, 0.20}, {8, 0.20}};
  relax::Feedback fallback;
  auto solve_slow = [&](int checks) {
    fallback.begin_solve();
    for (int k = 0; k < checks; ++k) {
      const int d = fallback.depth();
      fallback.observe({8 * (k + 1), 1.0, 1.0, true, d, slow_at.at(d)});
    }
  };
  solve_slow(5);
  CHECK(fallback.depth() == 1);
  CHECK(fallback.synchronous());
  solve_slow(5);
  CHECK(fallback.changes() == 0);
  CHECK(fallback.synchronous());
}

TEST_CASE("Feedback moves to a depth measured faster once the mean at the held depth falls",
          "[control]") {
  relax::Feedback c;
  c.max_depth = 4;
  c.begin_solve();
  std::int64_t sweeps = 0;
  auto check = [&](double ms) {
    sweeps += 8;
    c.observe({sweeps, 1.0, 1.0, true, c.depth(), ms});
    return c.depth();
  };
  CHECK(check(0.40) == 2);  // 20 sweeps/ms at D = 1
  CHECK(check(0.30) == 4);  // 26.7 at D = 2: holds, try 4
  CHECK(check(0.29) == 4);  // 27.6 at D = 4: the top, hold
  CHECK(check(0.31) == 4);  // mean 26.7 at D = 4: within 2 % of D = 2
  CHECK(check(0.40) == 2);  // mean 24.0 at D = 4: D = 2 is 11 % faster
}
