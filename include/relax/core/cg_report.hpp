#pragma once
//! \file
//! Options and report of a Conjugate Gradient solve, shared by the GPU variants and the
//! reference backend.

#include <relax/core/error.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace relax {

//! When CG stops: at the first check with
//!
//!     ‖r‖₂ ≤ max(rel_tol · ‖b‖₂, abs_tol),
//!
//! where r is the recurrence residual, or after `max_iterations`.
struct CgOptions {
  double rel_tol = 1e-8;
  double abs_tol = 0.0;
  std::int64_t max_iterations = 10000;
  std::int64_t check_interval = 1;  //!< iterations between two convergence checks
  //! Pipelined: iterations between residual replacements; 0 picks 100 for double and 10 for
  //! float, where the recurrence drifts from the true residual about 10⁷ times faster.
  std::int64_t replace_interval = 0;
  //! Pipelined: replacement stops once ‖r‖ falls below `replace_until` times the stopping
  //! threshold; 0: it never stops; negative (the default): 1e4 for double, 0 for float, whose
  //! recurrences drift too fast to go without it. In double, replacing the recurrence residual by
  //! b − A x near the attainable accuracy breaks the recurrences down: on b = 1, replaced every
  //! 20 to 1000 iterations to the end, Pipelined broke down at ‖r‖/‖b‖ ≈ 2e-7 on a 4096² grid
  //! (H200) and ≈ 2e-10 on 256² (reference backend), where standard CG goes on to 1e-8 and 1e-13.
  double replace_until = -1.0;
  bool record_history = false;      //!< keep (iteration, ‖r‖₂ / ‖b‖₂) of every check

  //! `replace_until` with the automatic choice resolved for scalars of `bytes` bytes.
  double replace_until_for(std::size_t bytes) const {
    if (replace_until >= 0.0) return replace_until;
    return bytes >= 8 ? 1e4 : 0.0;
  }

  //! \throws relax::invalid_argument naming the first bad field.
  void validate() const {
    detail::require(std::isfinite(rel_tol) && rel_tol >= 0.0, "rel_tol", rel_tol, "a finite tolerance >= 0");
    detail::require(std::isfinite(abs_tol) && abs_tol >= 0.0, "abs_tol", abs_tol, "a finite tolerance >= 0");
    detail::require(rel_tol > 0.0 || abs_tol > 0.0, "rel_tol", rel_tol,
                    "rel_tol or abs_tol > 0 (otherwise CG could never stop converged)");
    detail::require(max_iterations >= 1, "max_iterations", max_iterations, "at least 1");
    detail::require(check_interval >= 1, "check_interval", check_interval, "at least 1");
    detail::require(replace_interval >= 0, "replace_interval", replace_interval, "0 (automatic) or more");
    detail::require(std::isfinite(replace_until), "replace_until", replace_until,
                    "a finite factor (negative: automatic)");
  }
};

enum class CgStatus {
  converged,      //!< the residual met the tolerance at a check
  iteration_cap,  //!< max_iterations reached first
  breakdown,      //!< pᵀAp ≤ 0: the operator is not positive definite along p
  non_finite,     //!< a NaN or Inf appeared in a scalar of the iteration
};

inline const char* to_string(CgStatus s) {
  switch (s) {
    case CgStatus::converged: return "converged";
    case CgStatus::iteration_cap: return "not converged (iteration cap reached)";
    case CgStatus::breakdown: return "breakdown (p'Ap <= 0: operator not positive definite)";
    case CgStatus::non_finite: return "breakdown (non-finite value)";
  }
  return "unknown";
}

struct CgSample {
  std::int64_t iteration = 0;
  double relative_residual = 0.0;
};

struct CgReport {
  CgStatus status = CgStatus::iteration_cap;
  std::int64_t iterations = 0;
  double residual_norm = 0.0;  //!< ‖r‖₂ of the recurrence at the last check
  double rhs_norm = 0.0;       //!< ‖b‖₂
  double time_ms = 0.0;
  std::vector<CgSample> history;

  bool converged() const { return status == CgStatus::converged; }
  double relative_residual() const { return rhs_norm > 0 ? residual_norm / rhs_norm : residual_norm; }
};

}  // namespace relax
