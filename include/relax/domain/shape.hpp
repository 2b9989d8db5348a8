#pragma once
//! \file
//! `Shape`: what a kernel or a host loop needs of a grid's layout, passed by value, and the
//! gathering of a point's neighbourhood from flat storage. Shared by the reference backend and
//! every GPU agent, so both address points and neighbours the same way.

#include <relax/config.hpp>
#include <relax/domain/grid.hpp>
#include <relax/domain/neighbours.hpp>

#include <cstdint>

namespace relax::detail {

//! Extents and strides of a grid with a one-cell ring, offsets counted from point (0, 0[, 0]).
//! In 2D, plane index k is 0 (a single plane without ring planes).
struct Shape {
  std::int64_t nx = 0, ny = 0, nz = 1;
  std::int64_t pitch = 0, plane = 0;
  Point origin;  //!< global index of interior point (1, 1[, 1])

  //! Offset of point (k, i, j) from point (0, 0, 0).
  RELAX_HOST_DEVICE std::int64_t at(std::int64_t k, std::int64_t i, std::int64_t j) const {
    return k * plane + i * pitch + j;
  }
  //! The global index of grid point (k, i, j) of a rank-`Rank` grid.
  template <int Rank>
  RELAX_HOST_DEVICE Point point(std::int64_t k, std::int64_t i, std::int64_t j) const {
    return {origin.x + j - 1, origin.y + i - 1, origin.z + (Rank == 3 ? k - 1 : 0)};
  }
};

//! The shape of layout `l` (a one-cell ring).
//! The first of `total` units in share `part` of `parts` equal shares (to a unit): share p is
//! [share_begin(total, parts, p), share_begin(total, parts, p + 1)), the shares tile [0, total)
//! and their sizes differ by at most one (the 2D streamed device loop's blocks' rows).
RELAX_HOST_DEVICE inline std::int64_t share_begin(std::int64_t total, std::int64_t parts, std::int64_t part) {
  return total * part / parts;
}

inline Shape shape_of(const GridLayout& l) {
  return {l.nx(), l.ny(), l.nz(), l.pitch, l.rank() == 3 ? l.plane : 0, l.origin};
}

//! The first interior plane index: 1 in 3D, 0 in 2D (no ring planes).
template <int Rank>
inline constexpr std::int64_t first_plane = Rank == 3 ? 1 : 0;

//! The neighbourhood of the point at offset `at` of `u` (strides of `g`).
template <int Rank, class T>
RELAX_HOST_DEVICE inline Neighbours<T, Rank> gather(const T* u, std::int64_t at, const Shape& g) {
  if constexpr (Rank == 2) {
    return {u[at], u[at - g.pitch], u[at + g.pitch], u[at + 1], u[at - 1]};
  } else {
    return {u[at], u[at - g.pitch], u[at + g.pitch], u[at + 1], u[at - 1], u[at - g.plane], u[at + g.plane]};
  }
}

}  // namespace relax::detail
