#pragma once
//! \file
//! A thread's part of the residual max-norm ‖b − A u‖∞ in the difference form of the stencil, as
//! the bits of |r| (`relax::arith::abs_bits`: an exact, order-independent max that propagates
//! NaN). A block folds its threads' parts with `block_max_into`. Shared by the launched residual
//! kernel and the persistent kernels that check convergence themselves.

#include <relax/agent/vector_walk.cuh>
#include <relax/core/arith.hpp>

#include <cstdint>

namespace relax::detail {

//! Folds |s.residual| over the calling thread's points of x-block `bx` and tile `t` of the walk
//! (`walk_tile`) into `best`.
template <int BlockX, int BlockY, int Rows, class S, class T>
__device__ __forceinline__ void fold_tile_residual(arith::bits_t<T>& best, std::int64_t bx, std::int64_t t,
                                                   const S& s, const T* __restrict__ u, const T* __restrict__ b,
                                                   const Shape& g) {
  walk_tile<BlockX, BlockY, Rows, S::rank>(
      bx, t, u, b, g, [&](std::int64_t, const Vec16<T>& rhs, const VectorStar<T, S::rank>& star) {
#pragma unroll
        for (int q = 0; q < Vec16<T>::width; ++q)
          if (q < star.valid) {
            const auto bits = arith::abs_bits(s.residual(star.at(q), star.point(q), rhs.v[q]));
            best = best > bits ? best : bits;
          }
      });
}

//! The max of |s.residual| over the points the calling thread visits in `walk_vectors`.
template <int BlockX, int BlockY, int Rows, class S, class T>
__device__ __forceinline__ arith::bits_t<T> thread_residual_max(const S& s, const T* __restrict__ u,
                                                                const T* __restrict__ b, const Shape& g) {
  arith::bits_t<T> best = 0;
  const std::int64_t tiles = walk_tiles<BlockY, Rows, S::rank>(g);
  for (std::int64_t t = blockIdx.y; t < tiles; t += gridDim.y)
    fold_tile_residual<BlockX, BlockY, Rows>(best, blockIdx.x, t, s, u, b, g);
  return best;
}

}  // namespace relax::detail
