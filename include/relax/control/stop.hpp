#pragma once
//! \file
//! Stop criteria: one vocabulary for Jacobi and CG, evaluated where the loop runs. Every function
//! here is `RELAX_HOST_DEVICE` and computes in IEEE double with explicit round-to-nearest
//! operations, so a check decided on the host and the same check decided inside a kernel (a
//! persistent solver) take the same decision on the same residual norms.
//!
//! A check measures a residual norm ‖r‖ after `count` sweeps (Jacobi) or iterations (CG), and
//! knows the norm of the right-hand side ‖b‖ (the scale). With
//!
//!     ρ = ‖r‖ / s,   s = ‖b‖ if ‖b‖ > 0, else 1,
//!
//! the criterion decides, in this order:
//! 1. `non_finite` if ‖r‖ is NaN or infinite (the iteration broke down), or ‖b‖ is (a norm of b
//!    that overflowed its type: ρ would be 0 and read as converged);
//! 2. `converged`  if ρ < rel_tol, or ‖r‖ ≤ abs_tol;
//! 3. `cap`        if count ≥ max_count;
//! 4. `go_on` otherwise.
//! Jacobi uses the ∞-norm and rel_tol = `SolveOptions::tol`; CG the 2-norm of its residual and
//! `CgOptions::rel_tol`, `abs_tol`. A norm the caller already divided by s is decided by
//! `decide_relative`. Where ‖b‖ is so small (subnormal) that ρ overflows, ρ is infinite: not
//! converged (unless ‖r‖ ≤ abs_tol), not a breakdown.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/core/error.hpp>
#include <relax/control/report.hpp>

#include <cmath>
#include <cstdint>

namespace relax {

//! What a check decided.
enum class StopReason : int {
  go_on = 0,       //!< none of the criteria is met: iterate on
  converged = 1,   //!< the residual met the tolerance
  cap = 2,         //!< the sweep or iteration cap was reached first
  non_finite = 3,  //!< the residual (or the norm of b) is NaN or infinite
};

inline const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::go_on: return "go on";
    case StopReason::converged: return "converged";
    case StopReason::cap: return "cap reached";
    case StopReason::non_finite: return "non-finite residual";
  }
  return "unknown";
}

//! The stop criteria of one solve (see the file comment for the math and the order).
struct StopCriterion {
  double rel_tol = 0.0;         //!< stop converged once ρ = ‖r‖ / s < rel_tol
  double abs_tol = 0.0;         //!< ... or once ‖r‖ ≤ abs_tol
  std::int64_t max_count = 1;   //!< the sweep or iteration cap, >= 1

  //! \throws relax::invalid_argument naming the first bad field (`what_rel`, `what_abs`,
  //! `what_cap` are the names the caller's options give them).
  void validate(const char* what_rel = "rel_tol", const char* what_abs = "abs_tol",
                const char* what_cap = "max_count") const {
    detail::require(std::isfinite(rel_tol) && rel_tol >= 0.0, what_rel, rel_tol, "a finite tolerance >= 0");
    detail::require(std::isfinite(abs_tol) && abs_tol >= 0.0, what_abs, abs_tol, "a finite tolerance >= 0");
    detail::require(rel_tol > 0.0 || abs_tol > 0.0, what_rel, rel_tol,
                    "a relative or an absolute tolerance > 0 (otherwise no solve could converge)");
    detail::require(max_count >= 1, what_cap, max_count, "a cap of at least 1");
  }

  //! The scale s of the relative residual: ‖b‖, or 1 where ‖b‖ = 0.
  RELAX_HOST_DEVICE static double scale(double rhs_norm) { return rhs_norm > 0.0 ? rhs_norm : 1.0; }

  //! ρ = ‖r‖ / s, rounded to nearest on host and device alike.
  RELAX_HOST_DEVICE static double relative(double norm, double rhs_norm) {
    return arith::div(norm, scale(rhs_norm));
  }

  //! The decision of a check that measured ‖r‖ = `norm` after `count` sweeps or iterations.
  RELAX_HOST_DEVICE StopReason decide(double norm, double rhs_norm, std::int64_t count) const {
    if (!finite(norm) || !finite(rhs_norm)) return StopReason::non_finite;
    return decide_finite(norm, relative(norm, rhs_norm), count);
  }

  //! The decision for a norm already divided by the scale s (`rho` = ρ); `rhs_norm` gives s back.
  RELAX_HOST_DEVICE StopReason decide_relative(double rho, double rhs_norm, std::int64_t count) const {
    if (!finite(rho) || !finite(rhs_norm)) return StopReason::non_finite;
    return decide_finite(arith::mul(rho, scale(rhs_norm)), rho, count);
  }

 private:
  // Written without std::isfinite so that host and device evaluate the same comparisons (NaN
  // compares false everywhere; inf − inf is NaN).
  RELAX_HOST_DEVICE static bool finite(double x) { return x == x && x - x == 0.0; }

  // ‖r‖ and ‖b‖ are finite; ρ or ‖r‖ recovered from ρ may still overflow to infinity, which
  // meets no tolerance.
  RELAX_HOST_DEVICE StopReason decide_finite(double norm, double rho, std::int64_t count) const {
    if (rho < rel_tol || norm <= abs_tol) return StopReason::converged;
    if (count >= max_count) return StopReason::cap;
    return StopReason::go_on;
  }
};

//! The stop criteria of a Jacobi solve: ρ < `tol`, or `max_sweeps`.
inline StopCriterion criterion(const SolveOptions& o) { return {o.tol, 0.0, o.max_sweeps}; }

//! The status of a Jacobi solve that the stop criterion ended with `r` (not `StopReason::go_on`).
inline SolveStatus to_solve_status(StopReason r) {
  return r == StopReason::converged ? SolveStatus::converged
         : r == StopReason::cap     ? SolveStatus::sweep_cap
                                    : SolveStatus::non_finite;
}

}  // namespace relax
