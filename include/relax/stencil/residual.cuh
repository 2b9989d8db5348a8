#pragma once
//! \file
//! The residual max-norm ‖b − A u‖∞ on the device, for any stencil, and ‖b‖∞ of the interior
//! system (b plus the boundary values A couples in from the ring). Results are folded into a
//! `MaxNormSlot`; they equal `relax::reference::residual_norm` and `rhs_norm` bit for bit.

#include <relax/core/launch.hpp>
#include <relax/primitives/max_norm.cuh>
#include <relax/stencil/device_grid.hpp>
#include <relax/stencil/traits.hpp>

#include <cstdint>

namespace relax {

namespace detail {

//! Block shape of the residual kernels (a check runs every M sweeps; it is not the hot loop).
inline constexpr int residual_block_x = 32;
inline constexpr int residual_block_y = 8;

//! Max over the interior of |s.residual(b, u, nbrs)|. With `ZeroInterior`, interior values of u
//! read as 0 and only its ring counts: that is ‖b‖∞ of the interior system.
template <bool ZeroInterior, class S, class T>
__global__ void __launch_bounds__(residual_block_x* residual_block_y)
    residual_max_kernel(S s, grid_view<const T> u, grid_view<const T> b,
                        arith::bits_t<T>* target) {
  const std::int64_t n = u.extent(0) - 2;
  const std::int64_t tiles_y = tile_count(n, residual_block_y);
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * residual_block_x + threadIdx.x + 1;
  auto at = [&](std::int64_t i, std::int64_t jj) -> T {
    if constexpr (ZeroInterior) {
      const bool ring = i == 0 || jj == 0 || i == n + 1 || jj == n + 1;
      return ring ? u(i, jj) : T(0);
    } else {
      return u(i, jj);
    }
  };
  arith::bits_t<T> best = 0;
  for (std::int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const std::int64_t i = ty * residual_block_y + threadIdx.y + 1;
    if (i <= n && j <= n) {
      const T r = s.residual(b(i, j), at(i, j), at(i - 1, j), at(i + 1, j), at(i, j + 1),
                             at(i, j - 1));
      best = best > arith::abs_bits(r) ? best : arith::abs_bits(r);
    }
  }
  block_max_into<residual_block_x, residual_block_y>(best, target);
}

template <bool ZeroInterior, class S, class T>
void launch_residual_max(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b,
                         MaxNormSlot<T>& slot, cudaStream_t stream) {
  static_assert(is_stencil_v<S>, "relax: S is not a stencil (see relax/stencil/traits.hpp)");
  require_layout(b.layout(), u.layout(), "b");
  slot.reset(stream);
  const dim3 block(residual_block_x, residual_block_y);
  residual_max_kernel<ZeroInterior><<<tile_grid(u.n(), residual_block_x, residual_block_y), block, 0,
                                      stream>>>(s, u.view(), b.view(), slot.target());
  RELAX_CUDA_CHECK_LAUNCH();
}

}  // namespace detail

//! ‖b − A u‖∞ over the interior (difference form), computed on `stream`; waits for the result.
template <class S, class T = typename S::value_type>
T residual_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b, MaxNormSlot<T>& slot,
                cudaStream_t stream) {
  detail::launch_residual_max<false>(s, u, b, slot, stream);
  return slot.read(stream);
}

//! ‖b‖∞ of the interior system, with the boundary values taken from the ring of `u`.
template <class S, class T = typename S::value_type>
T rhs_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b, MaxNormSlot<T>& slot,
           cudaStream_t stream) {
  detail::launch_residual_max<true>(s, u, b, slot, stream);
  return slot.read(stream);
}

}  // namespace relax
