#pragma once
//! \file
//! The kernel and the launch of the synchronous strategy (the tag is in `sync.hpp`).
//!
//! Traffic per point and sweep: read u and b, write u' — 12 bytes in float32. Neighbour values
//! come from caches; a thread updates `RowsPerThread` consecutive points of a column so the
//! vertical neighbours pass through registers.

#include <relax/core/cuda_check.hpp>
#include <relax/core/launch.hpp>
#include <relax/stencil/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/traits.hpp>

#include <cstdint>

namespace relax {

namespace detail {

//! One sweep: out = update(u) on the interior. `u`, `out`, `b` point at point (0, 0) of grids that
//! share the row pitch `pitch`.
template <int BlockX, int BlockY, int Rows, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY)
    sync_sweep_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                      std::int64_t n, std::int64_t pitch) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * BlockX + threadIdx.x + 1;
  if (j > n) return;
  const std::int64_t tiles_y = tile_count(n, BlockY * Rows);
  for (std::int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const std::int64_t i0 = ty * (BlockY * Rows) + threadIdx.y * Rows + 1;
    if (i0 > n) continue;
    T up = u[(i0 - 1) * pitch + j];
    T centre = u[i0 * pitch + j];
#pragma unroll
    for (int k = 0; k < Rows; ++k) {
      const std::int64_t i = i0 + k;
      if (i > n) break;
      const std::int64_t at = i * pitch + j;
      const T down = u[at + pitch];
      out[at] = s.update(b[at], up, down, u[at + 1], u[at - 1]);
      up = centre;
      centre = down;
    }
  }
}

}  // namespace detail

template <int BlockX, int BlockY, int Rows>
struct Sweeper<SyncTile<BlockX, BlockY, Rows>> {
  //! `count` synchronous sweeps; the iterate ends in `u`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  std::int64_t count, cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax::Sweeper<Sync>: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax::Sweeper<Sync>: only radius-1 stencils are supported");
    detail::require_layout(scratch.layout(), u.layout(), "scratch");
    detail::require_layout(b.layout(), u.layout(), "b");
    const dim3 grid = detail::tile_grid(u.n(), BlockX, BlockY * Rows);
    const dim3 block(BlockX, BlockY);
    for (std::int64_t k = 0; k < count; ++k) {
      detail::sync_sweep_kernel<BlockX, BlockY, Rows><<<grid, block, 0, stream>>>(
          s, u.view().data_handle(), scratch.view().data_handle(), b.view().data_handle(), u.n(),
          u.layout().pitch);
      RELAX_CUDA_CHECK_LAUNCH();
      u.swap(scratch);
    }
  }
};

}  // namespace relax
