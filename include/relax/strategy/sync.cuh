#pragma once
//! \file
//! The kernel and the launch of the synchronous strategy (the tag is in `sync.hpp`).
//!
//! Traffic per point and sweep: read u and b, write u' — 12 bytes in float32, in 2D and 3D.
//! Loads and stores are 16 bytes wide (4 floats, 2 doubles); a thread updates `RowsPerThread`
//! consecutive rows (2D) or planes (3D) of its vector so the neighbours along that axis pass
//! through registers (`relax/agent/vector_walk.cuh`).

#include <relax/agent/vector_walk.cuh>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <cstdint>
#include <type_traits>

namespace relax {

namespace detail {

//! The synchronous update of one row vector (its `valid` points), stored at `out + at`. Partial
//! vectors at the end of a row are stored point by point, so the ring is never written.
template <class S, class T>
__device__ __forceinline__ void sync_update_vector(const S& s, T* __restrict__ out, std::int64_t at,
                                                   const Vec16<T>& rhs, const VectorStar<T, S::rank>& star) {
  Vec16<T> next;
#pragma unroll
  for (int q = 0; q < Vec16<T>::width; ++q)
    if (q < star.valid) next.v[q] = s.update(star.at(q), star.point(q), rhs.v[q]);
  store_vector(out + at, next, star.valid);
}

//! The synchronous update of one row vector (its `valid` points), returned: for a caller that
//! stores it in more than one place (the multi-sub-domain loop's edge rows). The same arithmetic
//! as `sync_update_vector`, which keeps its own loop: ptxas spilled the device loop's Sync kernel
//! (up to 60 bytes) when that one was written on top of this.
template <class S, class T>
__device__ __forceinline__ Vec16<T> sync_vector(const S& s, const Vec16<T>& rhs, const VectorStar<T, S::rank>& star) {
  Vec16<T> next;
#pragma unroll
  for (int q = 0; q < Vec16<T>::width; ++q)
    if (q < star.valid) next.v[q] = s.update(star.at(q), star.point(q), rhs.v[q]);
  return next;
}

//! One sweep: out = update(u) on the interior.
template <int BlockX, int BlockY, int Rows, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY)
    sync_sweep_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g) {
  walk_vectors<BlockX, BlockY, Rows, S::rank>(
      u, b, g, [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, S::rank>& star) {
        sync_update_vector(s, out, at, rhs, star);
      });
}

}  // namespace detail

template <int BlockX, int BlockY, int Rows>
struct Sweeper<SyncTile<BlockX, BlockY, Rows>> {
  //! `batch.sweeps` synchronous sweeps; the iterate ends in `u`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax::Sweeper<Sync>: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax::Sweeper<Sync>: only radius-1 stencils are supported");
    detail::require_layout(scratch.layout(), u.layout(), "scratch");
    detail::require_layout(b.layout(), u.layout(), "b");
    detail::require_swept_grid(u.layout(), S::rank, "u");
    with_rows<S::rank, T>(detail::shape_of(u.layout()), [&](auto rows) {
      launch<decltype(rows)::value>(s, u, scratch, b, batch.sweeps, stream);
    });
  }

  //! One synchronous sweep of the storage rows (planes, in 3D) `first` .. `first + count - 1` of
  //! `u` into the same rows of `out`; the other rows of `out` stay as they are, and nothing is
  //! swapped. The points are those of `run`'s sweep, bit for bit: a host-controlled multi-slab
  //! solve sweeps its edge rows first and its interior while the halos travel.
  //! \throws relax::invalid_argument for rows outside the interior.
  template <class S, class T>
  static void sweep_rows(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out, const DeviceGrid<T>& b,
                         std::int64_t first, std::int64_t count, cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax::Sweeper<Sync>: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax::Sweeper<Sync>: only radius-1 stencils are supported");
    detail::require_layout(out.layout(), u.layout(), "out");
    detail::require_layout(b.layout(), u.layout(), "b");
    detail::require_swept_grid(u.layout(), S::rank, "u");
    const detail::Shape whole = detail::shape_of(u.layout());
    const std::int64_t along = S::rank == 3 ? whole.nz : whole.ny;
    detail::require(first >= 1 && count >= 0 && first + count - 1 <= along, "rows", first,
                    "rows of the interior (from 1 to the rows, planes in 3D, of the box)");
    if (count == 0) return;
    detail::Shape g = whole;  // the rows as a box of their own: its ring is the rows around them
    (S::rank == 3 ? g.nz : g.ny) = count;
    (S::rank == 3 ? g.origin.z : g.origin.y) += first - 1;
    const std::int64_t shift = (first - 1) * (S::rank == 3 ? whole.plane : whole.pitch);
    auto sweep = [&](auto rows) {
      constexpr int R = decltype(rows)::value;
      detail::sync_sweep_kernel<BlockX, BlockY, R><<<detail::walk_grid<BlockX, BlockY, R, S::rank, T>(g),
                                                     dim3(BlockX, BlockY), 0, stream>>>(
          s, u.origin() + shift, out.origin() + shift, b.origin() + shift, g);
      RELAX_CUDA_CHECK_LAUNCH();
    };
    with_rows<S::rank, T>(g, sweep);
  }

  //! Whether `tuning::sync_deep_rows` rows per thread still leave enough blocks to fill the
  //! device (else one row per thread).
  template <int Rank, class T>
  static bool deep_rows_fill_device(const detail::Shape& g) {
    const dim3 grid = detail::walk_grid<BlockX, BlockY, tuning::sync_deep_rows, Rank, T>(g);
    const std::int64_t blocks = static_cast<std::int64_t>(grid.x) * grid.y;
    return blocks >= static_cast<std::int64_t>(tuning::sync_min_blocks_per_sm) * current_sm_count();
  }

 private:
  //! Calls `f(std::integral_constant<int, R>{})` with the rows (planes in 3D) a thread takes on
  //! the box `g`: `Rows`; with `dynamic`, `tuning::sync_planes_3d` planes in 3D, and in 2D
  //! `tuning::sync_deep_rows` rows where they still fill the device, else one.
  template <int Rank, class T, class F>
  static void with_rows(const detail::Shape& g, F&& f) {
    if constexpr (Rows != dynamic) f(std::integral_constant<int, Rows>{});
    else if constexpr (Rank == 3) f(std::integral_constant<int, tuning::sync_planes_3d>{});
    else if (deep_rows_fill_device<Rank, T>(g)) f(std::integral_constant<int, tuning::sync_deep_rows>{});
    else f(std::integral_constant<int, 1>{});
  }

  template <int R, class S, class T>
  static void launch(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                     std::int64_t count, cudaStream_t stream) {
    const detail::Shape g = detail::shape_of(u.layout());
    const dim3 grid = detail::walk_grid<BlockX, BlockY, R, S::rank, T>(g);
    for (std::int64_t k = 0; k < count; ++k) {
      detail::sync_sweep_kernel<BlockX, BlockY, R><<<grid, dim3(BlockX, BlockY), 0, stream>>>(
          s, u.origin(), scratch.origin(), b.origin(), g);
      RELAX_CUDA_CHECK_LAUNCH();
      u.swap(scratch);
    }
  }
};

}  // namespace relax
