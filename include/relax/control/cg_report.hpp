#pragma once
//! \file
//! Options and report of a Conjugate Gradient solve, shared by the GPU variants and the
//! reference backend.

#include <relax/config.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/arith.hpp>
#include <relax/core/error.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace relax {

namespace detail {
//! What every CG solve, host or GPU, expects of b where ‖b‖₂ underflowed to 0 while b is not 0
//! (every square underflowed): ρ = ‖r‖₂ / ‖b‖₂ would then be the absolute residual, and a solve
//! could stop at once, "converged". (An infinite ‖b‖₂ is the stop criterion's non-finite case.)
inline constexpr const char* rhs_norm_underflow_expected =
    "a right-hand side whose 2-norm does not underflow to 0 (scale the system)";
}  // namespace detail

//! When CG stops: at the first check (every `check_interval` iterations) where `criterion()`,
//! a `relax::StopCriterion` on the 2-norm of the recurrence residual r, decides
//!
//!     ‖r‖₂ / ‖b‖₂ < rel_tol  or  ‖r‖₂ ≤ abs_tol   (converged; ‖b‖₂ = 0 counts as 1),
//!
//! or after `max_iterations`. Every solve then computes the true residual ‖b − A x‖₂ and tests it
//! with the same criterion: where the recurrence met it and the true residual does not, the
//! status is `CgStatus::residual_gap`, and with `restarts` > 0 CG starts again from x (r = b − A x)
//! while iterations remain, at most `restarts` times.
struct CgOptions {
  double rel_tol = 1e-8;
  double abs_tol = 0.0;
  std::int64_t max_iterations = 10000;
  std::int64_t check_interval = 1;  //!< iterations between two convergence checks
  //! Pipelined: iterations between two checkpoints, where it measures the gap between its
  //! recurrence residual and b − A x (`switch_gap`) and, while `replace_until` allows, replaces
  //! the residual; 0 picks 50 for double and 10 for float, where the recurrence drifts from the
  //! true residual about 10⁷ times faster. 50 measured on the real matrices of
  //! tests/data/suitesparse with `switch_gap` = 50 (reference backend): every one within 1.34×
  //! standard CG's iterations, as with 25 and 40; with 100 the first checkpoint comes too late
  //! for bcsstk01 (1.59×), which converges in 131.
  std::int64_t replace_interval = 0;
  //! Pipelined: at a checkpoint where the gap between the recurrence residual r and b − A x is
  //!
  //!     ‖(b − A x) − r‖₂ > switch_gap · j · ε · (‖A‖ ‖x‖₂ + ‖b‖₂)
  //!
  //! it goes on as standard CG from x (the report's `switched_at`). j is the iterations since r
  //! was last b − A x (the start or a replacement), ε the machine epsilon of the scalar type, and
  //! ‖A‖ the largest ‖w‖₂ / ‖r‖₂ (w = A r by recurrence) seen at a checkpoint, a lower bound.
  //! j ε (‖A‖ ‖x‖ + ‖b‖) is the order of the gap that standard CG's own rounding leaves after j
  //! iterations; the factor is how far Pipelined's recurrences may amplify it (Cools, Yetkin,
  //! Agullo, Giraud, Vanroose, "Analyzing the effect of local rounding error propagation on the
  //! maximal attainable accuracy of the pipelined CG method"). Where they amplify it more, they
  //! delay convergence too, by more than replacement recovers: standard CG from x gets there
  //! sooner. 50 measured on tests/data/suitesparse (reference backend, checkpoints every 50): the
  //! factor stays ≤ 25 where Pipelined keeps pace with standard CG (nos4 16, nos3 9.5, 662_bus
  //! 11, 1138_bus 25, gr_30_30 converges before a checkpoint), and exceeds 50 where it falls
  //! behind (bcsstk01 630 and bcsstk03 470 at iteration 50, plat362 59 at 250). 0: never switch
  //! on the gap.
  double switch_gap = 50.0;
  //! Pipelined: replacement stops once ‖r‖ falls below `replace_until` times the stopping
  //! threshold; 0: it never stops; negative (the default): 1e4 for double, 0 for float, whose
  //! recurrences drift too fast to go without it. In double, replacing the recurrence residual by
  //! b − A x near the attainable accuracy breaks the recurrences down: on b = 1, replaced every
  //! 20 to 1000 iterations to the end, Pipelined broke down at ‖r‖/‖b‖ ≈ 2e-7 on a 4096² grid
  //! (H200) and ≈ 2e-10 on 256² (reference backend), where standard CG goes on to 1e-8 and 1e-13.
  double replace_until = -1.0;
  bool record_history = false;      //!< keep (iteration, ‖r‖₂ / ‖b‖₂) of every check
  //! Restarts from the true residual after a `residual_gap`, at most this many (0: report the gap).
  std::int64_t restarts = 0;

  //! The stop criterion of the recurrence residual (and of the true residual at the end).
  StopCriterion criterion() const { return StopCriterion{rel_tol, abs_tol, max_iterations}; }

  //! The residual norm below which `criterion()` stops for a right-hand side of norm `rhs_norm`:
  //! max(rel_tol · s, abs_tol) (Pipelined's `replace_until` is a multiple of it).
  double threshold(double rhs_norm) const {
    const double relative = rel_tol * StopCriterion::scale(rhs_norm);
    return relative > abs_tol ? relative : abs_tol;
  }

