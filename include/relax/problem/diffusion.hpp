#pragma once
//! \file
//! The implicit diffusion problem of the block-asynchronous Jacobi study, in 2D and 3D.
//!
//! ∂u/∂t = α∇²u + f on the unit square (cube), nx × ny (× nz) interior points, Dirichlet
//! boundary: the top edge (row 0; in 3D the top face, the cube's face z = 1, which is plane 0 of
//! the storage, whose plane index grows downward: see domain/grid.hpp) held at `top_value`, the
//! other edges (faces) at 0. Each backward-Euler step solves
//!
//!     (1 + 2dr) uⁿ⁺¹ − r Σ_neighbours uⁿ⁺¹ = uⁿ + Δt f,   r = α Δt / h²,  d = 2 or 3,
//!
//! with uⁿ held fixed during the step; the right-hand side b = uⁿ + Δt f is formed once per step
//! (the "fused right-hand side"), and the step's solve starts from uⁿ. The source Δt f is a point
//! at the centre or a Gaussian of peak `amplitude` with σ = n/16 cells along each axis of n
//! points. It is evaluated once, on the host, and stored in the working precision, so every
//! backend adds the same bits.

#include <relax/core/error.hpp>
#include <relax/domain/grid.hpp>
#include <relax/stencil/traits.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
  std::int64_t n = 512;        //!< interior points per side of the square (cube), N
  int dims = 2;                //!< 2: the unit square, 3: the unit cube
  std::int64_t nx = 0, ny = 0, nz = 0;  //!< extents of a rectangular box; 0: n
  double r = 10.0;             //!< coupling r = α Δt / h²
  Source source = Source::gaussian;
  double amplitude = 10.0;     //!< peak of Δt f
  int steps = 10;              //!< backward-Euler steps
  double top_value = 100.0;    //!< Dirichlet value of the top edge (face)

  //! The box: n (or nx, ny, nz where set) points along each of `dims` axes.
  Extents extents() const {
    auto pick = [&](std::int64_t e) { return e > 0 ? e : n; };
    return dims == 3 ? Extents(pick(nx), pick(ny), pick(nz)) : Extents(pick(nx), pick(ny));
  }

  //! \throws relax::invalid_argument naming the first bad field.
  void validate() const {
    detail::require(dims == 2 || dims == 3, "dims", dims, "2 or 3");
    detail::require(n >= 3, "n", n, "at least 3 interior points per side");
    // 0 stands for n; anything below is an error, not n.
    detail::require(nx >= 0, "nx", nx, "at least 3 interior points per side (0: n)");
    detail::require(ny >= 0, "ny", ny, "at least 3 interior points per side (0: n)");
    detail::require(nz >= 0, "nz", nz, "at least 3 interior points per side (0: n)");
    const Extents e = extents();
    detail::require(e.nx >= 3, "nx", e.nx, "at least 3 interior points per side");
    detail::require(e.ny >= 3, "ny", e.ny, "at least 3 interior points per side");
    if (dims == 3) detail::require(e.nz >= 3, "nz", e.nz, "at least 3 interior points per side");
    else detail::require(nz == 0, "nz", nz, "no z extent for a 2D problem (dims = 2)");
    detail::require(std::isfinite(r) && r > 0.0, "r", r, "a finite coupling r > 0");
    detail::require(steps >= 1, "steps", steps, "at least 1 time step");
    detail::require(std::isfinite(amplitude), "amplitude", amplitude, "a finite number");
    detail::require(std::isfinite(top_value), "top_value", top_value, "a finite number");
  }

  //! `validate()`, and what a run in `T` needs on top: r a coupling whose stencil is valid in T
  //! (1 + 2·dims·r finite, r not 0 in T), amplitude and top_value finite in T.
  //! \throws relax::invalid_argument naming the first bad field.
  template <class T>
  void validate_for() const {
    validate();
    detail::require_coupling<T>(r, 2 * dims, "r");
    constexpr const char* finite_in_t = sizeof(T) == sizeof(float) ? "a number finite in float" : "a finite number";
    const double largest = static_cast<double>(std::numeric_limits<T>::max());
    detail::require(std::abs(amplitude) <= largest, "amplitude", amplitude, finite_in_t);
    detail::require(std::abs(top_value) <= largest, "top_value", top_value, finite_in_t);
  }
};

//! u⁰: zero inside, the top edge (face) of the ring, its corners included, at `top_value`.
template <class T>
HostGrid<T> initial_state(const DiffusionParams& p) {
  p.validate_for<T>();
  HostGrid<T> u(p.extents());
  const GridLayout& l = u.layout();
  if (p.dims == 3) {
    for (std::int64_t i = 0; i <= l.ny() + 1; ++i)
      for (std::int64_t j = 0; j <= l.nx() + 1; ++j) u(0, i, j) = static_cast<T>(p.top_value);
  } else {
    for (std::int64_t j = 0; j <= l.nx() + 1; ++j) u(0, j) = static_cast<T>(p.top_value);
  }
  return u;
}

//! Δt f on the interior (zero on the ring and the padding).
template <class T>
HostGrid<T> source_term(const DiffusionParams& p) {
  p.validate_for<T>();
  const Extents e = p.extents();
  HostGrid<T> f(e);
  const std::int64_t kz = p.dims == 3 ? e.nz : 1;
  if (p.source == Source::point) {
    if (p.dims == 3) f((e.nz + 1) / 2, (e.ny + 1) / 2, (e.nx + 1) / 2) = static_cast<T>(p.amplitude);
    else f((e.ny + 1) / 2, (e.nx + 1) / 2) = static_cast<T>(p.amplitude);
    return f;
  }
  // Distances along each axis in units of the longest axis, so σ = n/16 along every axis; on a
  // square the factors are exactly 1 and the bits are those of an isotropic Gaussian.
  const std::int64_t longest = std::max({e.nx, e.ny, kz});
  const double sigma = static_cast<double>(longest) / 16.0;
  const double scale = -1.0 / (2.0 * sigma * sigma);
  auto factor = [&](std::int64_t m) { return static_cast<double>(longest) / static_cast<double>(m); };
  const double fx = factor(e.nx), fy = factor(e.ny), fz = factor(kz);
  // Each point is computed on its own, so the threads do not change any bit.
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < e.ny * kz; ++r) {
    const std::int64_t k = r / e.ny + 1, i = r % e.ny + 1;
    const double di = (static_cast<double>(i) - 0.5 * static_cast<double>(e.ny + 1)) * fy;
    const double dk = (static_cast<double>(k) - 0.5 * static_cast<double>(kz + 1)) * fz;
    for (std::int64_t j = 1; j <= e.nx; ++j) {
      const double dj = (static_cast<double>(j) - 0.5 * static_cast<double>(e.nx + 1)) * fx;
      const double d2 = p.dims == 3 ? di * di + dj * dj + dk * dk : di * di + dj * dj;
      const T v = static_cast<T>(p.amplitude * std::exp(scale * d2));
      if (p.dims == 3) f(k, i, j) = v;
      else f(i, j) = v;
    }
  }
  return f;
}

}  // namespace relax
