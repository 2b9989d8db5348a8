#pragma once
//! \file
//! `TemporalBlock<D, ColumnStream>`: exact temporal blocking that streams along y through
//! registers (see `ColumnStream` in `tiled.hpp`).
//!
//! A warp owns a strip of 32·W columns (W = 16 bytes of points per lane) loaded with a halo of D
//! columns on each side, and a segment of rows. It walks down the segment one row at a time: at
//! step k it loads row k of u and b, then for levels t = 1..D computes level t of row k − t from
//! level t − 1 of rows k − t − 1, k − t, k − t + 1, and stores level D of row k − D. Each level
//! keeps two rows per lane in registers; east and west neighbours across lanes come by warp
//! shuffles. Values near the loaded edges are wrong at the levels where their neighbours were
//! never loaded, but no stored point depends on them: a stored point is at least D columns and,
//! its segment warmed up, D rows from those edges. Every interior update is
//! `s.update(b, north, south, east, west)`, exactly as in `Sync`, so the result equals D
//! synchronous sweeps bit for bit.

#include <relax/core/batches.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/stencil/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/tiled.hpp>
#include <relax/strategy/traits.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace relax {

namespace detail {

inline constexpr int stream_warps_per_block = 4;
//! Segments are sized so a launch has about this many warps (31 per SM on an H200): enough to
//! hide latency, few enough that the D warm-up rows of each segment stay a small overhead.
inline constexpr std::int64_t stream_target_warps = 4096;

//! A lane's points of one row at one level.
template <class T>
struct Lane {
  static constexpr int width = 16 / static_cast<int>(sizeof(T));
  T v[width];
};

template <int D, class S, class T>
__global__ void __launch_bounds__(32 * stream_warps_per_block)
    column_stream_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                         std::int64_t n, std::int64_t pitch, std::int64_t segment_rows) {
  constexpr int W = Lane<T>::width;
  constexpr int strip = 32 * W;
  constexpr int kept = strip - 2 * D;  // columns a strip stores
  const int lane = threadIdx.x;
  // The warps of a block take adjacent strips of the same segment, so a block's row loads cover
  // one long contiguous run of each row.
  const std::int64_t strip_index = static_cast<std::int64_t>(blockIdx.x) * stream_warps_per_block + threadIdx.y;
  const std::int64_t x0 = strip_index * kept + 1 - D;  // first loaded column
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * segment_rows + 1;  // first stored row
  if (x0 + D > n) return;
  const std::int64_t y1 = min(y0 + segment_rows, n + 1);  // one past the last stored row

  // Columns of this lane: which exist in the grid, which are interior, which are stored.
  unsigned in_grid = 0, interior = 0, stored = 0;
#pragma unroll
  for (int q = 0; q < W; ++q) {
    const std::int64_t c = x0 + lane * W + q;
    const int local = lane * W + q;
    if (c >= 0 && c <= n + 1) in_grid |= 1u << q;
    if (c >= 1 && c <= n) interior |= 1u << q;
    if (c >= 1 && c <= n && local >= D && local < strip - D) stored |= 1u << q;
  }

  Lane<T> up[D], mid[D], rhs[D + 1];
#pragma unroll
  for (int t = 0; t <= D; ++t) {
#pragma unroll
    for (int q = 0; q < W; ++q) {
      rhs[t].v[q] = T(0);
      if (t < D) up[t].v[q] = mid[t].v[q] = T(0);
    }
  }
  const T* u_col = u + x0 + lane * W;
  const T* b_col = b + x0 + lane * W;
  for (std::int64_t k = y0 - D - 1; k < y1 + D; ++k) {
    // Level 0 of row k, and b of row k.
    Lane<T> next;
    const bool row_in_grid = k >= 0 && k <= n + 1;
    const bool row_interior = k >= 1 && k <= n;
#pragma unroll
    for (int q = 0; q < W; ++q) {
      next.v[q] = row_in_grid && (in_grid >> q & 1u) ? u_col[k * pitch + q] : T(0);
      rhs[0].v[q] = row_interior && (interior >> q & 1u) ? b_col[k * pitch + q] : T(0);
    }
#pragma unroll
    for (int t = 1; t <= D; ++t) {
      // Level t of row r = k − t from level t − 1 of rows r − 1 (up), r (mid), r + 1 (next).
      const std::int64_t r = k - t;
      const bool update_row = r >= 1 && r <= n;
      const T west = __shfl_up_sync(0xffffffffu, mid[t - 1].v[W - 1], 1);
      const T east = __shfl_down_sync(0xffffffffu, mid[t - 1].v[0], 1);
      Lane<T> level;
#pragma unroll
      for (int q = 0; q < W; ++q) {
        const T w = q > 0 ? mid[t - 1].v[q - 1] : west;
        const T e = q + 1 < W ? mid[t - 1].v[q + 1] : east;
        level.v[q] = update_row && (interior >> q & 1u)
                         ? s.update(rhs[t].v[q], up[t - 1].v[q], next.v[q], e, w)
                         : mid[t - 1].v[q];
      }
      up[t - 1] = mid[t - 1];
      mid[t - 1] = next;
      next = level;
    }
    // Level D of row k − D.
    const std::int64_t r = k - D;
    if (r >= y0 && r < y1) {
#pragma unroll
      for (int q = 0; q < W; ++q)
        if (stored >> q & 1u) out[r * pitch + x0 + lane * W + q] = next.v[q];
    }
#pragma unroll
    for (int t = D; t > 0; --t) rhs[t] = rhs[t - 1];
  }
}

