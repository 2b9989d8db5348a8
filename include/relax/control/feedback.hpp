#pragma once
//! \file
//! `Feedback`: the source study's G-fb hill-climbing controller, with a fallback to synchronous
//! sweeps.
//!
//! The score of a depth D is the convergence rate per millisecond measured while running at D,
//!
//!     rate = −ln(ρ_end / ρ_start) / (t_end − t_start)
//!
//! over a window of `window` checks, where t counts the GPU time of the sweeps
//! (`CheckSample::batch_ms`, CUDA events) when the solver measures it, and the time between
//! checks otherwise (one check is too noisy: the max-norm residual does not fall
//! evenly). For an exact strategy (`CheckSample::exact`, e.g. TemporalBlock) the convergence per
//! sweep does not depend on D, so the rate per millisecond is the convergence per sweep times the
//! sweeps per millisecond, and only the second factor can differ between depths: the controller
//! compares sweeps per millisecond, which, unlike the residual, does not also fall as a solve
//! goes on (the high-frequency error dies in the first sweeps, so a later window would look slower
//! whatever its D).
//!
//! A solve climbs: after each window it doubles D, as long as the score at the new depth holds
//! (is no more than `climb_slack`, 2%, below the score at the previous depth: timing noise, not a
//! loss). When a doubling makes the score fall, D goes back down and holds there; while holding,
//! a later window more than `drop` (10%) below the first one at that depth halves D again. If
//! already the first doubling (1 → 2) does not pay, the controller falls back to D = 1 for the
//! rest of the solve: synchronous sweeps, which the source study's version could not do (it lost
//! 0.69–0.84× in L2 for it). After every change of D, `settle_checks` checks are not used: the
//! residual jumps when the staleness pattern changes, and that jump is not the new rate. Checks
//! of sweeps that ran at an older depth (`CheckSample::depth`; with overlapped checks, the batch
//! in flight when D changed) are skipped.
//!
//! An exact strategy's sweeps per millisecond at a depth are a property of the grid and the
//! GPU, not of the solve, so for those the controller keeps what it measured at each depth
//! (`speed(D)`, sweeps over milliseconds summed over every check at that depth) and decides on
//! the whole record instead of on windows: there is no residual jump to settle, so it climbs
//! after one check per depth, to a doubling it has not measured while the last doubling held, and
//! otherwise runs at the fastest depth it knows (the fallback to D = 1 included), moving only when
//! another depth is more than `climb_slack` faster; `drop` and `window` do not apply. With
//! `carry_over` each depth is thus probed once per run, not once per solve: at r = 1 a solve is
//! about five checks, and one batch at a depth 30% slower would cost it several percent every
//! time step.
//!
//! The time steps of a run solve nearly the same system, so by default (`carry_over`) a solve
//! starts at the depth the previous one ended at (and, for an exact strategy, with the speeds
//! measured so far). For a residual-scored strategy it probes one doubling from there, instead of
//! climbing from D = 1 again. Without `carry_over` every solve starts over at D = 1 with nothing
//! known. A controller object belongs to one grid size: its record says nothing about another.

#include <relax/control/fixed.hpp>
#include <relax/core/error.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace relax {

struct Feedback {
  int check_interval = 8;  //!< M
  int max_depth = 8;       //!< a power of two
  double drop = 0.10;      //!< relative fall of the score that counts as a drop while holding
  double climb_slack = 0.02;  //!< a doubling holds if its score is at most this far below
  int settle_checks = 1;   //!< checks ignored after each change of D
  int window = 2;          //!< checks measured per decision
  bool carry_over = true;  //!< start a solve at the depth the last one ended at

  void validate() const {
    Fixed(check_interval).validate();
    detail::require(max_depth >= 1 && max_depth <= 1024 && (max_depth & (max_depth - 1)) == 0,
                    "max_depth", max_depth, "a power of two from 1 to 1024");
    detail::require(std::isfinite(drop) && drop > 0 && drop < 1, "drop", drop, "a fraction in (0, 1)");
    detail::require(std::isfinite(climb_slack) && climb_slack >= 0 && climb_slack < 1, "climb_slack",
                    climb_slack, "a fraction in [0, 1)");
    detail::require(settle_checks >= 0, "settle_checks", settle_checks, "0 or more");
    detail::require(window >= 1, "window", window, "at least 1 check per decision");
  }

  void begin_solve() {
    if (!carry_over) {
      depth_ = 1;
      speed_ = {};
    }
    climbing_ = depth_ < max_depth;
    synchronous_ = false;
    settle_ = 0;
    changes_ = 0;
    prev_ = {};
    have_prev_ = false;
    below_ = nan();
    hold_ = nan();
    window_ = {};
  }
  std::int64_t sweeps_before_check() const { return check_interval; }
  int depth() const { return depth_; }

