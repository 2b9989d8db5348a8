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
//! 0.69–0.84× in L2 for it). After every change of D,
//! `settle_checks` checks are not used: the residual jumps when the staleness pattern changes, and
//! that jump is not the new rate. An exact strategy has no such jump, so it settles at once and
//! climbs after one check per depth. Checks of sweeps that ran at an older depth
//! (`CheckSample::depth`; with overlapped checks, the batch in flight when D changed) are skipped.
//!
//! The time steps of a run solve nearly the same system, so by default (`carry_over`) a solve
//! starts at the depth the previous one ended at and probes one doubling from there, instead of
//! climbing from D = 1 again: a step of the seed's r = 1 problem takes about five checks, too few
//! to climb 1 → 8 with settling windows every time.

#include <relax/control/fixed.hpp>
#include <relax/core/error.hpp>

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
    detail::require(max_depth >= 1 && (max_depth & (max_depth - 1)) == 0, "max_depth", max_depth,
                    "a power of two >= 1");
    detail::require(std::isfinite(drop) && drop > 0 && drop < 1, "drop", drop, "a fraction in (0, 1)");
    detail::require(std::isfinite(climb_slack) && climb_slack >= 0 && climb_slack < 1, "climb_slack",
                    climb_slack, "a fraction in [0, 1)");
    detail::require(settle_checks >= 0, "settle_checks", settle_checks, "0 or more");
    detail::require(window >= 1, "window", window, "at least 1 check per decision");
  }

  void begin_solve() {
    if (!carry_over) depth_ = 1;
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
    if (!s.exact && settle_ > 0) {
      --settle_;
      return;
    }
    if (synchronous_) return;
    if (!window_.add(prev, s)) {
      window_ = {};  // a check without a usable rate (ρ = 0, NaN, no time) restarts the window
      return;
    }
    // The time per sweep of an exact strategy is steady from the first batch at a new depth, so
    // a climb decides after one check; holding keeps the full window against timing noise.
    if (window_.checks < (s.exact && climbing_ ? 1 : window)) return;
    const double score = window_.score();
    window_ = {};
    if (climbing_) climb(score);
    else if (!std::isfinite(hold_)) hold_ = score;  // the first window at the depth we came back to
    else if (score < (1 - drop) * hold_ && depth_ > 1) change(depth_ / 2);
  }

  //! Changes of D in this solve.
  int changes() const { return changes_; }
  //! True once the controller has fallen back to synchronous sweeps for this solve.
  bool synchronous() const { return synchronous_; }

 private:
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }

  // What a window of checks at one depth measured.
  struct Window {
    int checks = 0;
    bool exact = false;
    double log_drop = 0.0;  // Σ −ln(ρ_k / ρ_(k−1))
    double sweeps = 0.0;
    double ms = 0.0;

    bool add(const CheckSample& prev, const CheckSample& s) {
      // GPU time of the batch where measured: one host-timed check in L2 is mostly round trip and
      // jitter, which hid 10-25% differences between depths (docs/performance-notes.md).
      const double interval = s.batch_ms > 0 ? s.batch_ms : s.elapsed_ms;
      if (!(interval > 0)) return false;
      exact = s.exact;
      if (!exact) {
        if (!(prev.rho > 0) || !(s.rho > 0)) return false;
        log_drop += -std::log(s.rho / prev.rho);
      }
      sweeps += static_cast<double>(s.sweeps - prev.sweeps);
      ms += interval;
      ++checks;
      return true;
    }
    double score() const { return (exact ? sweeps : log_drop) / ms; }
  };

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
};

}  // namespace relax
