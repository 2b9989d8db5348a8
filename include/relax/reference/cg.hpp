#pragma once
//! \file
//! The reference backend's Conjugate Gradient, serial and OpenMP: the oracle of the GPU variants
//! and the CPU baseline of their benchmarks. Works on any symmetric positive definite operator
//! given as `apply(p, q)` (q = A p), on a `Csr<T>`, and on the matrix-free 5-point Poisson
//! operator `Poisson5`. With OpenMP the dot products sum in another order than serially, so the
//! two agree to rounding, not bit for bit.

#include <relax/core/cg_report.hpp>
#include <relax/core/error.hpp>
#include <relax/reference/jacobi.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/stencil/poisson5.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace relax::reference {

//! The 5-point Poisson operator on n × n unknowns (row-major) with zero Dirichlet boundary, in
//! the arithmetic of `relax::poisson5_at`, so it equals the GPU operator bit for bit.
template <class T>
struct Poisson5 {
  std::int64_t n = 0;

  explicit Poisson5(std::int64_t side) : n(side) {
    relax::detail::require(side >= 1, "n", side, "at least 1 unknown per side");
  }
  std::int64_t size() const { return n * n; }
  void apply(const T* p, T* q, Exec exec = {}) const {
    const int threads = exec.resolved_threads();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) q[i * n + j] = poisson5_at(p, n, i, j);
  }
};

namespace detail {
template <class T>
double dot(const T* x, const T* y, std::int64_t n, int threads) {
  double s = 0.0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) reduction(+ : s)
  for (std::int64_t k = 0; k < n; ++k) s += static_cast<double>(x[k]) * static_cast<double>(y[k]);
  return s;
}
}  // namespace detail

//! Solves A x = b by CG from the initial guess in `x` (length n). `apply(p, q)` computes q = A p.
//! Non-convergence and breakdown are statuses; bad options throw `relax::invalid_argument`.
template <class T, class Apply>
CgReport cg(Apply&& apply, std::int64_t n, const T* b, T* x, const CgOptions& options, Exec exec = {}) {
  options.validate();
  relax::detail::require(n >= 1, "n", n, "at least 1 unknown");
  const auto start = std::chrono::steady_clock::now();
  const int threads = exec.resolved_threads();
  std::vector<T> r(n), p(n), q(n);
  CgReport report;
  apply(x, q.data());
  for (std::int64_t k = 0; k < n; ++k) r[k] = b[k] - q[k];
  p = r;
  report.rhs_norm = std::sqrt(detail::dot(b, b, n, threads));
  const double target = std::max(options.rel_tol * report.rhs_norm, options.abs_tol);
  double rr = detail::dot(r.data(), r.data(), n, threads);
  report.residual_norm = std::sqrt(rr);
  auto finish = [&](CgStatus status) {
    report.status = status;
    report.time_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return report;
  };
  if (!std::isfinite(rr)) return finish(CgStatus::non_finite);
  if (report.residual_norm <= target) return finish(CgStatus::converged);
  while (report.iterations < options.max_iterations) {
    apply(p.data(), q.data());
    const double pq = detail::dot(p.data(), q.data(), n, threads);
    if (!std::isfinite(pq)) return finish(CgStatus::non_finite);
    if (pq <= 0.0) return finish(CgStatus::breakdown);
    const T alpha = static_cast<T>(rr / pq);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t k = 0; k < n; ++k) {
      x[k] += alpha * p[k];
      r[k] -= alpha * q[k];
    }
    const double rr_next = detail::dot(r.data(), r.data(), n, threads);
    ++report.iterations;
    if (!std::isfinite(rr_next)) return finish(CgStatus::non_finite);
    const T beta = static_cast<T>(rr_next / rr);
    rr = rr_next;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t k = 0; k < n; ++k) p[k] = r[k] + beta * p[k];
    if (report.iterations % options.check_interval == 0) {
      report.residual_norm = std::sqrt(rr);
      if (options.record_history)
        report.history.push_back({report.iterations, report.relative_residual()});
      if (report.residual_norm <= target) return finish(CgStatus::converged);
    }
  }
  report.residual_norm = std::sqrt(rr);
  return finish(CgStatus::iteration_cap);
}

