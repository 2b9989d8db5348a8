#pragma once
//! \file
//! The residual max-norm ‖b − A u‖∞ on the device, for any stencil in 2D and 3D, and ‖b‖∞ of the
//! interior system (b plus the boundary values A couples in from the ring). Results are folded
//! into a `MaxNormSlot`; they equal `relax::reference::residual_norm` and `rhs_norm` bit for bit.

#include <relax/agent/residual.cuh>
#include <relax/core/launch.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/domain/shape.hpp>
#include <relax/primitives/max_norm.cuh>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {

using tuning::residual_block_x;
using tuning::residual_block_y;
using tuning::residual_rows;

//! max over the interior of |s.residual(u, at, b)|, folded into `*target`.
template <class S, class T>
__global__ void __launch_bounds__(residual_block_x* residual_block_y)
    residual_max_kernel(S s, const T* __restrict__ u, const T* __restrict__ b, Shape g,
                        arith::bits_t<T>* target) {
  const auto best = thread_residual_max<residual_block_x, residual_block_y, residual_rows>(s, u, b, g);
  block_max_into<residual_block_x, residual_block_y>(best, target);
}

//! The rows (planes in 3D) ‖b‖ is taken over, in interior indices from 1, and whether the ring
//! row (plane) before the first and after the last is the box's boundary: a sub-domain's slab
//! takes its owned rows, and its ring on a side with a neighbour holds interior rows.
struct RhsRows {
  std::int64_t first = 1;
  std::int64_t count = -1;  //!< −1: to the last row
  bool prev_is_interior = false;
  bool next_is_interior = false;
};

//! ‖b‖∞ of the interior system over `rows`: max |s.residual| of a zero interior, where only the
//! boundary's ring values of u count. Once per solve, so written for clarity, not speed: one
//! thread per point, grid-stride.
template <class S, class T>
__global__ void __launch_bounds__(residual_block_x* residual_block_y)
    rhs_max_kernel(S s, const T* __restrict__ u, const T* __restrict__ b, Shape g, RhsRows rows,
                   arith::bits_t<T>* target) {
  constexpr int rank = S::rank;
  const std::int64_t last = rank == 3 ? g.nz : g.ny;  // along the slowest axis
  const std::int64_t count = rows.count < 0 ? last - rows.first + 1 : rows.count;
  const std::int64_t across = g.nx * (rank == 3 ? g.ny : 1);  // points of one row (plane)
  const std::int64_t points = across * count;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * residual_block_x * residual_block_y;
  auto ring = [&](std::int64_t k, std::int64_t i, std::int64_t j) -> T {
    const std::int64_t along = rank == 3 ? k : i;
    const bool edge = j == 0 || j == g.nx + 1 || (rank == 3 && (i == 0 || i == g.ny + 1)) ||
                      (along == 0 && !rows.prev_is_interior) || (along == last + 1 && !rows.next_is_interior);
    return edge ? u[g.at(k, i, j)] : T(0);
  };
  arith::bits_t<T> best = 0;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * residual_block_x * residual_block_y +
                        threadIdx.y * residual_block_x + threadIdx.x;
       p < points; p += threads) {
    const std::int64_t j = p % g.nx + 1;
    const std::int64_t i = rank == 3 ? p / g.nx % g.ny + 1 : rows.first + p / g.nx;
    const std::int64_t k = rank == 3 ? rows.first + p / across : 0;
    Neighbours<T, rank> nb;
    if constexpr (rank == 2) {
      nb = {T(0), ring(k, i - 1, j), ring(k, i + 1, j), ring(k, i, j + 1), ring(k, i, j - 1)};
    } else {
      nb = {T(0), ring(k, i - 1, j), ring(k, i + 1, j), ring(k, i, j + 1), ring(k, i, j - 1),
            ring(k - 1, i, j), ring(k + 1, i, j)};
    }
    const auto bits = arith::abs_bits(s.residual(nb, g.point<rank>(k, i, j), b[g.at(k, i, j)]));
    best = best > bits ? best : bits;
  }
  block_max_into<residual_block_x, residual_block_y>(best, target);
}

template <class S, class T>
void require_system(const DeviceGrid<T>& u, const DeviceGrid<T>& b, const char* what) {
  static_assert(is_stencil_v<S>, "relax: S is not a stencil (is_stencil_v)");
  require_layout(b.layout(), u.layout(), "b");
  require_swept_grid(u.layout(), S::rank, what);
}

}  // namespace detail

//! Queues ‖b − A u‖∞ over the interior (difference form) on `stream` and its copy to the host;
//! `slot.wait()` returns it. Returns at once.
template <class S, class T = typename S::value_type>
void request_residual_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b,
                           MaxNormSlot<T>& slot, cudaStream_t stream) {
  detail::require_system<S>(u, b, "u");
  slot.reset(stream);
  const detail::Shape g = detail::shape_of(u.layout());
  const dim3 grid = detail::walk_grid<detail::residual_block_x, detail::residual_block_y,
                                      detail::residual_rows, S::rank, T>(g);
  detail::residual_max_kernel<<<grid, dim3(detail::residual_block_x, detail::residual_block_y), 0, stream>>>(
      s, u.origin(), b.origin(), g, slot.target());
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

//! Queues ‖b‖∞ of the interior system over `rows` (all of them by default; boundary values from
//! the ring of `u`) on `stream` and its copy to the host; `slot.wait()` returns it.
template <class S, class T = typename S::value_type>
void request_rhs_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b, MaxNormSlot<T>& slot,
                      cudaStream_t stream, const detail::RhsRows& rows = {}) {
  detail::require_system<S>(u, b, "u");
  slot.reset(stream);
  const detail::Shape g = detail::shape_of(u.layout());
  const std::int64_t blocks = std::clamp<std::int64_t>(
      detail::tile_count(u.layout().points(), detail::residual_block_x * detail::residual_block_y), 1, 65535);
  detail::rhs_max_kernel<<<static_cast<unsigned>(blocks), dim3(detail::residual_block_x, detail::residual_block_y),
                           0, stream>>>(s, u.origin(), b.origin(), g, rows, slot.target());
  RELAX_CUDA_CHECK_LAUNCH();
  slot.request(stream);
}

//! ‖b‖∞ of the interior system, with the boundary values taken from the ring of `u`.
template <class S, class T = typename S::value_type>
T rhs_norm(const S& s, const DeviceGrid<T>& u, const DeviceGrid<T>& b, MaxNormSlot<T>& slot,
           cudaStream_t stream) {
  request_rhs_norm(s, u, b, slot, stream);
  return slot.wait();
}

}  // namespace relax
