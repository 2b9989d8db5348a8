#pragma once
//! \file
//! The reference backend's Conjugate Gradient, serial and OpenMP: the oracle of the GPU variants
//! and the CPU baseline of their benchmarks. Works on any symmetric positive definite operator
//! given as `apply(p, q)` (q = A p), on a `Csr<T>`, and on the matrix-free 5-point Poisson
//! operator `Poisson5` (any stencil's `StencilMatrix`). With OpenMP the dot products sum in another order than serially, so the
//! two agree to rounding, not bit for bit.

#include <relax/control/cg_report.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/error.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/stencil/operator.hpp>
#include <relax/stencil/poisson.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace relax::reference {

//! A stencil's matrix on the unknowns of a box (`relax::StencilRows`): the host twin of
//! `relax::StencilOperator`, with the same rows, so it equals the GPU operator bit for bit.
template <class S>
struct StencilMatrix {
  using value_type = typename S::value_type;
  StencilRows<S> rows;

  StencilMatrix(const S& s, const Extents& e) : rows(stencil_rows(s, e)) {}
  std::int64_t size() const { return rows.size(); }
  void apply(const value_type* p, value_type* q, Exec exec = {}) const {
    const int threads = exec.resolved_threads();
    const std::int64_t lines = rows.ny * rows.nz;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t t = 0; t < lines; ++t)
      for (std::int64_t x = 0; x < rows.nx; ++x)
        q[t * rows.nx + x] = rows.row_at(x, t % rows.ny, t / rows.ny, ArrayLoad<value_type>{p});
  }
};

//! The 5-point Poisson operator on n × n unknowns (row-major) with zero Dirichlet boundary.
template <class T>
struct Poisson5 : StencilMatrix<relax::Poisson5<T>> {
  std::int64_t n = 0;
  explicit Poisson5(std::int64_t side)
      : StencilMatrix<relax::Poisson5<T>>({}, Extents(relax::detail::checked_side(side), side)), n(side) {}
};

namespace detail {
template <class T>
double dot(const T* x, const T* y, std::int64_t n, int threads) {
  double s = 0.0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) reduction(+ : s)
  for (std::int64_t k = 0; k < n; ++k) s += static_cast<double>(x[k]) * static_cast<double>(y[k]);
  return s;
}

//! The dot product of the single-domain solvers: `dot` over `threads` OpenMP threads. The split
//! solver (`cpu/split_cg.hpp`) passes its own, the parts' partials added in part order.
struct ThreadedDot {
  int threads = 1;
  template <class T>
  double operator()(const T* x, const T* y, std::int64_t n) const {
    return dot(x, y, n, threads);
  }
};
}  // namespace detail

namespace detail {

//! ‖b − A x‖₂, r = b − A x formed in T (as the GPU's `cg_residual` does) in the scratch `q`.
template <class T, class Apply, class Dot>
double true_residual_norm(Apply& apply, std::int64_t n, const T* b, const T* x, std::vector<T>& q, const Dot& dot) {
  apply(x, q.data());
  for (std::int64_t k = 0; k < n; ++k) q[k] = b[k] - q[k];
  return std::sqrt(dot(q.data(), q.data(), n));
}

//! The vectors of one CG solve.
template <class T>
struct CgVectors {
  std::vector<T> r, p, q;
  explicit CgVectors(std::int64_t n) : r(n), p(n), q(n) {}
};

//! Records a check of ‖r‖₂ = `norm` and returns the status it decides (`go_on`: none yet).
inline StopReason check(double norm, std::int64_t local, const StopCriterion& stop, const CgOptions& options,
                        CgReport& report) {
  report.residual_norm = norm;
  if (options.record_history) report.history.push_back({report.iterations, report.relative_residual()});
  return stop.decide(norm, report.rhs_norm, local);
}

//! Standard CG from x until `stop` (whose cap counts the iterations of this run) decides;
//! `report.iterations` goes on counting across runs.
template <class T, class Apply, class Dot>
CgStatus cg_run(Apply& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, const StopCriterion& stop,
                CgReport& report, CgVectors<T>& v, int threads, const Dot& dot) {
  std::vector<T>&r = v.r, &p = v.p, &q = v.q;
  apply(x, q.data());
  for (std::int64_t k = 0; k < n; ++k) r[k] = b[k] - q[k];
  p = r;
  double rr = dot(r.data(), r.data(), n);
  report.residual_norm = std::sqrt(rr);
  const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
  if (first != StopReason::go_on) return relax::detail::cg_status_of(first);
  for (std::int64_t it = 1;; ++it) {
    apply(p.data(), q.data());
    const double pq = dot(p.data(), q.data(), n);
    if (!std::isfinite(pq)) return CgStatus::non_finite;
    if (pq <= 0.0) return CgStatus::breakdown;
    const T alpha = static_cast<T>(rr / pq);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t k = 0; k < n; ++k) {
      x[k] += alpha * p[k];
      r[k] -= alpha * q[k];
    }
    const double rr_next = dot(r.data(), r.data(), n);
    ++report.iterations;
    if (!std::isfinite(rr_next)) return CgStatus::non_finite;
    const T beta = static_cast<T>(rr_next / rr);
    rr = rr_next;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t k = 0; k < n; ++k) p[k] = r[k] + beta * p[k];
    if (it % options.check_interval == 0 || it >= stop.max_count) {
      const StopReason d = check(std::sqrt(rr), it, stop, options, report);
      if (d != StopReason::go_on) return relax::detail::cg_status_of(d);
    }
  }
}