template <int D, class S, class T>
void launch_column_stream(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out,
                          const DeviceGrid<T>& b, cudaStream_t stream) {
  constexpr int kept = 32 * Lane<T>::width - 2 * D;
  const std::int64_t n = u.n();
  const std::int64_t strips = tile_count(n, kept);
  const std::int64_t rows = std::max<std::int64_t>(4 * D, n * strips / stream_target_warps);
  const std::int64_t segments = tile_count(n, rows);
  const dim3 grid(static_cast<unsigned>(tile_count(strips, stream_warps_per_block)),
                  static_cast<unsigned>(segments));
  require(grid.y <= 65535u, "n", n, "a grid whose row segments fit in one launch");
  column_stream_kernel<D><<<grid, dim3(32, stream_warps_per_block), 0, stream>>>(
      s, u.view().data_handle(), out.view().data_handle(), b.view().data_handle(), n,
      u.layout().pitch, rows);
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
  //! `count` exact sweeps in launches of D (and a remainder); the iterate ends in `u`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  std::int64_t count, cudaStream_t stream) {
    static_assert(D != dynamic,
                  "relax: TemporalBlock<relax::dynamic, ColumnStream> needs the depth at run time; "
                  "call run_with_depth (a controller that sets D does)");
    run_with_depth(s, u, scratch, b, count, D, stream);
  }

  //! Loads the kernels of every depth now. CUDA loads a kernel at its first launch (lazy loading,
  //! the default), and a controller that times batches to choose D must not time a module load.
  template <class S, class T>
  static void preload() {
    detail::preload_column_stream<S, T>(std::make_integer_sequence<int, 8>{});
  }

  //! `count` exact sweeps in launches of depth `depth` (1 to 8) and a remainder.
  template <class S, class T>
  static void run_with_depth(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch,
                             const DeviceGrid<T>& b, std::int64_t count, int depth,
                             cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax: TemporalBlock supports radius-1 stencils");
    detail::require(depth >= 1 && depth <= 8, "D", depth, "a depth from 1 to 8");
    detail::require_layout(scratch.layout(), u.layout(), "scratch");
    detail::require_layout(b.layout(), u.layout(), "b");
    detail::for_each_launch(count, depth, [&](int d) {
      detail::launch_column_stream(d, s, u, scratch, b, stream);
      u.swap(scratch);
    });
  }
};

}  // namespace relax