//! Pipelined CG (Ghysels and Vanroose) from the initial guess in `x`: one fused reduction,
//! (r, r) and (w, r), per iteration, with w = A r, s = A p and z = A s kept by recurrences and
//! replaced by b − A x, A r, A p, A s every `replace_interval` iterations (0: 100 for double, 10
//! for float) until ‖r‖ falls below `CgOptions::replace_until` times the stopping threshold
//! (checked every iteration; the GPU checks at its convergence checks) — the host twin of
//! `CG<Operator, Pipelined>`, with the same stopping rule.
template <class T, class Apply>
CgReport cg_pipelined(Apply&& apply, std::int64_t n, const T* b, T* x, const CgOptions& options,
                      Exec exec = {}) {
  options.validate();
  relax::detail::require(n >= 1, "n", n, "at least 1 unknown");
  const auto start = std::chrono::steady_clock::now();
  const int threads = exec.resolved_threads();
  const std::int64_t replace = options.replace_interval > 0 ? options.replace_interval
                                                            : (sizeof(T) >= 8 ? 100 : 10);
  std::vector<T> r(n), w(n), m(n), z(n), s(n), p(n), q(n);
  CgReport report;
  auto residual = [&] {
    apply(x, q.data());
    for (std::int64_t k = 0; k < n; ++k) r[k] = b[k] - q[k];
    apply(r.data(), w.data());
  };
  residual();
  report.rhs_norm = std::sqrt(detail::dot(b, b, n, threads));
  const double target = std::max(options.rel_tol * report.rhs_norm, options.abs_tol);
  auto finish = [&](CgStatus status, double gamma) {
    report.status = status;
    report.residual_norm = std::sqrt(gamma);
    report.time_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return report;
  };
  double gamma_prev = 0.0, alpha_prev = 0.0;
  bool replacing = true;  // until ‖r‖ < replace_until × target (see CgOptions)
  for (;;) {
    if (report.iterations > 0 && report.iterations % replace == 0 && replacing) {
      residual();
      apply(p.data(), s.data());
      apply(s.data(), z.data());
    }
    const double gamma = detail::dot(r.data(), r.data(), n, threads);
    replacing = replacing && std::sqrt(gamma) > options.replace_until_for(sizeof(T)) * target;
    const double delta = detail::dot(w.data(), r.data(), n, threads);
    if (!std::isfinite(gamma) || !std::isfinite(delta)) return finish(CgStatus::non_finite, gamma);
    if (std::sqrt(gamma) <= target) return finish(CgStatus::converged, gamma);
    if (report.iterations >= options.max_iterations) return finish(CgStatus::iteration_cap, gamma);
    apply(w.data(), m.data());
    const bool first = report.iterations == 0;
    const double beta = first ? 0.0 : gamma / gamma_prev;
    const double denominator = first ? delta : delta - beta * gamma / alpha_prev;
    const double alpha = gamma / denominator;
    if (!std::isfinite(alpha) || !std::isfinite(beta)) return finish(CgStatus::non_finite, gamma);
    if (!(denominator > 0.0)) return finish(CgStatus::breakdown, gamma);
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
    if (options.record_history && report.iterations % options.check_interval == 0)
      report.history.push_back({report.iterations, report.rhs_norm > 0 ? std::sqrt(gamma) / report.rhs_norm
                                                                       : std::sqrt(gamma)});
  }
}

namespace detail {
//! Checks a CSR system for CG (A square and symmetric, b and x one value per row) and returns
//! q = A p for the solvers above.
template <class T>
auto csr_apply(const Csr<T>& a, const std::vector<T>& b, const std::vector<T>& x, Exec exec) {
  require_square_symmetric(a, "A");
  relax::detail::require(static_cast<std::int64_t>(b.size()) == a.rows, "b", b.size(),
                         "one value per row of A");
  relax::detail::require(static_cast<std::int64_t>(x.size()) == a.rows, "x", x.size(),
                         "one value per row of A");
  const int threads = exec.resolved_threads();
  return [&a, threads](const T* p, T* q) { a.multiply(p, q, threads); };
}
}  // namespace detail

//! CG on a CSR matrix, which must be square and symmetric (checked: `relax::invalid_argument`
//! naming `A`).
template <class T>
CgReport cg(const Csr<T>& a, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
            Exec exec = {}) {
  return cg<T>(detail::csr_apply(a, b, x, exec), a.rows, b.data(), x.data(), options, exec);
}

//! Pipelined CG on a CSR matrix (square and symmetric, checked).
template <class T>
CgReport cg_pipelined(const Csr<T>& a, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
                      Exec exec = {}) {
  return cg_pipelined<T>(detail::csr_apply(a, b, x, exec), a.rows, b.data(), x.data(), options, exec);
}

//! CG on the matrix-free Poisson operator.
template <class T>
CgReport cg(const Poisson5<T>& a, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
            Exec exec = {}) {
  relax::detail::require(static_cast<std::int64_t>(b.size()) == a.size(), "b", b.size(), "n * n values");
  relax::detail::require(static_cast<std::int64_t>(x.size()) == a.size(), "x", x.size(), "n * n values");
  return cg<T>([&](const T* p, T* q) { a.apply(p, q, exec); }, a.size(), b.data(), x.data(), options,
               exec);
}

}  // namespace relax::reference