template <class T, class Apply>
CgStatus cg_run(Apply& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, const StopCriterion& stop,
                CgReport& report, CgVectors<T>& v, int threads) {
  return cg_run(apply, n, b, x, options, stop, report, v, threads, ThreadedDot{threads});
}

//! Runs `run(stop, report)` (one solve from x, `stop` capping the iterations left), computes the
//! true residual, and restarts from it after a `residual_gap` as `CgOptions::restarts` allows.
template <class T, class Apply, class Run, class Dot>
CgReport solve_checked(Apply& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, Run&& run,
                       const Dot& dot) {
  const auto start = std::chrono::steady_clock::now();
  CgReport report;
  report.rhs_norm = std::sqrt(dot(b, b, n));
  if (report.rhs_norm == 0.0)
    for (std::int64_t k = 0; k < n; ++k)
      relax::detail::require(b[k] == T(0), "b", static_cast<double>(b[k]),
                             relax::detail::rhs_norm_underflow_expected);
  std::vector<T> scratch(n);
  relax::detail::solve_with_restarts(options, report, run,
                                     [&] { return true_residual_norm(apply, n, b, x, scratch, dot); });
  report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

template <class T, class Apply, class Run>
CgReport solve_checked(Apply& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, int threads,
                       Run&& run) {
  return solve_checked(apply, n, b, x, options, std::forward<Run>(run), ThreadedDot{threads});
}

}  // namespace detail

//! Solves A x = b by CG from the initial guess in `x` (length n). `apply(p, q)` computes q = A p.
//! Stops as `CgOptions` says; the report carries the true residual of the returned x.
//! Non-convergence and breakdown are statuses; bad options throw `relax::invalid_argument`.
template <class T, class Apply>
CgReport cg(Apply&& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, Exec exec = {}) {
  options.validate();
  relax::detail::require(n >= 1, "n", n, "at least 1 unknown");
  const int threads = exec.resolved_threads();
  detail::CgVectors<T> v(n);
  return detail::solve_checked(apply, n, b, x, options, threads, [&](const StopCriterion& stop, CgReport& report) {
    return detail::cg_run(apply, n, b, x, options, stop, report, v, threads);
  });
}