  //! `replace_until` with the automatic choice resolved for scalars of `bytes` bytes.
  double replace_until_for(std::size_t bytes) const {
    if (replace_until >= 0.0) return replace_until;
    return bytes >= 8 ? 1e4 : 0.0;
  }

  //! \throws relax::invalid_argument naming the first bad field.
  void validate() const {
    criterion().validate("rel_tol", "abs_tol", "max_iterations");
    detail::require(check_interval >= 1, "check_interval", check_interval, "at least 1");
    detail::require(replace_interval >= 0, "replace_interval", replace_interval, "0 (automatic) or more");
    detail::require(std::isfinite(replace_until), "replace_until", replace_until,
                    "a finite factor (negative: automatic)");
    detail::require(restarts >= 0, "restarts", restarts, "0 or more");
    detail::require(std::isfinite(switch_gap) && switch_gap >= 0.0, "switch_gap", switch_gap,
                    "a finite factor >= 0 (0: never switch on the gap)");
  }
};

enum class CgStatus {
  converged,      //!< the recurrence residual met the tolerance, and so does ‖b − A x‖₂
  iteration_cap,  //!< max_iterations reached first
  breakdown,      //!< pᵀAp ≤ 0 computed from p and A p: A is not positive definite along p
  non_finite,     //!< a NaN or Inf appeared in a scalar of the iteration
  residual_gap,   //!< the recurrence residual met the tolerance, the true residual does not
};

inline const char* to_string(CgStatus s) {
  switch (s) {
    case CgStatus::converged: return "converged";
    case CgStatus::iteration_cap: return "not converged (iteration cap reached)";
    case CgStatus::breakdown: return "breakdown (p'Ap <= 0: operator not positive definite)";
    case CgStatus::non_finite: return "breakdown (non-finite value)";
    case CgStatus::residual_gap:
      return "recurrence converged, true residual above the tolerance (CgOptions::restarts restarts from it)";
  }
  return "unknown";
}

namespace detail {
//! The CG status of a stop decision that is not `go_on`.
inline CgStatus cg_status_of(StopReason r) {
  return r == StopReason::converged ? CgStatus::converged
         : r == StopReason::cap     ? CgStatus::iteration_cap
                                    : CgStatus::non_finite;
}
}  // namespace detail

struct CgSample {
  std::int64_t iteration = 0;
  double relative_residual = 0.0;
};

struct CgReport {
  CgStatus status = CgStatus::iteration_cap;
  std::int64_t iterations = 0;
  double residual_norm = 0.0;       //!< ‖r‖₂ of the recurrence at the last check
  double true_residual_norm = 0.0;  //!< ‖b − A x‖₂ of the returned x, computed at the end
  double rhs_norm = 0.0;            //!< ‖b‖₂
  std::int64_t restarts = 0;        //!< restarts from the true residual (`CgOptions::restarts`)
  //! Pipelined: the iteration at which it switched to standard CG, having found its recurrences
  //! drifted (a gap above `CgOptions::switch_gap` at a checkpoint, or a recurrence pᵀAp ≤ 0
  //! where the directly computed one is > 0); -1: no switch.
  std::int64_t switched_at = -1;
  double time_ms = 0.0;
  std::vector<CgSample> history;  //!< iterations count from the start of the solve, restarts included

  //! True when the status is `converged`: recurrence and true residual both met the tolerance.
  bool converged() const { return status == CgStatus::converged; }
  double relative_residual() const { return StopCriterion::relative(residual_norm, rhs_norm); }
  double relative_true_residual() const { return StopCriterion::relative(true_residual_norm, rhs_norm); }
};

namespace detail {
//! Pipelined's checkpoint test (`CgOptions::switch_gap`): true where `gap` = ‖(b − A x) − r‖₂
//! exceeds `factor` · `since` · `epsilon` · (`norm_a` · `x_norm` + `rhs_norm`). Host and device
//! evaluate it with the same rounded operations.
RELAX_HOST_DEVICE inline bool pipelined_gap_exceeds(double gap, std::int64_t since, double norm_a, double x_norm,
                                                    double rhs_norm, double epsilon, double factor) {
  const double scale = arith::add(arith::mul(norm_a, x_norm), rhs_norm);
  const double bound = arith::mul(arith::mul(factor, static_cast<double>(since)), arith::mul(epsilon, scale));
  return factor > 0.0 && gap > bound;
}

//! The loop every CG solve ends with, host and GPU alike: `run(stop, report)` solves from x
//! (`stop` caps the iterations left) and returns its status; `true_norm()` measures ‖b − A x‖₂.
//! Where the recurrence converged and the true residual does not meet the criterion, the status
//! becomes `residual_gap`, and CG runs again from x as `CgOptions::restarts` allows.
template <class Run, class TrueNorm>
void solve_with_restarts(const CgOptions& options, CgReport& report, Run&& run, TrueNorm&& true_norm) {
  const StopCriterion stop = options.criterion();
  for (;;) {
    StopCriterion left = stop;
    left.max_count = stop.max_count - report.iterations;
    report.status = run(left, report);
    report.true_residual_norm = true_norm();
    const bool true_met = stop.decide(report.true_residual_norm, report.rhs_norm, 0) == StopReason::converged;
    if (report.status == CgStatus::converged && !true_met) report.status = CgStatus::residual_gap;
    if (report.status != CgStatus::residual_gap || report.restarts >= options.restarts ||
        report.iterations >= stop.max_count)
      return;
    ++report.restarts;
  }
}
}  // namespace detail

}  // namespace relax
