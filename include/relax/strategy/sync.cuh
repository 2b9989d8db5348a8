#pragma once
//! \file
//! The kernel and the launch of the synchronous strategy (the tag is in `sync.hpp`).
//!
//! Traffic per point and sweep: read u and b, write u' — 12 bytes in float32. Loads and stores
//! are 16 bytes wide (4 floats, 2 doubles); a thread updates `RowsPerThread` consecutive rows of
//! its vector so the vertical neighbours pass through registers.

#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/stencil/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/stencil/walk.cuh>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <cstdint>

namespace relax {

namespace detail {

//! One sweep: out = update(u) on the interior (see `walk_row_vectors` for the access pattern).
//! Partial vectors at the end of a row are stored point by point, so the ring is never written.
template <int BlockX, int BlockY, int Rows, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY)
    sync_sweep_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                      std::int64_t n, std::int64_t pitch) {
  walk_row_vectors<BlockX, BlockY, Rows>(
      u, b, n, pitch,
      [&](std::int64_t at, int valid, const Vec16<T>& rhs, const Vec16<T>& up,
          const Vec16<T>& centre, const Vec16<T>& down, T west, T east) {
        Vec16<T> next;
        for_each_point(valid, rhs, up, centre, down, west, east,
                       [&](int q, T bq, T /*centre*/, T nq, T sq, T e, T w) {
                         next.v[q] = s.update(bq, nq, sq, e, w);
                       });
        if (valid == Vec16<T>::width) {
          *reinterpret_cast<Vec16<T>*>(out + at) = next;
        } else {
          for (int q = 0; q < valid; ++q) out[at + q] = next.v[q];
        }
      });
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
    if constexpr (Rows == dynamic) {
      if (deep_rows_fill_device<T>(u.n()))
        launch<tuning::sync_deep_rows>(s, u, scratch, b, count, stream);
      else
        launch<1>(s, u, scratch, b, count, stream);
    } else {
      launch<Rows>(s, u, scratch, b, count, stream);
    }
  }

 private:
  template <class T>
  static bool deep_rows_fill_device(std::int64_t n) {
    const std::int64_t blocks = detail::tile_count(n, BlockX * detail::Vec16<T>::width) *
                                detail::tile_count(n, BlockY * tuning::sync_deep_rows);
    return blocks >= static_cast<std::int64_t>(tuning::sync_min_blocks_per_sm) * current_sm_count();
  }

  template <int R, class S, class T>
  static void launch(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                     std::int64_t count, cudaStream_t stream) {
    const dim3 grid = detail::tile_grid(u.n(), BlockX * detail::Vec16<T>::width, BlockY * R);
    const dim3 block(BlockX, BlockY);
    for (std::int64_t k = 0; k < count; ++k) {
      detail::sync_sweep_kernel<BlockX, BlockY, R><<<grid, block, 0, stream>>>(
          s, u.view().data_handle(), scratch.view().data_handle(), b.view().data_handle(), u.n(),
          u.layout().pitch);
      RELAX_CUDA_CHECK_LAUNCH();
      u.swap(scratch);
    }
  }
};

}  // namespace relax