namespace detail {

//! The vectors Pipelined adds to standard CG's: w = A r, m = A w, z = A s, s = A p, and t for a
//! direction formed to compute its pᵀAp directly.
template <class T>
struct PipelinedVectors {
  std::vector<T> w, m, z, s, t;
  explicit PipelinedVectors(std::int64_t n) : w(n), m(n), z(n), s(n), t(n) {}
};

//! Pipelined's checkpoint (`CgOptions::switch_gap`, `replace_interval`): t = b − A x (in v.q),
//! the gap ‖t − r‖ tested against the bound of the iterations since r was last b − A x
//! (`since`), ‖A‖ ≥ ‖w‖ / ‖r‖ kept in `norm_a`. Returns true where the gap exceeds it; otherwise,
//! with `replace`, replaces r = t, w = A r, s = A p, z = A s. The GPU's `cg_pipelined_checkpoint`
//! takes the same decision.
template <class T, class Apply, class Dot>
bool pipelined_checkpoint(Apply& apply, std::int64_t n, const T* b, const T* x, const CgOptions& options,
                          double rhs_norm, std::int64_t since, bool replace, double& norm_a, CgVectors<T>& v,
                          PipelinedVectors<T>& u, const Dot& dot) {
  std::vector<T>&r = v.r, &t = v.q;
  apply(x, t.data());
  double gap = 0.0;
  for (std::int64_t k = 0; k < n; ++k) {
    t[k] = b[k] - t[k];
    const double d = static_cast<double>(t[k]) - static_cast<double>(r[k]);
    gap += d * d;
  }
  const double rr = dot(r.data(), r.data(), n);
  if (rr > 0.0) norm_a = std::max(norm_a, std::sqrt(dot(u.w.data(), u.w.data(), n) / rr));
  if (relax::detail::pipelined_gap_exceeds(std::sqrt(gap), since, norm_a, std::sqrt(dot(x, x, n)), rhs_norm,
                                           std::numeric_limits<T>::epsilon(), options.switch_gap))
    return true;
  if (!replace) return false;
  r = t;
  apply(r.data(), u.w.data());
  apply(v.p.data(), u.s.data());
  apply(u.s.data(), u.z.data());
  return false;
}

//! One run of pipelined CG from x (see `cg_pipelined`). Where a checkpoint finds the gap above
//! `CgOptions::switch_gap`, or where the recurrence gives η = δ − β γ / α_prev ≤ 0 and pᵀAp
//! computed directly for p = r + β p_prev (v.p holds p_prev, v.q gets A p) is > 0, the
//! recurrences have drifted and the run goes on as standard CG from x, recording the iteration in
//! `report.switched_at`; a direct pᵀAp ≤ 0 is a breakdown established on true quantities.
template <class T, class Apply, class Dot>
CgStatus cg_pipelined_run(Apply& apply, std::int64_t n, const T* b, T* x, const CgOptions& options,
                          const StopCriterion& stop, CgReport& report, CgVectors<T>& v, PipelinedVectors<T>& u,
                          int threads, const Dot& dot) {
  std::vector<T>&r = v.r, &p = v.p, &q = v.q, &w = u.w, &m = u.m, &z = u.z, &s = u.s, &t = u.t;
  const std::int64_t replace = options.replace_interval > 0 ? options.replace_interval : (sizeof(T) >= 8 ? 50 : 10);
  const double replace_below = options.replace_until_for(sizeof(T)) * options.threshold(report.rhs_norm);
  auto switch_to_standard = [&](std::int64_t it) {
    report.switched_at = report.iterations;
    StopCriterion rest = stop;
    rest.max_count = stop.max_count - it;
    return cg_run(apply, n, b, x, options, rest, report, v, threads, dot);
  };
  apply(x, q.data());
  for (std::int64_t k = 0; k < n; ++k) r[k] = b[k] - q[k];
  apply(r.data(), w.data());
  double gamma_prev = 0.0, alpha_prev = 0.0, norm_a = 0.0;
  std::int64_t exact_at = 0;  // the iteration at which r was last b − A x
  bool replacing = true;      // until ‖r‖ < replace_until × threshold (see CgOptions)
  for (std::int64_t it = 0;; ++it) {
    if (it > 0 && it % replace == 0) {
      if (pipelined_checkpoint(apply, n, b, x, options, report.rhs_norm, it - exact_at, replacing, norm_a, v, u,
                               dot))
        return switch_to_standard(it);
      if (replacing) exact_at = it;
    }
    const double gamma = dot(r.data(), r.data(), n);
    const double delta = dot(w.data(), r.data(), n);
    replacing = replacing && std::sqrt(gamma) > replace_below;
    if (!std::isfinite(gamma) || !std::isfinite(delta)) return CgStatus::non_finite;
    report.residual_norm = std::sqrt(gamma);
    if (options.record_history && it > 0 && it % options.check_interval == 0)
      report.history.push_back({report.iterations, report.relative_residual()});
    const StopReason decided = stop.decide(report.residual_norm, report.rhs_norm, it);
    if (decided != StopReason::go_on) return relax::detail::cg_status_of(decided);
    apply(w.data(), m.data());
    const bool first = it == 0;
    const double beta = first ? 0.0 : gamma / gamma_prev;
    const double eta = first ? delta : delta - beta * gamma / alpha_prev;
    if (!std::isfinite(eta) || !std::isfinite(beta)) return CgStatus::non_finite;
    if (!(eta > 0.0)) {
      const T be = static_cast<T>(beta);
      for (std::int64_t k = 0; k < n; ++k) t[k] = first ? r[k] : r[k] + be * p[k];
      apply(t.data(), q.data());
      const double pq = dot(t.data(), q.data(), n);
      if (!std::isfinite(pq)) return CgStatus::non_finite;
      if (pq <= 0.0) return CgStatus::breakdown;
      return switch_to_standard(it);
    }
    const double alpha = gamma / eta;
    if (!std::isfinite(alpha)) return CgStatus::non_finite;
    const T a = static_cast<T>(alpha), be = static_cast<T>(beta);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t k = 0; k < n; ++k) {
      z[k] = first ? m[k] : m[k] + be * z[k];
      s[k] = first ? w[k] : w[k] + be * s[k];
      p[k] = first ? r[k] : r[k] + be * p[k];
      x[k] += a * p[k];
      r[k] -= a * s[k];
      w[k] -= a * z[k];
    }
    gamma_prev = gamma;
    alpha_prev = alpha;
    ++report.iterations;
  }
}

}  // namespace detail

