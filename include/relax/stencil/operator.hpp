#pragma once
//! \file
//! A stencil as a matrix: the rows of A on the unknowns of a box stored x-fastest without a ring
//! (unknown k = (z · ny + y) · nx + x), with zero Dirichlet values outside. Written once for host
//! and device: the reference CG and the GPU CG kernels both read A through `StencilRows`, so they
//! compute the same bits.

#include <relax/config.hpp>
#include <relax/domain/grid.hpp>
#include <relax/stencil/traits.hpp>

#include <cstdint>

namespace relax {

//! (A u) at a point: −residual(u, at, 0), an exact negation of the stencil's own residual.
template <class S, class U>
RELAX_HOST_DEVICE inline typename S::value_type stencil_apply(const S& s, const U& u, Point at) {
  return -s.residual(u, at, typename S::value_type(0));
}

//! Reads a vector element: the `load` of `StencilRows::row` for a plain array.
template <class T>
struct ArrayLoad {
  const T* p;
  RELAX_HOST_DEVICE T operator()(std::int64_t k) const { return p[k]; }
};

//! The rows of the matrix of stencil `S` on a box of `nx × ny (× nz)` unknowns.
template <class S>
struct StencilRows {
  using value_type = typename S::value_type;
  S stencil;
  std::int64_t nx = 1, ny = 1, nz = 1;

  RELAX_HOST_DEVICE std::int64_t size() const { return nx * ny * nz; }

  //! (A v) at unknown (x, y, z), with v read through `load(k)`.
  template <class Load>
  RELAX_HOST_DEVICE value_type row_at(std::int64_t x, std::int64_t y, std::int64_t z, const Load& load) const {
    using T = value_type;
    const std::int64_t k = (z * ny + y) * nx + x;
    const T w = x > 0 ? load(k - 1) : T(0);
    const T e = x + 1 < nx ? load(k + 1) : T(0);
    const T n = y > 0 ? load(k - nx) : T(0);
    const T s = y + 1 < ny ? load(k + nx) : T(0);
    if constexpr (S::rank == 2) {
      return stencil_apply(stencil, Neighbours<T, 2>{load(k), n, s, e, w}, Point{x, y, 0});
    } else {
      const T up = z > 0 ? load(k - nx * ny) : T(0);
      const T down = z + 1 < nz ? load(k + nx * ny) : T(0);
      return stencil_apply(stencil, Neighbours<T, 3>{load(k), n, s, e, w, up, down}, Point{x, y, z});
    }
  }

  //! (A v)_k, with v read through `load` (the interface of the fused CG kernels).
  //! In 2D one division splits k (the fused kernels call this once per unknown and iteration),
  //! in 32 bits where the box has fewer than 2³² unknowns (on the GPU a 64-bit division is a
  //! call of several times the instructions; the quotient is the same).
  template <class Load>
  RELAX_HOST_DEVICE value_type row(std::int64_t k, const Load& load) const {
    const bool narrow = size() <= std::int64_t{0xffffffff};
    auto divide = [narrow](std::int64_t a, std::int64_t b) -> std::int64_t {
      return narrow ? std::int64_t{static_cast<std::uint32_t>(a) / static_cast<std::uint32_t>(b)} : a / b;
    };
    if constexpr (S::rank == 2) {
      const std::int64_t y = divide(k, nx);
      return row_at(k - y * nx, y, 0, load);
    } else {
      const std::int64_t plane = nx * ny, z = divide(k, plane), rest = k - z * plane, y = divide(rest, nx);
      return row_at(rest - y * nx, y, z, load);
    }
  }
};

namespace detail {
//! `n` if it is a valid side of a square or cube of unknowns.
inline std::int64_t checked_side(std::int64_t n) {
  require(n >= 1, "n", n, "at least 1 unknown per side");
  return n;
}
}  // namespace detail

//! The rows of `s` on the box `e`. \throws relax::invalid_argument for a box the stencil's rank
//! does not match.
template <class S>
StencilRows<S> stencil_rows(const S& s, const Extents& e) {
  static_assert(is_stencil_v<S>, "relax::stencil_rows: S is not a stencil (is_stencil_v)");
  e.validate();
  detail::require(e.rank == S::rank, "extents", e.to_text(), "a box of the stencil's rank");
  return {s, e.nx, e.ny, e.nz};
}

}  // namespace relax
