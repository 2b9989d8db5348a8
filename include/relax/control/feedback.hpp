#pragma once
//! \file
//! `Feedback`: the source study's G-fb hill-climbing controller, with a fallback to synchronous
//! sweeps.
//!
//! The convergence rate per millisecond between two checks is
//!
//!     rate = −ln(ρ_k / ρ_(k−1)) / (t_k − t_(k−1)).
//!
//! A solve starts at D = 1 and climbs: after each measured rate it doubles D, as long as the rate
//! at the new depth holds (is no more than `drop` below the rate at the previous depth). When a
//! doubling makes the rate drop, D goes back down and holds there; while holding, a later drop of
//! more than `drop` against the rate measured on arrival halves D again. If already the first
//! doubling (1 → 2) does not pay, the controller falls back to D = 1 for the rest of the solve:
//! synchronous sweeps, which the source study's version could not do (it lost 0.69–0.84× in L2
//! for it). After every change of D, `settle_checks` checks are not used for decisions: the
//! residual jumps when the staleness pattern changes, and that jump is not the new rate.
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
  double drop = 0.10;      //!< relative fall of the rate that counts as a drop
  int settle_checks = 1;   //!< checks ignored after each change of D
  bool carry_over = true;  //!< start a solve at the depth the last one ended at

  void validate() const {
    Fixed(check_interval).validate();
    detail::require(max_depth >= 1 && (max_depth & (max_depth - 1)) == 0, "max_depth", max_depth,
                    "a power of two >= 1");
    detail::require(std::isfinite(drop) && drop > 0 && drop < 1, "drop", drop, "a fraction in (0, 1)");
    detail::require(settle_checks >= 0, "settle_checks", settle_checks, "0 or more");
  }

  void begin_solve() {
    if (!carry_over) depth_ = 1;
    climbing_ = depth_ < max_depth;
    hold_rate_ = nan();
    synchronous_ = false;
    settle_ = 0;
    changes_ = 0;
    prev_rho_ = nan();
    rate_below_ = nan();
  }
  std::int64_t sweeps_before_check() const { return check_interval; }
  int depth() const { return depth_; }

  void observe(const CheckSample& s) {
    const double rate = rate_from(s);
    if (settle_ > 0) {
      --settle_;
      return;
    }
    if (!std::isfinite(rate) || synchronous_) return;
    if (climbing_) {
      climb(rate);
    } else if (!std::isfinite(hold_rate_)) {
      hold_rate_ = rate;  // the first settled rate at the depth we came back to
    } else if (rate < (1 - drop) * hold_rate_ && depth_ > 1) {
      change(depth_ / 2);
      hold_rate_ = nan();
    }
  }

  //! Changes of D in this solve.
  int changes() const { return changes_; }
  //! True once the controller has fallen back to synchronous sweeps for this solve.
  bool synchronous() const { return synchronous_; }

 private:
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }

  double rate_from(const CheckSample& s) {
    const double prev = prev_rho_;
    prev_rho_ = s.rho;
    if (!(prev > 0) || !(s.rho > 0) || !(s.elapsed_ms > 0)) return nan();
    return -std::log(s.rho / prev) / s.elapsed_ms;
  }

  void climb(double rate) {
    if (std::isfinite(rate_below_) && rate < (1 - drop) * rate_below_) {
      // The last doubling did not pay: go back and hold (or fall back to synchronous sweeps).
      climbing_ = false;
      synchronous_ = depth_ == 2;
      change(depth_ / 2);
      return;
    }
    if (depth_ >= max_depth) {
      climbing_ = false;
      hold_rate_ = rate;
      return;
    }
    rate_below_ = rate;
    change(depth_ * 2);
  }

  void change(int d) {
    depth_ = d;
    settle_ = settle_checks;
    ++changes_;
  }

  int depth_ = 1;
  bool climbing_ = true;
  bool synchronous_ = false;
  int settle_ = 0;
  int changes_ = 0;
  double prev_rho_ = nan();
  double rate_below_ = nan();  // the rate at depth_ / 2, measured before the last doubling
  double hold_rate_ = nan();
};

}  // namespace relax
