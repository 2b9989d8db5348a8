#pragma once
//! \file
//! The Poisson operators of CG as stencils of the concept (`relax/stencil/traits.hpp`):
//!
//!     Poisson5:  (A u) = 4 c − n − s − w − e              (2D, five points)
//!     Poisson7:  (A u) = 6 c − n − s − w − e − up − down  (3D, seven points)
//!
//! with zero Dirichlet values outside the box. `residual` is b − A u with A u evaluated in that
//! order, so `stencil_apply` (−residual at b = 0, an exact negation) gives the same bits as A u;
//! `update` is the Jacobi update (b + Σ neighbours) / (2·rank). Any stencil can serve CG through
//! `relax::StencilOperator` (`relax/stencil/operator.cuh`) if its A is symmetric positive definite.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/domain/grid.hpp>
#include <relax/stencil/traits.hpp>

#include <type_traits>

namespace relax {

template <class T>
struct Poisson5 {
  static_assert(std::is_floating_point_v<T>, "relax::Poisson5<T>: T must be float or double");
  using value_type = T;
  static constexpr int rank = 2;
  static constexpr int radius = 1;

  template <class U>
  RELAX_HOST_DEVICE T update(const U& u, Point, T b) const {
    using namespace arith;
    return mul(add(b, add(add(u(0, -1), u(0, 1)), add(u(-1, 0), u(1, 0)))), T(0.25));
  }
  template <class U>
  RELAX_HOST_DEVICE T residual(const U& u, Point, T b) const {
    using namespace arith;
    return sub(b, sub(sub(sub(sub(mul(T(4), u(0, 0)), u(0, -1)), u(0, 1)), u(-1, 0)), u(1, 0)));
  }
};

template <class T>
struct Poisson7 {
  static_assert(std::is_floating_point_v<T>, "relax::Poisson7<T>: T must be float or double");
  using value_type = T;
  static constexpr int rank = 3;
  static constexpr int radius = 1;

  template <class U>
  RELAX_HOST_DEVICE T update(const U& u, Point, T b) const {
    using namespace arith;
    const T plane = add(add(u(0, -1, 0), u(0, 1, 0)), add(u(-1, 0, 0), u(1, 0, 0)));
    return div(add(b, add(plane, add(u(0, 0, -1), u(0, 0, 1)))), T(6));
  }
  template <class U>
  RELAX_HOST_DEVICE T residual(const U& u, Point, T b) const {
    using namespace arith;
    const T plane = sub(sub(sub(sub(mul(T(6), u(0, 0, 0)), u(0, -1, 0)), u(0, 1, 0)), u(-1, 0, 0)), u(1, 0, 0));
    return sub(b, sub(sub(plane, u(0, 0, -1)), u(0, 0, 1)));
  }
};

}  // namespace relax
