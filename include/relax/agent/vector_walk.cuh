#pragma once
//! \file
//! The block-level walk of the synchronous sweep and the residual: how a thread visits its
//! points. A thread owns 16 bytes of consecutive points (4 floats, 2 doubles) of a row and walks
//! `Rows` consecutive rows (2D) or planes (3D) with 16-byte loads; the neighbours along the walk
//! pass down through registers, the other vertical neighbours (3D: north and south) are vector
//! loads that mostly hit L1, and the east and west neighbours outside the vector are single loads
//! of lines the neighbouring lanes brought in. Memory-bound kernels need these wide accesses to
//! keep enough bytes in flight to approach the copy ceiling.

#include <relax/config.hpp>
#include <relax/core/launch.hpp>
#include <relax/domain/shape.hpp>
#include <relax/stencil/traits.hpp>

#include <cstdint>

namespace relax::detail {

//! Sixteen bytes of consecutive points.
template <class T>
struct alignas(16) Vec16 {
  static constexpr int width = 16 / static_cast<int>(sizeof(T));
  T v[width];
};

//! The points at `p` .. p + valid − 1 (valid < width only at the last vector of a row; the rest
//! of the vector is zero).
template <class T>
__device__ __forceinline__ Vec16<T> load_vector(const T* p, int valid) {
  constexpr int W = Vec16<T>::width;
  if (valid == W) return *reinterpret_cast<const Vec16<T>*>(p);
  // Unrolled with a predicate, not a loop to `valid`: a loop bounded at run time indexes x
  // dynamically, which puts it in local memory (in the 3D walk that doubled the sectors written
  // to L2, measured with ncu on the H200).
  Vec16<T> x{};
#pragma unroll
  for (int q = 0; q < W; ++q)
    if (q < valid) x.v[q] = p[q];
  return x;
}

//! Stores the first `valid` points of `x` at `p` (one vector store when the vector is whole, so
//! the ring past the end of a row is never written).
template <class T>
__device__ __forceinline__ void store_vector(T* p, const Vec16<T>& x, int valid) {
  if (valid == Vec16<T>::width) {
    *reinterpret_cast<Vec16<T>*>(p) = x;
  } else {
#pragma unroll
    for (int q = 0; q < Vec16<T>::width; ++q)
      if (q < valid) p[q] = x.v[q];
  }
}

//! A row vector and its neighbourhood: the vectors above and below it (north, south; in 3D also
//! up and down) and the points west of its first and east of its last valid point.
template <class T, int Rank>
struct VectorStar {
  Vec16<T> c, n, s, up, down;  // up, down: 3D only
  T west, east;
  int valid;
  Point first;  //!< global index of the first point

