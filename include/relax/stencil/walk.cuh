#pragma once
//! \file
//! How a thread visits its points in the sweep and residual kernels: 16 bytes of consecutive
//! points (4 floats, 2 doubles) in each of `Rows` consecutive rows, with 16-byte loads, the
//! vertical neighbours passed down through registers, and the east and west neighbours outside
//! the vector loaded singly (they hit L1: the neighbouring lanes loaded those lines). Memory-bound
//! kernels need these wide accesses to keep enough bytes in flight to approach the copy ceiling.

#include <relax/config.hpp>
#include <relax/core/launch.hpp>

#include <cstdint>

namespace relax::detail {

//! Sixteen bytes of consecutive points.
template <class T>
struct alignas(16) Vec16 {
  static constexpr int width = 16 / static_cast<int>(sizeof(T));
  T v[width];
};

//! The points of row `i` at columns j0 .. j0 + valid - 1 (valid < width only at the last vector of
//! a row; the rest of the vector is zero). `p` points at (i, j0).
template <class T>
__device__ __forceinline__ Vec16<T> load_vector(const T* p, int valid) {
  constexpr int W = Vec16<T>::width;
  if (valid == W) return *reinterpret_cast<const Vec16<T>*>(p);
  Vec16<T> x{};
  for (int q = 0; q < valid; ++q) x.v[q] = p[q];
  return x;
}

//! Walks the points of the calling thread in a 2D grid of `BlockX × BlockY` blocks covering the
//! interior of an n × n grid (see `tile_grid`, with tiles of BlockX·width × BlockY·Rows points).
//! For each row vector it calls
//!
//!     visit(at, valid, rhs, up, centre, down, west, east)
//!
//! where `at` is the offset of its first point from point (0, 0), `valid` how many of its points
//! are interior, the vectors hold b and the north, own and south values of u, and `west`/`east`
//! the values left of the first and right of the last valid point. `u` and `b` point at point
//! (0, 0) of grids with row pitch `pitch` whose interior rows start 16-byte aligned.
template <int BlockX, int BlockY, int Rows, class T, class Visit>
__device__ __forceinline__ void walk_row_vectors(const T* __restrict__ u, const T* __restrict__ b,
                                                 std::int64_t n, std::int64_t pitch, Visit&& visit) {
  constexpr int W = Vec16<T>::width;
  const std::int64_t j0 = (static_cast<std::int64_t>(blockIdx.x) * BlockX + threadIdx.x) * W + 1;
  if (j0 > n) return;
  const int valid = j0 + W - 1 <= n ? W : static_cast<int>(n - j0 + 1);
  const std::int64_t tiles_y = tile_count(n, BlockY * Rows);
  for (std::int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const std::int64_t i0 = ty * (BlockY * Rows) + threadIdx.y * Rows + 1;
    if (i0 > n) continue;
    Vec16<T> up = load_vector(u + (i0 - 1) * pitch + j0, valid);
    Vec16<T> centre = load_vector(u + i0 * pitch + j0, valid);
#pragma unroll
    for (int k = 0; k < Rows; ++k) {
      if (i0 + k > n) break;
      const std::int64_t at = (i0 + k) * pitch + j0;
      const Vec16<T> down = load_vector(u + at + pitch, valid);
      visit(at, valid, load_vector(b + at, valid), up, centre, down, u[at - 1], u[at + valid]);
      up = centre;
      centre = down;
    }
  }
}

//! Applies `op(b, c, n, s, e, w)` to each valid point of a row vector visited by
//! `walk_row_vectors`, passing the right east and west neighbours.
template <class T, class Op>
__device__ __forceinline__ void for_each_point(int valid, const Vec16<T>& rhs, const Vec16<T>& up,
                                               const Vec16<T>& centre, const Vec16<T>& down,
                                               T west, T east, Op&& op) {
  constexpr int W = Vec16<T>::width;
#pragma unroll
  for (int q = 0; q < W; ++q)
    if (q < valid)
      op(q, rhs.v[q], centre.v[q], up.v[q], down.v[q], q + 1 < valid ? centre.v[q + 1] : east,
         q > 0 ? centre.v[q - 1] : west);
}

}  // namespace relax::detail
