#pragma once
//! \file
//! Options of a linear solve and the reports a solve and a run of time steps return. Shared by
//! the GPU solvers and the reference backend so their results compare field by field.

#include <relax/core/error.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace relax {

//! How the GPU solver waits for a convergence check.
enum class CheckMode {
  //! The solver waits for ρ before it launches more sweeps: the GPU idles for a round trip per
  //! check, and a solve stops exactly at the first check with ρ < tol.
  blocking,
  //! The solver launches the next batch of sweeps before it reads ρ, so the GPU keeps sweeping
  //! while the residual travels to the host. When a check with ρ < tol arrives, the batch already
  //! launched still runs (`SolveReport::extra_sweeps`). The solver predicts the residual of the
  //! next check from the last two (Jacobi's residual falls geometrically) and waits instead of
  //! launching ahead when that prediction is within a factor of 4 of tol, so the extra batch is
  //! paid only when convergence comes sooner than predicted. The extra sweeps of an exact strategy
  //! only reduce the error (Jacobi contracts it in the max norm for a diagonally dominant A).
  overlapped,
};

inline const char* to_string(CheckMode m) {
  return m == CheckMode::blocking ? "blocking" : "overlapped";
}

//! When a solve stops. The convergence criterion is the relative true residual
//!
//!     ρ = ‖b − A u‖∞ / ‖b‖∞ < tol,
//!
//! where b is the right-hand side of the interior system (the boundary values moved into it), so
//! ‖b‖∞ > 0 whenever the boundary or the source is non-zero; if b = 0, ρ is the absolute residual.
//! Because A is strictly diagonally dominant, ρ bounds the relative error of the solution.
struct SolveOptions {
  double tol = 1e-5;                      //!< stop once ρ < tol
  std::int64_t max_sweeps = 1'000'000;    //!< sweep cap per solve; reaching it is `sweep_cap`
  bool record_history = false;            //!< keep (sweeps, ρ) of every check in the report
  CheckMode checks = CheckMode::blocking; //!< GPU solvers only; the reference backend blocks

  //! \throws relax::invalid_argument naming `tol` or `max_sweeps`.
  void validate() const {
    detail::require(std::isfinite(tol) && tol > 0.0, "tol", tol, "a finite tolerance > 0");
    detail::require(max_sweeps >= 1, "max_sweeps", max_sweeps, "a sweep cap of at least 1");
  }
};

//! How a solve ended. Not converging is a status, not an exception.
enum class SolveStatus {
  converged,   //!< ρ < tol at a check
  sweep_cap,   //!< the sweep cap was reached first
  non_finite,  //!< ρ was NaN or infinite: the iteration broke down
};

inline const char* to_string(SolveStatus s) {
  switch (s) {
    case SolveStatus::converged: return "converged";
    case SolveStatus::sweep_cap: return "not converged (sweep cap reached)";
    case SolveStatus::non_finite: return "not converged (non-finite residual)";
  }
  return "unknown";
}

//! ρ after `sweeps` sweeps.
struct ResidualSample {
  std::int64_t sweeps = 0;
  double rho = 0.0;
};

//! The outcome of one linear solve (one time step).
struct SolveReport {
  SolveStatus status = SolveStatus::sweep_cap;
  std::int64_t sweeps = 0;    //!< sweeps performed, `extra_sweeps` included
  std::int64_t extra_sweeps = 0;  //!< sweeps run after the check that ended the solve (overlapped checks)
  std::int64_t checks = 0;    //!< convergence checks performed
  double rho = 0.0;           //!< ρ at the last check
  double rhs_norm = 0.0;      //!< ‖b‖∞
  double time_ms = 0.0;       //!< wall time of the solve on its stream (device events) or host
  std::vector<ResidualSample> history;  //!< every check, if requested

  bool converged() const { return status == SolveStatus::converged; }
};

//! The outcome of a run of time steps.
struct RunReport {
  std::int64_t points = 0;           //!< interior points of the box
  std::vector<SolveReport> steps;    //!< one per time step performed
  double time_ms = 0.0;              //!< all steps, right-hand sides and checks included

  bool converged() const {
    for (const auto& s : steps)
      if (!s.converged()) return false;
    return !steps.empty();
  }
  std::int64_t sweeps() const {
    std::int64_t total = 0;
    for (const auto& s : steps) total += s.sweeps;
    return total;
  }
  //! Lattice updates per second over the whole run, in units of 10⁹.
  double gups() const {
    return time_ms > 0 ? static_cast<double>(sweeps()) * static_cast<double>(points) / (time_ms * 1e6)
                       : 0.0;
  }
};

}  // namespace relax
