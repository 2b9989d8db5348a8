#pragma once
//! \file
//! The residual max-norm ‖b − A u‖∞ on the device, for any stencil, and ‖b‖∞ of the interior
//! system (b plus the boundary values A couples in from the ring). Results are folded into a
//! `MaxNormSlot`; they equal `relax::reference::residual_norm` and `rhs_norm` bit for bit.

#include <relax/core/launch.hpp>
#include <relax/primitives/max_norm.cuh>
#include <relax/stencil/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/stencil/walk.cuh>

#include <cstdint>

namespace relax {

namespace detail {

//! Block shape of the residual kernels: the access pattern of the Sync sweep with the row depth
//! that measured fastest for it out of L2 (`relax::tuning`); not tuned separately.
inline constexpr int residual_block_x = 32;
inline constexpr int residual_block_y = 8;
inline constexpr int residual_rows = 4;

//! max over the interior of |s.residual(b, u, nbrs)|, folded into `*target`.
template <class S, class T>
__global__ void __launch_bounds__(residual_block_x* residual_block_y)
    residual_max_kernel(S s, const T* __restrict__ u, const T* __restrict__ b, std::int64_t n,
                        std::int64_t pitch, arith::bits_t<T>* target) {
  arith::bits_t<T> best = 0;
  walk_row_vectors<residual_block_x, residual_block_y, residual_rows>(
      u, b, n, pitch,
      [&](std::int64_t, int valid, const Vec16<T>& rhs, const Vec16<T>& up, const Vec16<T>& centre,
          const Vec16<T>& down, T west, T east) {
        for_each_point(valid, rhs, up, centre, down, west, east,
                       [&](int, T bq, T c, T nq, T sq, T e, T w) {
                         const auto bits = arith::abs_bits(s.residual(bq, c, nq, sq, e, w));
                         best = best > bits ? best : bits;
                       });
      });
  block_max_into<residual_block_x, residual_block_y>(best, target);
}

//! ‖b‖∞ of the interior system: max |s.residual(b, 0, nbrs)| where only ring values of u count
//! (the residual of a zero interior). Once per solve, so written for clarity, not speed.
template <class S, class T>
__global__ void __launch_bounds__(residual_block_x* residual_block_y)
    rhs_max_kernel(S s, grid_view<const T> u, grid_view<const T> b, arith::bits_t<T>* target) {
  const std::int64_t n = u.extent(0) - 2;
  const std::int64_t tiles_y = tile_count(n, residual_block_y);
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * residual_block_x + threadIdx.x + 1;
  auto ring = [&](std::int64_t i, std::int64_t jj) -> T {
    return i == 0 || jj == 0 || i == n + 1 || jj == n + 1 ? u(i, jj) : T(0);
  };
  arith::bits_t<T> best = 0;
  for (std::int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const std::int64_t i = ty * residual_block_y + threadIdx.y + 1;
    if (i <= n && j <= n) {
      const auto bits = arith::abs_bits(s.residual(b(i, j), T(0), ring(i - 1, j), ring(i + 1, j),
                                                   ring(i, j + 1), ring(i, j - 1)));
      best = best > bits ? best : bits;
    }
  }
  block_max_into<residual_block_x, residual_block_y>(best, target);
}

}  // namespace detail

//! Queues ‖b − A u‖∞ over the interior (difference form) on `stream` and its copy to the host;
//! `slot.wait()` returns it. Returns at once.
template <class S, class T = typename S::value_type>
void request_residual_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b,
                           MaxNormSlot<T>& slot, cudaStream_t stream) {
  static_assert(is_stencil_v<S>, "relax::residual_norm: S is not a stencil (is_stencil_v)");
  detail::require_layout(b.layout(), u.layout(), "b");
  slot.reset(stream);
  const dim3 grid = detail::tile_grid(u.n(), detail::residual_block_x * detail::Vec16<T>::width,
                                      detail::residual_block_y * detail::residual_rows);
  detail::residual_max_kernel<<<grid, dim3(detail::residual_block_x, detail::residual_block_y), 0,
                                stream>>>(s, u.view().data_handle(), b.view().data_handle(), u.n(),
                                          u.layout().pitch, slot.target());
  RELAX_CUDA_CHECK_LAUNCH();
  slot.request(stream);
}

//! ‖b − A u‖∞ over the interior (difference form), computed on `stream`; waits for the result.
template <class S, class T = typename S::value_type>
T residual_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b, MaxNormSlot<T>& slot,
                cudaStream_t stream) {
  request_residual_norm(s, u, b, slot, stream);
  return slot.wait();
}

//! ‖b‖∞ of the interior system, with the boundary values taken from the ring of `u`.
template <class S, class T = typename S::value_type>
T rhs_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b, MaxNormSlot<T>& slot,
           cudaStream_t stream) {
  static_assert(is_stencil_v<S>, "relax::rhs_norm: S is not a stencil (is_stencil_v)");
  detail::require_layout(b.layout(), u.layout(), "b");
  slot.reset(stream);
  detail::rhs_max_kernel<<<detail::tile_grid(u.n(), detail::residual_block_x, detail::residual_block_y),
                           dim3(detail::residual_block_x, detail::residual_block_y), 0, stream>>>(
      s, u.view(), b.view(), slot.target());
  RELAX_CUDA_CHECK_LAUNCH();
  return slot.read(stream);
}

}  // namespace relax
