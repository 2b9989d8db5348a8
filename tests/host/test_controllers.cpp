// Controllers driven by synthetic residual traces (latching, no oscillation, settling windows,
// the fallback to synchronous sweeps), and by real solves of the reference backend (the stop on
// ρ < tol and the sweep cap).
#include <catch2/catch.hpp>

#include <relax/control/feedback.hpp>
#include <relax/control/fixed.hpp>
#include <relax/control/ladder.hpp>
#include <relax/cpu/diffusion.hpp>
#include <relax/reference/tiled.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <ostream>
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
  f = {};
  f.timed_batches = 0;
  CHECK_THROWS_WITH(f.validate(), Catch::Contains("timed_batches"));
  f = {};
  f.trial_checks = -1;
  CHECK_THROWS_WITH(f.validate(), Catch::Contains("trial_checks"));
  f = {};
  f.recheck = 1.0;
  CHECK_THROWS_WITH(f.validate(), Catch::Contains("recheck"));
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

TEST_CASE("Feedback judges windows where rho grew (negative scores) with the same slack", "[control]") {
  // ρ grows at the same rate whatever D: no doubling is a loss, so it climbs to the top and holds.
  relax::Feedback equal;
  const auto d = feedback_trace(equal, {{1, -0.1}, {2, -0.1}, {4, -0.1}, {8, -0.1}}, 40, 1.0);
  CHECK(d.back() == 8);
  CHECK_FALSE(equal.synchronous());
  CHECK(equal.changes() == 3);  // 1 -> 2 -> 4 -> 8, then equal windows hold there
  // 1% slower growth at D = 2 (a better score) is not a loss either.
  relax::Feedback better;
  feedback_trace(better, {{1, -0.1}, {2, -0.099}, {4, -0.099}, {8, -0.099}}, 40, 1.0);
  CHECK_FALSE(better.synchronous());
  CHECK(better.depth() == 8);
  // ρ growing twice as fast at D = 2 is: back to synchronous sweeps, as for positive scores.
  relax::Feedback worse;
  feedback_trace(worse, {{1, -0.1}, {2, -0.2}, {4, -0.2}, {8, -0.2}}, 40, 1.0);
  CHECK(worse.synchronous());
  CHECK(worse.depth() == 1);
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

namespace {

// A GPU-like run of an exact strategy at the speeds `rate_at` (sweeps per millisecond), batch by
// batch as the solver drives a controller: each batch is reported when queued (`launched`) and
// observed when its check arrives, `lag` batches later (0: blocking checks; 1: overlapped). The
// steady part of a batch (after its first launch of D sweeps) is timed at the depth's rate where
// the controller asks for timing (`times_batch`). Returns the depth and size of every batch queued.
std::vector<std::pair<int, std::int64_t>> exact_batches(relax::Feedback& c, const std::map<int, double>& rate_at,
                                                        int batches, int lag,
                                                        relax::SolveContext context = {true, false}) {
  c.begin_solve(context);
  std::vector<std::pair<int, std::int64_t>> queued;
  std::vector<std::pair<relax::BatchInfo, bool>> in_flight;  // and whether it is timed
  std::int64_t sweeps = 0;
  auto observe_oldest = [&] {
    const auto [b, timed] = in_flight.front();
    in_flight.erase(in_flight.begin());
    sweeps += b.sweeps;
    const std::int64_t steady = timed ? b.sweeps - std::min<std::int64_t>(b.sweeps, b.depth) : 0;
    c.observe({sweeps, 1.0, 1.0, true, b.depth, timed ? 0.05 + b.sweeps / rate_at.at(b.depth) : 0.0,
               steady, steady / rate_at.at(b.depth)});
  };
  for (int k = 0; k < batches; ++k) {
    const relax::BatchInfo b{c.sweeps_before_check(), c.depth(), true};
    queued.emplace_back(b.depth, b.sweeps);
    in_flight.emplace_back(b, c.times_batch());
    c.launched(b);
    if (static_cast<int>(in_flight.size()) > lag) observe_oldest();
  }
  return queued;
}

using Batches = std::vector<std::pair<int, std::int64_t>>;

}  // namespace

TEST_CASE("Feedback probes an unmeasured exact depth with two launches, timed after the first",
          "[control]") {
  relax::Feedback c;
  c.begin_solve(relax::SolveContext{true, false});
  CHECK(c.sweeps_before_check() == 2);  // D = 1: two launches of one sweep, not M = 8
  // The whole batch took 0.5 ms, the wait for the first launch included; its second launch 0.1.
  c.observe({2, 1.0, 1.0, true, 1, 0.5, 1, 0.1});
  CHECK(c.speed(1) == Approx(10.0));
  CHECK(c.depth() == 2);
  CHECK(c.sweeps_before_check() == 4);
  // A batch of one launch has no steady part: it changes nothing in the record.
  c.observe({6, 1.0, 1.0, true, 2, 0.3, 0, 0.0});
  CHECK(c.speed(2) == 0.0);
  CHECK(c.sweeps_before_check() == 4);
  c.observe({10, 1.0, 1.0, true, 2, 0.3, 2, 0.08});  // 25 sweeps/ms at D = 2: holds
  CHECK(c.depth() == 4);
  // Without the context (the reference backend, or a caller of begin_solve()) the first batch is
  // M: the controller learns from the first check whether the strategy is exact.
  relax::Feedback plain;
  plain.begin_solve();
  CHECK(plain.sweeps_before_check() == 8);
}

TEST_CASE("Feedback asks the solver to time a depth's first batches only", "[control]") {
  relax::Feedback c;
  c.max_depth = 2;
  c.begin_solve(relax::SolveContext{true, false});
  CHECK(c.times_batch());  // the probe at D = 1
  c.observe({2, 1.0, 1.0, true, 1, 0.2, 1, 0.1});  // 10 sweeps/ms
  REQUIRE(c.depth() == 2);
  CHECK(c.times_batch());  // the probe at D = 2
  std::int64_t sweeps = 6;
  c.observe({sweeps, 1.0, 1.0, true, 2, 0.3, 2, 0.1});  // 20 sweeps/ms: holds, and D = 2 is the top
  REQUIRE(c.depth() == 2);
  // The probe and three batches of M are timed (timed_batches = 4), ...
  for (int k = 0; k < 3; ++k) {
    CHECK(c.times_batch());
    sweeps += 8;
    c.observe({sweeps, 1.0, 1.0, true, 2, 0.5, 6, 0.25});  // 24 sweeps/ms
  }
  CHECK(c.speed(2) == Approx(20.0 / 0.85));
  // ... and no later batch; one the solver did not time leaves the record as it was.
  CHECK_FALSE(c.times_batch());
  sweeps += 8;
  c.observe({sweeps, 1.0, 1.0, true, 2, 0.0, 0, 0.0});
  CHECK(c.speed(2) == Approx(20.0 / 0.85));
  CHECK_FALSE(c.times_batch());
  // The record is kept across solves (carry_over): nothing to time in the next solve either.
  c.begin_solve(relax::SolveContext{true, false});
  CHECK(c.depth() == 2);
  CHECK_FALSE(c.times_batch());
  // A batch of one launch (M = D) has no steady part: only its probe is timed.
  relax::Feedback one_launch;
  one_launch.check_interval = 2;
  one_launch.max_depth = 2;
  one_launch.begin_solve(relax::SolveContext{true, false});
  one_launch.observe({2, 1.0, 1.0, true, 1, 0.2, 1, 0.1});
  REQUIRE(one_launch.depth() == 2);
  CHECK(one_launch.times_batch());
  one_launch.observe({6, 1.0, 1.0, true, 2, 0.3, 2, 0.1});
  REQUIRE(one_launch.sweeps_before_check() == 2);
  CHECK_FALSE(one_launch.times_batch());
  // A residual-scored strategy (BlockAsync<dynamic>) scores every window by its GPU time.
  relax::Feedback residual;
  residual.begin_solve(relax::SolveContext{false, false});
  for (int k = 1; k <= 20; ++k) {
    CHECK(residual.times_batch());
    residual.observe({8 * k, std::pow(0.5, k), 1.0, false, residual.depth(), 0.5});
  }
  // Ladder steps on rho alone and asks for no timing; a controller without times_batch gets it.
  CHECK_FALSE(relax::detail::times_batch(relax::Ladder{}));
  struct Timed {
    void validate() const {}
    void begin_solve() {}
    std::int64_t sweeps_before_check() const { return 8; }
    void observe(const relax::CheckSample&) {}
    int depth() const { return 1; }
  };
  CHECK(relax::detail::times_batch(Timed{}));
}

TEST_CASE("Feedback times a depth close to the fastest as often as the fastest before it settles",
          "[control]") {
  // The H200 at N = 512: the probe of D = 2 (one launch of 2 sweeps) reads 200 sweeps/ms, its
  // batches of M 240; D = 4 reads 207 either way.
  auto batch = [](relax::Feedback& c, std::int64_t& sweeps, double rate) {
    const int d = c.depth();  // the next batch, its steady part timed at `rate`
    const std::int64_t n = c.sweeps_before_check(), steady = n - d;
    sweeps += n;
    c.observe({sweeps, 1.0, 1.0, true, d, 0.01 + n / rate, steady, steady / rate});
    return d;
  };
  for (double recheck : {0.10, 0.0}) {
    INFO("recheck " << recheck);
    relax::Feedback c;
    c.max_depth = 4;
    c.recheck = recheck;
    c.begin_solve(relax::SolveContext{true, false});
    std::int64_t sweeps = 0;
    CHECK(batch(c, sweeps, 120.0) == 1);
    CHECK(batch(c, sweeps, 200.0) == 2);  // the probe reads slow: 4 may hold
    CHECK(batch(c, sweeps, 207.0) == 4);  // holds; the top
    CHECK(batch(c, sweeps, 207.0) == 4);
    if (recheck > 0) {  // D = 4 timed twice, D = 2 once and within 10%: D = 2 runs again
      REQUIRE(c.depth() == 2);
      CHECK(batch(c, sweeps, 240.0) == 2);
      CHECK(c.speed(2) > c.speed(4));
      CHECK(c.depth() == 2);
    } else {  // trusting the probe, the run stays at D = 4
      CHECK(c.depth() == 4);
    }
  }
}

TEST_CASE("Feedback's exact climb with short probes costs a few batches, blocking or overlapped",
          "[control]") {
  // Out of L2: D = 8 is fastest (the H200 at N = 16384: about 3.2x D = 1).
  const std::map<int, double> rate_at{{1, 10.0}, {2, 17.0}, {4, 29.0}, {8, 32.0}};
  relax::Feedback blocking;
  CHECK(exact_batches(blocking, rate_at, 6, 0) == Batches{{1, 2}, {2, 4}, {4, 8}, {8, 16}, {8, 8}, {8, 8}});
  // Overlapped: each probe's result arrives after the next batch is queued. That batch probes the
  // next doubling instead of repeating the depth under test, so the probes cost what they cost
  // blocking, and one batch at D = 8 waits for the last result. D = 4, within `recheck` (10%) of
  // D = 8 and timed once where D = 8 was timed twice, then runs until it has been timed as often
  // (two batches: one more is queued before the first reports), and the run goes back to 8.
  relax::Feedback overlapped;
  CHECK(exact_batches(overlapped, rate_at, 9, 1) ==
        Batches{{1, 2}, {2, 4}, {4, 8}, {8, 16}, {8, 16}, {8, 8}, {4, 8}, {4, 8}, {8, 8}});
  CHECK(overlapped.speed(8) == Approx(32.0));
  // In L2 (N = 512): D = 2 is fastest and 4 does not hold. Overlapped, the run has queued the
  // probe at 8 before it learns that, and comes back to 2.
  const std::map<int, double> in_l2{{1, 10.0}, {2, 12.0}, {4, 10.5}, {8, 8.5}};
  relax::Feedback small;
  CHECK(exact_batches(small, in_l2, 5, 0) == Batches{{1, 2}, {2, 4}, {4, 8}, {2, 8}, {2, 8}});
  relax::Feedback small_overlapped;
  CHECK(exact_batches(small_overlapped, in_l2, 6, 1) ==
        Batches{{1, 2}, {2, 4}, {4, 8}, {8, 16}, {2, 8}, {2, 8}});
  CHECK_FALSE(small_overlapped.synchronous());
}

namespace {

// A run of `solves` solves on relax::Adaptive as the GPU solver drives Feedback (blocking checks,
// or overlapped with lag = 1). A solve needs `exact_sweeps` exact sweeps, or s(D) times as many
// asynchronous sweeps at depth D; its check reports convergence once the batches observed add up
// to that. Where the solver passes a tolerance `tol`, ln ρ falls linearly with that progress, from
// 1 to tol after exact_sweeps; otherwise ρ is 1 until the converged check. Speeds in sweeps per
// millisecond; each check also costs `check_ms` of host time (the round trip). The grids are
// `ws_over_l2` times the L2 size. Returns the batches of each solve as (asynchronous, depth,
// sweeps).
struct FamilyBatch {
  bool async;
  int depth;
  std::int64_t sweeps;
  bool operator==(const FamilyBatch& o) const { return async == o.async && depth == o.depth && sweeps == o.sweeps; }
};
using Solves = std::vector<std::vector<FamilyBatch>>;

std::ostream& operator<<(std::ostream& os, const FamilyBatch& b) {
  return os << (b.async ? "BlockAsync<" : "TemporalBlock<") << b.depth << "> x " << b.sweeps;
}

struct FamilyMachine {
  std::map<int, double> exact_rate, async_rate, factor;
  double check_ms = 0.0;
  double ws_over_l2 = 0.5;
  double device_rate = 0.0;  // sweeps per millisecond of a whole solve as the device loop; 0: not offered
  double start_ms = 0.0;     // each solve's start before its first sweep (u's copy, ‖b‖)
  bool tells_whole = true;   // the solver tells a host-loop solve's whole time (observe_solve_time)
  double told_instead = 0.0; // when not 0, told in place of that time (a value Feedback must ignore)
};

// In L2 (the H200 at N = 512, r = 10): exact D = 2 is the fastest exact depth. BlockAsync<4>
// converges at 1.33x the sweeps at 1.43x the speed and wins, checks included. BlockAsync<8>
// sweeps faster still but needs 1.82x the sweeps, and 1.82x the checks.
FamilyMachine in_l2() {
  FamilyMachine m;
  m.exact_rate = {{1, 10.0}, {2, 11.5}, {4, 10.3}, {8, 8.0}};
  m.async_rate = {{2, 12.8}, {4, 16.5}, {8, 19.6}};
  m.factor = {{2, 1.08}, {4, 1.33}, {8, 1.82}};
  m.check_ms = 0.05;
  return m;
}

// Out of L2 (no asynchronous trial): exact D = 8 the fastest at 10 sweeps a millisecond, 0.05 ms a
// check.
FamilyMachine beyond_l2() {
  FamilyMachine m;
  m.exact_rate = {{1, 5.0}, {2, 7.0}, {4, 9.0}, {8, 10.0}};
  m.check_ms = 0.05;
  m.ws_over_l2 = 4.0;
  return m;
}

Solves family_run(relax::Feedback& c, const FamilyMachine& m, int solves, double exact_sweeps, int lag = 0,
                  double tol = 0.0) {
  Solves out;
  for (int k = 0; k < solves; ++k) {
    c.begin_solve(relax::SolveContext{false, true, m.ws_over_l2, 0, tol, m.device_rate > 0});
    if (c.runs_device_loop()) {  // a whole solve in one launch: recorded as depth 0
      REQUIRE(m.device_rate > 0);
      const auto sweeps = static_cast<std::int64_t>(std::ceil(exact_sweeps / 8) * 8);
      REQUIRE(c.sweeps_before_check() == c.check_interval);
      out.push_back({FamilyBatch{false, 0, sweeps}});
      c.observe_device_solve(m.start_ms + static_cast<double>(sweeps) / m.device_rate, sweeps, true);
      continue;
    }
    double whole = m.start_ms;
    std::vector<FamilyBatch> batches;
    std::vector<std::pair<relax::BatchInfo, bool>> in_flight;  // and whether it is timed
    std::int64_t sweeps = 0;
    double progress = 0.0;  // in exact sweeps
    bool converged = false;
    while (!converged) {
      const relax::FamilyChoice f = c.choice();
      const relax::BatchInfo b{c.sweeps_before_check(), f.depth, f.family == relax::Family::temporal};
      REQUIRE(c.depth() == f.depth);
      batches.push_back({!b.exact, b.depth, b.sweeps});
      in_flight.emplace_back(b, c.times_batch());
      c.launched(b);
      if (static_cast<int>(in_flight.size()) <= lag) continue;
      const auto [o, timed] = in_flight.front();
      in_flight.erase(in_flight.begin());
      const double rate = (o.exact ? m.exact_rate : m.async_rate).at(o.depth);
      sweeps += o.sweeps;
      progress += static_cast<double>(o.sweeps) / (o.exact ? 1.0 : m.factor.at(o.depth));
      converged = progress >= exact_sweeps;
      const std::int64_t steady = timed ? o.sweeps - std::min<std::int64_t>(o.sweeps, o.depth) : 0;
      const double batch_ms = static_cast<double>(o.sweeps) / rate;
      const double rho = tol > 0 ? std::min(std::pow(tol, progress / exact_sweeps),
                                            converged ? 0.999 * tol : 1.0)
                                 : (converged ? 1e-6 : 1.0);
      c.observe({sweeps, rho, batch_ms + m.check_ms, o.exact, o.depth, timed ? batch_ms : 0.0, steady,
                 static_cast<double>(steady) / rate});
      whole += batch_ms + m.check_ms;
      REQUIRE(sweeps < 100 * exact_sweeps);
    }
    if (m.tells_whole) c.observe_solve_time(m.told_instead != 0.0 ? m.told_instead : whole);
    out.push_back(batches);
  }
  return out;
}

}  // namespace

TEST_CASE("Feedback on Adaptive tries the asynchronous family one solve at a time and keeps the fastest",
          "[control]") {
  FamilyMachine m = in_l2();
  for (int lag : {0, 1}) {
    INFO((lag ? "overlapped" : "blocking") << " checks");
    relax::Feedback c;
    const Solves run = family_run(c, m, 8, 280.0, lag);
    // Solve 1 climbs the exact family (probes of 2, 4, 8, 16 sweeps) and holds at D = 2; solve 2
    // runs there, and is the reference.
    CHECK(run[0].back() == FamilyBatch{false, 2, 8});
    for (const auto& b : run[1]) CHECK(b == FamilyBatch{false, 2, 8});
    // Solves 3 and 4: whole trials of BlockAsync<2> and <4>, each opened by a probe of two
    // launches (overlapped: with one exact batch queued while the probe is in flight).
    CHECK(run[2].front() == FamilyBatch{true, 2, 4});
    CHECK(run[2].back() == FamilyBatch{true, 2, 8});
    CHECK(run[3].front() == FamilyBatch{true, 4, 8});
    CHECK(run[3].back() == FamilyBatch{true, 4, 8});
    if (lag == 1) CHECK(run[3][1] == FamilyBatch{false, 2, 8});
    CHECK(c.async_gain(2) > 1.0);
    CHECK(c.async_gain(4) > c.async_gain(2));
    CHECK(c.async_sweep_factor(4) == Approx(1.33).epsilon(0.05));
    // Solve 5: the trial of BlockAsync<8> passes the best solve time so far and ends at the
    // fastest exact depth.
    CHECK(run[4].front() == FamilyBatch{true, 8, 16});
    CHECK(run[4].back() == FamilyBatch{false, 2, 8});
    CHECK(c.async_gain(8) == 0.0);
    // Every later solve runs BlockAsync<4>, and probes nothing.
    for (std::size_t k = 5; k < run.size(); ++k)
      for (const auto& b : run[k]) CHECK(b == FamilyBatch{true, 4, 8});
    CHECK(c.asynchronous());
    CHECK(c.async_speed(4) == Approx(16.5));
  }
  // With a check as costly as 10 sweeps, the asynchronous depths' extra sweeps cost extra checks
  // too, and none beats the exact family: after the trial of BlockAsync<2> the run goes back.
  m.check_ms = 1.0;
  relax::Feedback costly;
  const Solves run = family_run(costly, m, 5, 280.0);
  CHECK(costly.async_gain(2) < 1.0);
  for (const auto& b : run[4]) CHECK(b == FamilyBatch{false, 2, 8});
  CHECK_FALSE(costly.asynchronous());
}

TEST_CASE("Feedback on Adaptive ends the asynchronous trials where they cannot win", "[control]") {
  // Out of L2: the exact family at D = 8 runs 3.2x the sweeps per millisecond of D = 1, and an
  // asynchronous sweep is no faster than a synchronous one.
  FamilyMachine m;
  m.exact_rate = {{1, 10.0}, {2, 17.0}, {4, 29.0}, {8, 32.0}};
  m.async_rate = {{2, 9.0}, {4, 11.0}, {8, 12.0}};
  m.factor = {{2, 1.1}, {4, 1.4}, {8, 2.0}};
  m.ws_over_l2 = 4.0;
  // Told the grids do not fit in L2, the controller tries nothing asynchronous.
  relax::Feedback c;
  for (const auto& solve : family_run(c, m, 4, 280.0))
    for (const auto& b : solve) CHECK_FALSE(b.async);
  CHECK(c.async_speed(2) == 0.0);
  // Not told (or wrongly told they fit), it ends the trial once its probe and one batch of M
  // (two timed batches: a probe alone reads slow) say it is slower per sweep than exact D = 8:
  // BlockAsync<2> cannot win whatever its sweep count. Overlapped, an exact batch runs while the
  // probe is in flight, and one more asynchronous batch while the second is.
  for (int lag : {0, 1}) {
    INFO((lag ? "overlapped" : "blocking") << " checks");
    m.ws_over_l2 = 0.0;
    relax::Feedback unsure;
    const Solves run = family_run(unsure, m, 5, 280.0, lag);
    const std::vector<FamilyBatch> trial =
        lag == 0 ? std::vector<FamilyBatch>{{true, 2, 4}, {true, 2, 8}}
                 : std::vector<FamilyBatch>{{true, 2, 4}, {false, 8, 8}, {true, 2, 8}, {true, 2, 8}};
    REQUIRE(run[2].size() > trial.size());
    for (std::size_t k = 0; k < run[2].size(); ++k)
      CHECK(run[2][k] == (k < trial.size() ? trial[k] : FamilyBatch{false, 8, 8}));
    for (const auto& b : run[3]) CHECK(b == FamilyBatch{false, 8, 8});
    CHECK(unsure.async_speed(2) == Approx(9.0));
    CHECK(unsure.async_speed(4) == 0.0);  // never run
    CHECK_FALSE(unsure.asynchronous());
  }

  // Without carry_over nothing is known across solves: every solve climbs the exact family again
  // and there are no trials.
  relax::Feedback fresh;
  fresh.carry_over = false;
  m.ws_over_l2 = 0.5;
  for (const auto& solve : family_run(fresh, m, 3, 280.0)) {
    CHECK(solve.front() == FamilyBatch{false, 1, 2});
    for (const auto& b : solve) CHECK_FALSE(b.async);
  }
}

TEST_CASE("Feedback on Adaptive compares solves by their time to tol, not to their last check",
          "[control]") {
  // A solve ends at a check, so its host time is its time to tol plus part of a batch: up to
  // 1/35 of a solve of 35 checks, as large as the gains compared. With the tolerance the
  // controller takes ln rho as linear over the last interval; the trial's gain then hardly
  // depends on where the checks fall.
  const FamilyMachine m = in_l2();
  auto gain_spread = [&](double tol) {
    double lo = 1e9, hi = 0.0;
    for (double sweeps = 272.0; sweeps <= 286.0; sweeps += 2.0) {
      relax::Feedback c;
      family_run(c, m, 4, sweeps, 0, tol);  // the trial (solve 3) is concluded when solve 4 begins
      REQUIRE(c.async_gain(2) > 0.0);
      lo = std::min(lo, c.async_gain(2));
      hi = std::max(hi, c.async_gain(2));
    }
    return (hi - lo) / lo;
  };
  const double interpolated = gain_spread(1e-5), quantized = gain_spread(0.0);
  INFO("spread of the BlockAsync<2> gain: " << interpolated << " with tol, " << quantized << " without");
  CHECK(interpolated < 0.01);
  CHECK(quantized > 0.02);
}

TEST_CASE("Feedback on Adaptive runs no trial where a solve takes few checks", "[control]") {
  // 40 sweeps a solve (the H200 at N = 512, r = 1: 5 checks): a trial could not tell a gain of
  // a few percent from the first checks and the round trips, so the run stays exact.
  const FamilyMachine m = in_l2();
  relax::Feedback c;
  for (const auto& solve : family_run(c, m, 5, 40.0))
    for (const auto& b : solve) CHECK_FALSE(b.async);
  CHECK(c.async_speed(2) == 0.0);
  // With trial_checks = 0 the same run tries BlockAsync<2> in its third solve.
  relax::Feedback eager;
  eager.trial_checks = 0;
  const Solves run = family_run(eager, m, 3, 40.0);
  CHECK(run[2].front() == FamilyBatch{true, 2, 4});
}

TEST_CASE("Feedback never climbs past the deepest D the strategy runs", "[control]") {
  relax::Feedback c;
  c.max_depth = 64;
  REQUIRE_NOTHROW(c.validate());
  // TemporalBlock<dynamic, ColumnStream> runs D <= 8 (relax::max_depth_v) and every doubling
  // holds; a batch at D = 16 would find no rate below (std::map::at throws).
  const std::map<int, double> rate_at{{1, 10.0}, {2, 17.0}, {4, 29.0}, {8, 32.0}};
  for (int solve = 0; solve < 3; ++solve) {
    for (const auto& [depth, sweeps] : exact_batches(c, rate_at, 8, 0, {true, false, 4.0, 8})) CHECK(depth <= 8);
    CHECK(c.depth() == 8);
  }
  CHECK(c.speed(16) == 0.0);
}

TEST_CASE("Feedback on Adaptive keeps a trial within timing noise, and drops a depth that broke down",
          "[control]") {
  // BlockAsync<2> finishes its trial 1% slower than the reference (noise: it holds, within
  // climb_slack), so the trial of BlockAsync<4>, 4% faster, still runs and is kept.
  FamilyMachine m = in_l2();
  m.async_rate[2] = 12.6;
  m.async_rate[8] = 12.0;  // BlockAsync<8> no faster per sweep than exact: its probe ends it
  relax::Feedback c;
  const Solves run = family_run(c, m, 6, 280.0);
  CHECK(c.async_gain(2) == Approx(0.99).margin(0.015));
  CHECK(run[3].front() == FamilyBatch{true, 4, 8});
  CHECK(c.async_gain(4) > 1.02);
  for (const auto& b : run[5]) CHECK(b == FamilyBatch{true, 4, 8});
  // A solve at the chosen asynchronous depth that ends in a NaN residual: the next solve runs
  // the fastest exact depth, and so do all later ones.
  REQUIRE(c.asynchronous());
  c.begin_solve(relax::SolveContext{false, true, 0.5});
  c.launched({8, 4, false});
  c.observe({8, std::numeric_limits<double>::quiet_NaN(), 1.0, false, 4, 0.5, 4, 0.25});
  c.begin_solve(relax::SolveContext{false, true, 0.5});
  CHECK_FALSE(c.asynchronous());
  CHECK(c.depth() == 2);
  CHECK(c.async_gain(4) == 0.0);
}

TEST_CASE("Feedback on Adaptive sends the run to the device loop where one solve there is faster", "[control]") {
  const FamilyBatch device{false, 0, 280};
  for (int lag : {0, 1}) {
    INFO((lag ? "overlapped" : "blocking") << " checks");
    // Faster a sweep than the fastest exact depth's sweeps alone (11.5 a millisecond): chosen
    // after its trial, with no reference solve and no asynchronous trial.
    FamilyMachine m = in_l2();
    m.device_rate = 40.0;
    relax::Feedback c;
    const Solves run = family_run(c, m, 6, 280.0, lag);
    CHECK(run[0].back() == FamilyBatch{false, 2, 8});  // solve 1 climbs the exact family
    for (std::size_t k = 1; k < run.size(); ++k) CHECK(run[k] == std::vector<FamilyBatch>{device});
    CHECK(c.device_loop_chosen());
    CHECK(c.device_ms_per_sweep() == Approx(1.0 / 40.0));
    CHECK(c.async_gain(2) == 0.0);
  }
  // Slower than the exact sweeps alone (11.2 against 11.5 a millisecond) but faster than a
  // launch-based solve, whose checks cost 0.05 ms each: the reference solve decides, for it.
  FamilyMachine close = in_l2();
  close.device_rate = 11.2;
  relax::Feedback c;
  const Solves run = family_run(c, close, 6, 280.0);
  CHECK(run[1] == std::vector<FamilyBatch>{device});  // the trial
  for (const auto& b : run[2]) CHECK(b == FamilyBatch{false, 2, 8});  // the reference
  for (std::size_t k = 3; k < run.size(); ++k) CHECK(run[k] == std::vector<FamilyBatch>{device});
  CHECK(c.device_loop_chosen());
}

TEST_CASE("Feedback compares the device loop with the reference solve's whole time", "[control]") {
  // beyond_l2(): the reference solve takes 35 batches of 8 sweeps, 29.75 ms (0.1063 ms a sweep). ρ
  // crosses the tolerance half way through its last batch (276 sweeps), so its time to the
  // tolerance is 29.33 ms. The device loop at 9.7 sweeps a millisecond (0.1031 ms a sweep) is no
  // faster than the exact sweeps alone, so the reference decides; it beats the reference's whole
  // time by 3% (more than climb_slack, 2%) and is chosen. (Against the reference's time to the
  // tolerance, 1.5% faster, it would have lost: the loop's time runs to its last check too.)
  FamilyMachine m = beyond_l2();
  m.device_rate = 9.7;
  relax::Feedback c;
  const Solves run = family_run(c, m, 5, 276.0, 0, 1e-5);
  CHECK(run[0].back().depth == 8);  // solve 1 climbs the exact family to D = 8
  CHECK(run[1] == std::vector<FamilyBatch>{FamilyBatch{false, 0, 280}});  // the trial
  for (const auto& b : run[2]) CHECK(b == FamilyBatch{false, 8, 8});     // the reference
  CHECK(c.device_loop_chosen());
  for (std::size_t k = 3; k < run.size(); ++k) CHECK(run[k] == std::vector<FamilyBatch>{FamilyBatch{false, 0, 280}});
  // At 10.6 sweeps a millisecond, more than climb_slack faster than the exact sweeps alone: chosen
  // after its trial, with no reference solve.
  m.device_rate = 10.6;
  relax::Feedback fast;
  const Solves quick = family_run(fast, m, 3, 276.0, 0, 1e-5);
  CHECK(fast.device_loop_chosen());
  CHECK(quick[2] == std::vector<FamilyBatch>{FamilyBatch{false, 0, 280}});
  // 1% faster than the reference's whole time: within the slack, not chosen.
  m.device_rate = 1.0 / (0.99 * 29.75 / 280.0);
  relax::Feedback close;
  const Solves slow = family_run(close, m, 4, 276.0, 0, 1e-5);
  CHECK_FALSE(close.device_loop_chosen());
  for (const auto& b : slow[3]) CHECK(b.depth == 8);
}

TEST_CASE("Feedback says whether it takes a device loop, so that the solver prepares none it would decline",
          "[control]") {
  relax::Feedback f;
  CHECK(relax::detail::takes_device_loop(f));
  f.device_loop = false;
  CHECK_FALSE(relax::detail::takes_device_loop(f));
  relax::Feedback no_carry;
  no_carry.carry_over = false;  // a trial's result would not outlive its solve
  CHECK_FALSE(relax::detail::takes_device_loop(no_carry));
  CHECK(relax::detail::takes_device_loop(relax::Fixed(8)));  // without the query: offered
}

TEST_CASE("Feedback times the device loop and the reference solve from the same start", "[control]") {
  // The machine of the test above, with 1 ms before each solve's first sweep (u's copy and ‖b‖,
  // as at 16384²) that the device loop's time includes. The loop a sweep 2.5% faster than the
  // reference's batches: 30.0 ms against the reference's 29.75 + 1.0 = 30.75, 2.4% faster, chosen.
  // Told only the host time between the reference's checks (29.75 ms, its start left out), it
  // lost: the bias this hook removes.
  FamilyMachine m = beyond_l2();
  m.start_ms = 1.0;
  m.device_rate = 280.0 / (0.975 * 29.75);
  relax::Feedback told;
  const Solves run = family_run(told, m, 4, 276.0, 0, 1e-5);
  for (const auto& b : run[2]) CHECK(b == FamilyBatch{false, 8, 8});  // the reference
  CHECK(told.device_loop_chosen());
  CHECK(run[3] == std::vector<FamilyBatch>{FamilyBatch{false, 0, 280}});
  m.tells_whole = false;
  relax::Feedback untold;
  const Solves old = family_run(untold, m, 4, 276.0, 0, 1e-5);
  CHECK_FALSE(untold.device_loop_chosen());
  for (const auto& b : old[3]) CHECK(b.depth == 8);
  // A time that is not a positive number is ignored and the host time between checks stands in:
  // with no start, the loop 3% faster than that (the test above) is still chosen, where a
  // negative or NaN reference time would make it lose.
  FamilyMachine plain = beyond_l2();
  plain.device_rate = 9.7;
  for (double bad : {-1.0, -29.75, std::numeric_limits<double>::quiet_NaN()}) {
    INFO("told " << bad);
    plain.told_instead = bad;
    relax::Feedback ignored;
    family_run(ignored, plain, 4, 276.0, 0, 1e-5);
    CHECK(ignored.device_loop_chosen());
  }
}

TEST_CASE("Feedback on Adaptive goes on without the device loop where it is slower", "[control]") {
  FamilyMachine m = in_l2();
  m.device_rate = 5.0;
  relax::Feedback c;
  const Solves run = family_run(c, m, 7, 280.0);
  CHECK(run[1] == std::vector<FamilyBatch>{FamilyBatch{false, 0, 280}});  // the trial
  for (const auto& b : run[2]) CHECK(b == FamilyBatch{false, 2, 8});     // the reference
  CHECK_FALSE(c.device_loop_chosen());
  // Then the asynchronous trials as without it (BlockAsync<2>, then <4>), and no device loop.
  CHECK(run[3].front() == FamilyBatch{true, 2, 4});
  CHECK(run[4].front() == FamilyBatch{true, 4, 8});
  for (const auto& solve : run)
    if (&solve != &run[1])
      for (const auto& b : solve) CHECK(b.depth != 0);
  // Without carry_over (nothing learnt across solves) the device loop is never tried.
  relax::Feedback fresh;
  fresh.carry_over = false;
  FamilyMachine again = in_l2();
  again.device_rate = 40.0;
  for (const auto& solve : family_run(fresh, again, 4, 280.0))
    for (const auto& b : solve) CHECK(b.depth != 0);
}

TEST_CASE("Feedback never chooses a device-loop trial whose residual was not finite", "[control]") {
  FamilyMachine m = in_l2();
  relax::Feedback c;
  (void)family_run(c, m, 1, 280.0);  // the exact climb
  c.begin_solve(relax::SolveContext{false, true, 0.5, 0, 0.0, true});
  REQUIRE(c.runs_device_loop());
  c.observe_device_solve(1.0, 280, false);
  CHECK_FALSE(c.device_loop_chosen());
  c.begin_solve(relax::SolveContext{false, true, 0.5, 0, 0.0, true});
  CHECK_FALSE(c.runs_device_loop());
}

TEST_CASE("Ladder's rule for the device loops carries its settings and steps as it does", "[control]") {
  relax::Ladder l(relax::Ladder::Direction::descending, 4);
  l.thresholds = {0.5, 0.25, 0.125};
  l.depths = {1, 3, 5, 7};
  const relax::LadderRule r = l.rule();
  CHECK(r.descending);
  CHECK(r.depth(0) == 7);
  CHECK(r.depth(3) == 1);
  CHECK(r.thresholds[2] == 0.125);
  // The rule alone, from level 0: several thresholds at once, latched, NaN passes nothing.
  CHECK(r.advance(0, 0.2) == 2);
  CHECK(r.advance(2, 0.9) == 2);
  CHECK(r.advance(1, std::numeric_limits<double>::quiet_NaN()) == 1);
  CHECK(r.advance(3, 0.0) == 3);
  // Ladder decides through it.
  l.begin_solve();
  l.observe({4, 0.2});
  CHECK(l.level() == 2);
  CHECK(l.depth() == r.depth(2));
}