  //! The neighbourhood of point q of the vector, as a stencil reads it.
  __device__ __forceinline__ Neighbours<T, Rank> at(int q) const {
    const T e = q + 1 < valid ? c.v[q + 1] : east;
    const T w = q > 0 ? c.v[q - 1] : west;
    if constexpr (Rank == 2) return {c.v[q], n.v[q], s.v[q], e, w};
    else return {c.v[q], n.v[q], s.v[q], e, w, up.v[q], down.v[q]};
  }
  __device__ __forceinline__ Point point(int q) const { return {first.x + q, first.y, first.z}; }
};

//! The launch grid of `walk_vectors` for a box of shape `g`.
template <int BlockX, int BlockY, int Rows, int Rank, class T>
dim3 walk_grid(const Shape& g) {
  constexpr int W = Vec16<T>::width;
  if constexpr (Rank == 2) return tile_grid(g.nx, g.ny, BlockX * W, BlockY * Rows);
  else return tile_grid(g.nx, g.ny * tile_count(g.nz, Rows), BlockX * W, BlockY);
}

//! The tiles of `walk_vectors` along its second grid axis for a box of shape `g`: row bands (2D),
//! or row × plane-segment pairs (3D).
template <int BlockY, int Rows, int Rank>
RELAX_HOST_DEVICE inline std::int64_t walk_tiles(const Shape& g) {
  const std::int64_t tiles_y = tile_count(g.ny, Rank == 2 ? BlockY * Rows : BlockY);
  return Rank == 2 ? tiles_y : tiles_y * tile_count(g.nz, Rows);
}

//! The calling thread's row vectors of x-block `bx` and tile `t` (< `walk_tiles`) of the walk in
//! blocks of `BlockX × BlockY` threads; see `walk_vectors`. Threads past the box do nothing.
template <int BlockX, int BlockY, int Rows, int Rank, class T, class Visit>
__device__ __forceinline__ void walk_tile(std::int64_t bx, std::int64_t t, const T* __restrict__ u,
                                          const T* __restrict__ b, const Shape& g, Visit&& visit) {
  constexpr int W = Vec16<T>::width;
  const std::int64_t j0 = (bx * BlockX + threadIdx.x) * W + 1;
  if (j0 > g.nx) return;
  VectorStar<T, Rank> star;
  star.valid = j0 + W - 1 <= g.nx ? W : static_cast<int>(g.nx - j0 + 1);
  // The walk's axis: rows in 2D, planes in 3D; `step` is its stride.
  const std::int64_t step = Rank == 2 ? g.pitch : g.plane;
  const std::int64_t along = Rank == 2 ? g.ny : g.nz;
  const std::int64_t tiles_y = tile_count(g.ny, Rank == 2 ? BlockY * Rows : BlockY);
  const std::int64_t i = Rank == 2 ? t * (BlockY * Rows) + threadIdx.y * Rows + 1
                                   : (t % tiles_y) * BlockY + threadIdx.y + 1;
  const std::int64_t k0 = Rank == 2 ? 0 : (t / tiles_y) * Rows + 1;
  const std::int64_t s0 = Rank == 2 ? i : k0;  // first position along the walk
  if (i > g.ny) return;
  std::int64_t at = g.at(k0, i, j0);
  Vec16<T> before = load_vector(u + at - step, star.valid);
  Vec16<T> centre = load_vector(u + at, star.valid);
#pragma unroll
  for (int r = 0; r < Rows; ++r, at += step) {
    if (s0 + r > along) break;
    const Vec16<T> after = load_vector(u + at + step, star.valid);
    star.c = centre;
    if constexpr (Rank == 2) {
      star.n = before;
      star.s = after;
      star.first = g.point<2>(0, i + r, j0);
    } else {
      star.up = before;
      star.down = after;
      star.n = load_vector(u + at - g.pitch, star.valid);
      star.s = load_vector(u + at + g.pitch, star.valid);
      star.first = g.point<3>(k0 + r, i, j0);
    }
    star.west = u[at - 1];
    star.east = u[at + star.valid];
    visit(at, load_vector(b + at, star.valid), star);
    before = centre;
    centre = after;
  }
}

//! Walks the points of the calling thread in blocks of `BlockX × BlockY` threads over the
//! interior of the box `g` (grid from `walk_grid`). For each row vector it calls
//! `visit(at, rhs, star)`: `at` the offset of its first point from point (0, 0[, 0]), `rhs` its
//! b, `star` its neighbourhood. `u` and `b` point at point (0, 0[, 0]) of grids whose interior
//! rows start 16-byte aligned.
template <int BlockX, int BlockY, int Rows, int Rank, class T, class Visit>
__device__ __forceinline__ void walk_vectors(const T* __restrict__ u, const T* __restrict__ b,
                                             const Shape& g, Visit&& visit) {
  const std::int64_t tiles = walk_tiles<BlockY, Rows, Rank>(g);
  for (std::int64_t t = blockIdx.y; t < tiles; t += gridDim.y)
    walk_tile<BlockX, BlockY, Rows, Rank>(blockIdx.x, t, u, b, g, visit);
}

}  // namespace relax::detail
