#pragma once
//! \file
//! The implicit diffusion problem of the block-asynchronous Jacobi study.
//!
//! ∂u/∂t = α∇²u + f on the unit square, N × N interior points, Dirichlet boundary: the top edge
//! (row 0) held at `top_value`, the other edges at 0. Each backward-Euler step solves
//!
//!     (1 + 4r) uⁿ⁺¹ − r (N + S + E + W) uⁿ⁺¹ = uⁿ + Δt f,   r = α Δt / h²,
//!
//! with uⁿ held fixed during the step; the right-hand side b = uⁿ + Δt f is formed once per step
//! (the "fused right-hand side"), and the step's solve starts from uⁿ. The source Δt f is a point
//! at the centre or a Gaussian with σ = N/16 cells, of peak `amplitude`. It is evaluated once, on
//! the host, and stored in the working precision, so every backend adds the same bits.

#include <relax/core/error.hpp>
#include <relax/stencil/grid.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace relax {

//! The shape of the source term.
enum class Source { point, gaussian };

inline const char* to_string(Source s) { return s == Source::point ? "point" : "gaussian"; }

//! "point" or "gaussian"; throws `relax::invalid_argument` naming `source` otherwise.
inline Source parse_source(std::string_view text) {
  if (text == "point") return Source::point;
  if (text == "gaussian") return Source::gaussian;
  throw invalid_argument("source", std::string(text), "\"point\" or \"gaussian\"");
}

//! Parameters of a run of implicit diffusion steps.
struct DiffusionParams {
  std::int64_t n = 512;        //!< interior points per side (N)
  double r = 10.0;             //!< coupling r = α Δt / h²
  Source source = Source::gaussian;
  double amplitude = 10.0;     //!< peak of Δt f
  int steps = 10;              //!< backward-Euler steps
  double top_value = 100.0;    //!< Dirichlet value of the top edge

  //! \throws relax::invalid_argument naming the first bad field.
  void validate() const {
    detail::require(n >= 3, "n", n, "at least 3 interior points per side");
    detail::require(std::isfinite(r) && r > 0.0, "r", r, "a finite coupling r > 0");
    detail::require(steps >= 1, "steps", steps, "at least 1 time step");
    detail::require(std::isfinite(amplitude), "amplitude", amplitude, "a finite number");
    detail::require(std::isfinite(top_value), "top_value", top_value, "a finite number");
  }
};

//! u⁰: zero inside, the boundary ring set (top row, corners included, at `top_value`).
template <class T>
HostGrid<T> initial_state(const DiffusionParams& p) {
  p.validate();
  HostGrid<T> u(p.n);
  for (std::int64_t j = 0; j <= p.n + 1; ++j) u(0, j) = static_cast<T>(p.top_value);
  return u;
}

//! Δt f on the interior (zero on the ring and the padding).
template <class T>
HostGrid<T> source_term(const DiffusionParams& p) {
  p.validate();
  HostGrid<T> f(p.n);
  if (p.source == Source::point) {
    const std::int64_t c = (p.n + 1) / 2;
    f(c, c) = static_cast<T>(p.amplitude);
    return f;
  }
  const double c = 0.5 * static_cast<double>(p.n + 1);
  const double sigma = static_cast<double>(p.n) / 16.0;
  const double scale = -1.0 / (2.0 * sigma * sigma);
  // Each point is computed on its own, so the threads do not change any bit.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 1; i <= p.n; ++i) {
    const double di = static_cast<double>(i) - c;
    for (std::int64_t j = 1; j <= p.n; ++j) {
      const double dj = static_cast<double>(j) - c;
      f(i, j) = static_cast<T>(p.amplitude * std::exp(scale * (di * di + dj * dj)));
    }
  }
  return f;
}

}  // namespace relax
