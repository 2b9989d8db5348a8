#pragma once
//! \file
//! The stencil concept: what a stencil policy provides to work with every strategy, in 2D and 3D;
//! it brings `Neighbours` (domain/neighbours.hpp), the view of a point's neighbourhood a stencil reads.
//!
//! A stencil is a copyable type with
//! - `value_type` (float or double), `static constexpr int rank` (2 or 3) and
//!   `static constexpr int radius` (1: the kernels read the nearest neighbour along each axis);
//! - `value_type update(const U& u, Point at, value_type b) const` — the Jacobi update of the
//!   point `at` (its global index, `relax::Point`) from its neighbours `u(dx, dy)` in 2D or
//!   `u(dx, dy, dz)` in 3D and its right-hand side b;
//! - `value_type residual(const U& u, Point at, value_type b) const` — (b − A u) at the point;
//! both templates over the neighbourhood type U, `RELAX_HOST_DEVICE`, and written in `relax::arith`
//! operations so every backend computes the same bits. Optionally `double host_coupling() const`:
//! the coupling `Auto` uses for a 2D stencil whose `update` cannot run on the host with its own
//! data (a coefficient field in device memory); without it `Auto` calls `update` on the host once
//! (`relax::equivalent_coupling`, strategy/auto.hpp). `u(0, 0)` is the point itself; for the
//! orientation of the offsets (north is dy = −1) see `relax/domain/grid.hpp`.

#include <relax/config.hpp>
#include <relax/domain/grid.hpp>
#include <relax/domain/neighbours.hpp>

#include <cmath>
#include <type_traits>
#include <utility>

namespace relax {

namespace detail {
template <class S, class = void>
struct has_stencil_constants : std::false_type {};
template <class S>
struct has_stencil_constants<S, std::void_t<typename S::value_type, decltype(S::radius), decltype(S::rank)>>
    : std::bool_constant<std::is_floating_point_v<typename S::value_type> && (S::rank == 2 || S::rank == 3)> {};

template <class S, class = void>
struct has_stencil_functions : std::false_type {};
template <class S>
struct has_stencil_functions<
    S, std::void_t<decltype(std::declval<const S&>().update(
                       std::declval<const Neighbours<typename S::value_type, S::rank>&>(), Point{},
                       std::declval<typename S::value_type>())),
                   decltype(std::declval<const S&>().residual(
                       std::declval<const Neighbours<typename S::value_type, S::rank>&>(), Point{},
                       std::declval<typename S::value_type>()))>> : std::is_copy_constructible<S> {};

template <class S, bool = has_stencil_constants<S>::value>
struct is_stencil : std::false_type {};
template <class S>
struct is_stencil<S, true> : has_stencil_functions<S> {};
}  // namespace detail

//! True when `S` meets the stencil requirements above.
template <class S>
inline constexpr bool is_stencil_v = detail::is_stencil<S>::value;

//! The neighbourhood type a stencil `S` reads.
template <class S>
using neighbours_t = Neighbours<typename S::value_type, S::rank>;

namespace detail {
//! Throws unless a stencil coupling given in double is a finite number > 0 that stays finite
//! and > 0 in `T`, with a finite diagonal 1 + `neighbours`·r (a float stencil built with r = 1e300
//! would otherwise hold r = inf).
template <class T>
void require_coupling(double coupling, int neighbours, const char* what) {
  const T r = static_cast<T>(coupling);
  const T diag = T(1) + T(neighbours) * r;
  const bool ok = std::isfinite(coupling) && coupling > 0.0 && std::isfinite(r) && r > T(0) &&
                  std::isfinite(diag);
  require(ok, what, coupling,
          sizeof(T) == 4 ? "a coupling r > 0 whose diagonal 1 + 2·rank·r is finite in float"
                         : "a coupling r > 0 whose diagonal 1 + 2·rank·r is finite in double");
}
}  // namespace detail

}  // namespace relax
