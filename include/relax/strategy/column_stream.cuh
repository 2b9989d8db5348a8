#pragma once
//! \file
//! `TemporalBlock<D, ColumnStream>`: exact temporal blocking that streams along y through
//! registers (see `ColumnStream` in `tiled.hpp`, and the warp-level worker in
//! `relax/agent/column_stream.cuh`). 2D stencils only for now.

#include <relax/agent/column_stream.cuh>
#include <relax/core/batches.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/tiled.hpp>
#include <relax/strategy/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace relax {

namespace detail {

using tuning::stream_target_warps;
using tuning::stream_warps_per_block;

template <int D, class S, class T>
__global__ void __launch_bounds__(32 * stream_warps_per_block)
    column_stream_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                         Shape g, std::int64_t segment_rows) {
  // The warps of a block take adjacent strips of the same segment, so a block's row loads cover
  // one long contiguous run of each row.
  const std::int64_t strip_index = static_cast<std::int64_t>(blockIdx.x) * stream_warps_per_block + threadIdx.y;
  const std::int64_t x0 = strip_index * strip_kept<D, T> + 1 - D;  // first loaded column
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * segment_rows + 1;  // first stored row
  if (x0 + D > g.nx) return;
  const std::int64_t y1 = min(y0 + segment_rows, g.ny + 1);  // one past the last stored row
  stream_strip<D>(s, u, out, b, g, x0, y0, y1, threadIdx.x);
}

template <int D, class S, class T>
void launch_column_stream(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out,
                          const DeviceGrid<T>& b, cudaStream_t stream) {
  const Shape g = shape_of(u.layout());
  const std::int64_t strips = tile_count(g.nx, strip_kept<D, T>);
  const std::int64_t rows = std::max<std::int64_t>(4 * D, g.ny * strips / stream_target_warps);
  const std::int64_t segments = tile_count(g.ny, rows);
  const dim3 grid(static_cast<unsigned>(tile_count(strips, stream_warps_per_block)),
                  static_cast<unsigned>(segments));
  require(grid.y <= 65535u, "ny", g.ny, "a grid whose row segments fit in one launch");
  column_stream_kernel<D><<<grid, dim3(32, stream_warps_per_block), 0, stream>>>(
      s, u.origin(), out.origin(), b.origin(), g, rows);
  RELAX_CUDA_CHECK_LAUNCH();
}

// Loads the kernels of depths 1..8 (see Sweeper::preload).
template <class S, class T, int... I>
void preload_column_stream(std::integer_sequence<int, I...>) {
  const void* kernels[] = {reinterpret_cast<const void*>(column_stream_kernel<I + 1, S, T>)...};
  cudaFuncAttributes attributes{};
  for (const void* k : kernels) RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, k));
}

//! One launch of depth d (1 ≤ d ≤ 8): a remainder launch may be shallower than the tag's D.
template <class S, class T>
void launch_column_stream(int d, const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out,
                          const DeviceGrid<T>& b, cudaStream_t stream) {
  switch (d) {
    case 1: return launch_column_stream<1>(s, u, out, b, stream);
    case 2: return launch_column_stream<2>(s, u, out, b, stream);
    case 3: return launch_column_stream<3>(s, u, out, b, stream);
    case 4: return launch_column_stream<4>(s, u, out, b, stream);
    case 5: return launch_column_stream<5>(s, u, out, b, stream);
    case 6: return launch_column_stream<6>(s, u, out, b, stream);
    case 7: return launch_column_stream<7>(s, u, out, b, stream);
    case 8: return launch_column_stream<8>(s, u, out, b, stream);
    default: require(false, "D", d, "a depth from 1 to 8");
  }
}

}  // namespace detail

template <int D>
struct Sweeper<TemporalBlock<D, ColumnStream>> {
  //! Loads the kernels of every depth now. CUDA loads a kernel at its first launch (lazy loading,
  //! the default), and a controller that times batches to choose D must not time a module load.
  template <class S, class T>
  static void preload() {
    detail::preload_column_stream<S, T>(std::make_integer_sequence<int, 8>{});
  }

  //! `batch.sweeps` exact sweeps in launches of the tag's D (`batch.depth` for
  //! `D = relax::dynamic`, 1 to 8) and a remainder; the iterate ends in `u`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax: TemporalBlock supports radius-1 stencils");
    static_assert(S::rank == 2, "relax: TemporalBlock<D, ColumnStream> streams 2D stencils only; use "
                                "TemporalBlock<D, Tile<X, Y, Z>> for 3D");
    const int depth = D == dynamic ? batch.depth : D;
    detail::require(depth >= 1 && depth <= 8, "D", depth, "a depth from 1 to 8");
    detail::require_layout(scratch.layout(), u.layout(), "scratch");
    detail::require_layout(b.layout(), u.layout(), "b");
    detail::require_rank(u.layout(), 2, "u");
    detail::for_each_launch(batch.sweeps, depth, [&](int d) {
      detail::launch_column_stream(d, s, u, scratch, b, stream);
      u.swap(scratch);
    });
  }
};

}  // namespace relax