//! Pipelined CG (Ghysels and Vanroose) from the initial guess in `x`: one fused reduction,
//! (r, r) and (w, r), per iteration, with w = A r, s = A p and z = A s kept by recurrences. Every
//! `replace_interval` iterations (0: 50 for double, 10 for float) a checkpoint computes b − A x:
//! where its gap to r exceeds the bound of `CgOptions::switch_gap`, the recurrences amplify
//! rounding so much that they delay convergence, and the solve goes on as standard CG from x
//! (the report's `switched_at`); otherwise r, w, s, z are replaced by b − A x, A r, A p, A s
//! until ‖r‖ falls below `CgOptions::replace_until` times the stopping threshold (checked every
//! iteration; the GPU checks at its convergence checks), and the gap is still measured after.
//! Where the recurrence pᵀAp is ≤ 0 it computes pᵀAp directly, reports `breakdown` only if that
//! is ≤ 0 too, and otherwise switches to standard CG as well; restarts after a `residual_gap`
//! run standard CG. The host twin of `CG<Operator, Pipelined>`, with the same rules.
template <class T, class Apply>
CgReport cg_pipelined(Apply&& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, Exec exec = {}) {
  options.validate();
  relax::detail::require(n >= 1, "n", n, "at least 1 unknown");
  const int threads = exec.resolved_threads();
  detail::CgVectors<T> v(n);
  detail::PipelinedVectors<T> u(n);
  return detail::solve_checked(apply, n, b, x, options, threads, [&](const StopCriterion& stop, CgReport& report) {
    if (report.restarts > 0 || report.switched_at >= 0)
      return detail::cg_run(apply, n, b, x, options, stop, report, v, threads);
    return detail::cg_pipelined_run(apply, n, b, x, options, stop, report, v, u, threads, detail::ThreadedDot{threads});
  });
}
namespace detail {
//! Checks a CSR system for CG (A's invariants, square and symmetric within `symmetry`, b and x
//! one value per row) and returns q = A p for the solvers above.
template <class T>
auto csr_apply(const Csr<T>& a, const std::vector<T>& b, const std::vector<T>& x, Exec exec,
               const CsrSymmetry& symmetry) {
  require_square_symmetric(a, "A", symmetry);
  relax::detail::require(static_cast<std::int64_t>(b.size()) == a.rows, "b", b.size(),
                         "one value per row of A");
  relax::detail::require(static_cast<std::int64_t>(x.size()) == a.rows, "x", x.size(),
                         "one value per row of A");
  const int threads = exec.resolved_threads();
  return [&a, threads](const T* p, T* q) { a.multiply(p, q, threads); };
}
}  // namespace detail

//! CG on a CSR matrix, checked first: its invariants (`Csr::validate`), square and symmetric
//! within `symmetry` (`relax::invalid_argument` naming `A`, the row and the entry). With
//! `symmetry.symmetrise` it solves with (A + Aᵀ) / 2.
template <class T>
CgReport cg(const Csr<T>& a, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
            Exec exec = {}, const CsrSymmetry& symmetry = {}) {
  if (symmetry.symmetrise) {
    require_square_symmetric(a, "A", symmetry);
    return cg(symmetric_part(a), b, x, options, exec);
  }
  return cg<T>(detail::csr_apply(a, b, x, exec, symmetry), a.rows, b.data(), x.data(), options, exec);
}

//! Pipelined CG on a CSR matrix, checked as `cg` checks it.
template <class T>
CgReport cg_pipelined(const Csr<T>& a, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
                      Exec exec = {}, const CsrSymmetry& symmetry = {}) {
  if (symmetry.symmetrise) {
    require_square_symmetric(a, "A", symmetry);
    return cg_pipelined(symmetric_part(a), b, x, options, exec);
  }
  return cg_pipelined<T>(detail::csr_apply(a, b, x, exec, symmetry), a.rows, b.data(), x.data(), options, exec);
}

//! CG on a stencil's matrix (the Poisson operators, or any symmetric positive definite stencil).
template <class S, class T = typename S::value_type>
CgReport cg(const StencilMatrix<S>& a, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
            Exec exec = {}) {
  relax::detail::require(static_cast<std::int64_t>(b.size()) == a.size(), "b", b.size(), "one value per unknown");
  relax::detail::require(static_cast<std::int64_t>(x.size()) == a.size(), "x", x.size(), "one value per unknown");
  return cg<T>([&](const T* p, T* q) { a.apply(p, q, exec); }, a.size(), b.data(), x.data(), options,
               exec);
}

}  // namespace relax::reference
