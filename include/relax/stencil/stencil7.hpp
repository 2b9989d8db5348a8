#pragma once
//! \file
//! `Stencil7<T>`: the seven-point operator of one backward-Euler step of 3D diffusion,
//!
//!     A = (1 + 6r) I − r (N + S + E + W + Up + Down),   r = α Δt / h²,
//!
//! with its Jacobi update and its difference-form residual, in `relax::arith` operations.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/domain/grid.hpp>
#include <relax/stencil/traits.hpp>

#include <cmath>
#include <type_traits>

namespace relax {

template <class T>
struct Stencil7 {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "relax::Stencil7<T>: T must be float or double");
  using value_type = T;
  static constexpr int rank = 3;
  static constexpr int radius = 1;

  T r = T(0);         //!< coupling r = α Δt / h², > 0
  T inv_diag = T(0);  //!< 1 / (1 + 6r), rounded once

  Stencil7() = default;
  //! \throws relax::invalid_argument if `r` is not a finite number > 0 in T (with 1 + 6r finite).
  explicit Stencil7(double coupling) {
    detail::require_coupling<T>(coupling, 6, "r");
    r = static_cast<T>(coupling);
    inv_diag = T(1) / (T(1) + T(6) * r);
  }

  //! u' = (b + r (((n + s) + (e + w)) + (up + down))) / (1 + 6r).
  template <class U>
  RELAX_HOST_DEVICE T update(const U& u, Point, T b) const {
    using namespace arith;
    const T plane = add(add(u(0, -1, 0), u(0, 1, 0)), add(u(1, 0, 0), u(-1, 0, 0)));
    return mul(add(b, mul(r, add(plane, add(u(0, 0, -1), u(0, 0, 1))))), inv_diag);
  }

  //! (b − c) + r ((((n − c) + (s − c)) + ((e − c) + (w − c))) + ((up − c) + (down − c))): the
  //! difference form, for the reason given at `Stencil5::residual`.
  template <class U>
  RELAX_HOST_DEVICE T residual(const U& u, Point, T b) const {
    using namespace arith;
    const T c = u(0, 0, 0);
    const T plane = add(add(sub(u(0, -1, 0), c), sub(u(0, 1, 0), c)),
                        add(sub(u(1, 0, 0), c), sub(u(-1, 0, 0), c)));
    return add(sub(b, c), mul(r, add(plane, add(sub(u(0, 0, -1), c), sub(u(0, 0, 1), c)))));
  }
};

}  // namespace relax
