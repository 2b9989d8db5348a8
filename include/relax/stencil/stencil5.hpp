#pragma once
//! \file
//! `Stencil5<T>`: the five-point operator of one backward-Euler step of 2D diffusion,
//!
//!     A = (1 + 4r) I − r (N + S + E + W),   r = α Δt / h²,
//!
//! with its Jacobi update and its residual. Both are written once, in the round-to-nearest
//! operations of `relax::arith`, so every backend computes the same bits.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/domain/grid.hpp>
#include <relax/stencil/traits.hpp>

#include <cmath>
#include <type_traits>

namespace relax {

template <class T>
struct Stencil5 {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "relax::Stencil5<T>: T must be float or double");
  using value_type = T;
  static constexpr int rank = 2;
  //! Cells a point reads on each side: the width of the halo a tile needs per sweep.
  static constexpr int radius = 1;

  T r = T(0);         //!< coupling r = α Δt / h², > 0
  T inv_diag = T(0);  //!< 1 / (1 + 4r), rounded once here so every backend multiplies by the same bits

  Stencil5() = default;
  //! \throws relax::invalid_argument if `r` is not a finite number > 0 in T (with 1 + 4r finite).
  explicit Stencil5(double coupling) {
    detail::require_coupling<T>(coupling, 4, "r");
    r = static_cast<T>(coupling);
    inv_diag = T(1) / (T(1) + T(4) * r);
  }

  //! One Jacobi update of a point: u' = (b + r ((n + s) + (e + w))) / (1 + 4r).
  template <class U>
  RELAX_HOST_DEVICE T update(const U& u, Point, T b) const {
    using namespace arith;
    return mul(add(b, mul(r, add(add(u(0, -1), u(0, 1)), add(u(1, 0), u(-1, 0))))), inv_diag);
  }

  //! The residual (b − A u) at a point, in difference form:
  //!
  //!     (b − c) + r ((n − c) + (s − c) + (e − c) + (w − c)).
  //!
  //! The naive form b − (1 + 4r) c + r Σ nbrs subtracts two numbers near (1 + 4r) c; in float32 at
  //! r = 100 that loses enough bits to underestimate a small residual several times over. Here the
  //! differences of neighbouring values are formed first, each nearly exact.
  template <class U>
  RELAX_HOST_DEVICE T residual(const U& u, Point, T b) const {
    using namespace arith;
    const T c = u(0, 0);
    return add(sub(b, c), mul(r, add(add(sub(u(0, -1), c), sub(u(0, 1), c)),
                                     add(sub(u(1, 0), c), sub(u(-1, 0), c)))));
  }
};

}  // namespace relax