  void observe(const CheckSample& s) {
    const CheckSample prev = prev_;
    const bool first = !have_prev_;
    prev_ = s;
    have_prev_ = true;
    // The interval before a solve's first check includes its setup (‖b‖∞, the workspace copy):
    // no rate for the residual, and only a slight underestimate of an exact strategy's speed.
    if (first && !s.exact) return;
    if (s.depth != 0 && s.depth != depth_) return;  // sweeps queued before the last change of D
    if (s.exact) {
      observe_exact(prev, s);
      return;
    }
    if (settle_ > 0) {
      --settle_;
      return;
    }
    if (synchronous_) return;
    if (!window_.add(prev, s)) {
      window_ = {};  // a check without a usable rate (ρ = 0, NaN, no time) restarts the window
      return;
    }
    if (window_.checks < window) return;
    const double score = window_.score();
    window_ = {};
    if (climbing_) climb(score);
    else if (!std::isfinite(hold_)) hold_ = score;  // the first window at the depth we came back to
    else if (score < (1 - drop) * hold_ && depth_ > 1) change(depth_ / 2);
  }

  //! Changes of D in this solve.
  int changes() const { return changes_; }
  //! True once the controller has fallen back to synchronous sweeps for this solve (for an exact
  //! strategy: it runs at D = 1 because D = 2 was measured slower).
  bool synchronous() const {
    return synchronous_ || (depth_ == 1 && known(2) && speed(2) < speed(1));
  }
  //! The mean sweeps per millisecond measured at depth `d` so far (exact strategies; 0 if not
  //! measured).
  double speed(int d) const { return known(d) ? slot(d).sweeps / slot(d).ms : 0.0; }

 private:
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }

  // GPU time of the batch where measured: one host-timed check in L2 is mostly round trip and
  // jitter, which hid 10-25% differences between depths (docs/performance-notes.md).
  static double interval_ms(const CheckSample& s) { return s.batch_ms > 0 ? s.batch_ms : s.elapsed_ms; }

  // What a window of checks at one depth measured (residual-scored strategies).
  struct Window {
    int checks = 0;
    double log_drop = 0.0;  // Σ −ln(ρ_k / ρ_(k−1))
    double ms = 0.0;

    bool add(const CheckSample& prev, const CheckSample& s) {
      const double interval = interval_ms(s);
      if (!(interval > 0) || !(prev.rho > 0) || !(s.rho > 0)) return false;
      log_drop += -std::log(s.rho / prev.rho);
      ms += interval;
      ++checks;
      return true;
    }
    double score() const { return log_drop / ms; }
  };

  // Sweeps and milliseconds measured at one depth (exact strategies), over the run.
  struct Speed {
    double sweeps = 0.0;
    double ms = 0.0;
  };
  static int log2_of(int d) {
    int k = 0;
    while ((1 << k) < d) ++k;
    return k;
  }
  const Speed& slot(int d) const { return speed_[static_cast<std::size_t>(log2_of(d))]; }
  bool known(int d) const { return d >= 1 && d <= max_depth && slot(d).ms > 0; }

  void observe_exact(const CheckSample& prev, const CheckSample& s) {
    const double ms = interval_ms(s);
    const auto sweeps = static_cast<double>(s.sweeps - prev.sweeps);
    if (!(ms > 0) || !(sweeps > 0)) return;
    Speed& here = speed_[static_cast<std::size_t>(log2_of(depth_))];
    here.sweeps += sweeps;
    here.ms += ms;
    // Climb to a doubling not yet measured while the last doubling held (timing noise of
    // climb_slack is not a loss).
    const bool held =
        depth_ == 1 || !known(depth_ / 2) || speed(depth_) >= (1 - climb_slack) * speed(depth_ / 2);
    if (depth_ < max_depth && !known(depth_ * 2) && held) {
      change(depth_ * 2);
      return;
    }
    int fastest = depth_;
    for (int d = 1; d <= max_depth; d *= 2)
      if (known(d) && speed(d) > speed(fastest)) fastest = d;
    if (fastest != depth_ && speed(fastest) > (1 + climb_slack) * speed(depth_)) change(fastest);
  }

  void climb(double score) {
    if (std::isfinite(below_) && score < (1 - climb_slack) * below_) {
      // The last doubling did not pay: go back and hold (or fall back to synchronous sweeps).
      climbing_ = false;
      synchronous_ = depth_ == 2;
      change(depth_ / 2);
      return;
    }
    if (depth_ >= max_depth) {
      climbing_ = false;
      hold_ = score;
      return;
    }
    below_ = score;
    change(depth_ * 2);
  }

  void change(int d) {
    depth_ = d;
    settle_ = settle_checks;
    hold_ = nan();
    window_ = {};
    ++changes_;
  }

  int depth_ = 1;
  bool climbing_ = true;
  bool synchronous_ = false;
  int settle_ = 0;
  int changes_ = 0;
  CheckSample prev_;
  bool have_prev_ = false;
  double below_ = nan();  // the score at depth_ / 2, measured before the last doubling
  double hold_ = nan();   // the first score after arriving at the held depth
  Window window_;
  std::array<Speed, 32> speed_{};  // by log2 D; kept across solves with carry_over
};

}  // namespace relax
