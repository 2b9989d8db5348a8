#pragma once
//! \file
//! Kernels and launches of `BlockAsync<D>` and `TemporalBlock<D>` (tags in `tiled.hpp`).
//!
//! One block per tile. It loads its tile and halo (1 cell for BlockAsync, D for TemporalBlock)
//! and the matching right-hand side into shared memory, sweeps there D times with a block barrier
//! between sweeps, and writes its tile to the other global buffer. The host emulation
//! `relax::reference::sweeps(..., TiledSchedule, ...)` follows the same steps point for point.

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

namespace relax {

namespace detail {

//! Shared memory one block needs: the loaded region twice (ping-pong) and its right-hand side.
template <class T>
std::size_t tiled_shared_bytes(int tile_x, int tile_y, int halo) {
  return 3 * static_cast<std::size_t>(tile_x + 2 * halo) * (tile_y + 2 * halo) * sizeof(T);
}

//! One launch of `depth` local sweeps (see the file comment). `u`, `out`, `b` point at point
//! (0, 0) of grids with row pitch `pitch`.
template <int TileX, int TileY, bool Exact, class S, class T>
__global__ void __launch_bounds__(TileX* TileY)
    tiled_sweeps_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                        std::int64_t n, std::int64_t pitch, int depth) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int halo = Exact ? depth : 1;
  const int rx = TileX + 2 * halo, ry = TileY + 2 * halo, cells = rx * ry;
  T* cur = reinterpret_cast<T*>(shared_bytes);
  T* next = cur + cells;
  T* rhs = next + cells;
  const int thread = threadIdx.y * TileX + threadIdx.x;
  const std::int64_t tiles_y = tile_count(n, TileY);
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * TileX + 1 - halo;
  for (std::int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const std::int64_t i0 = ty * TileY + 1 - halo;
    auto interior = [&](std::int64_t gi, std::int64_t gj) {
      return gi >= 1 && gj >= 1 && gi <= n && gj <= n;
    };
    for (int c = thread; c < cells; c += TileX * TileY) {
      const std::int64_t gi = i0 + c / rx, gj = j0 + c % rx;
      const bool in_grid = gi >= 0 && gj >= 0 && gi <= n + 1 && gj <= n + 1;
      cur[c] = in_grid ? u[gi * pitch + gj] : T(0);
      rhs[c] = interior(gi, gj) ? b[gi * pitch + gj] : T(0);
    }
    __syncthreads();
    for (int sweep = 0; sweep < depth; ++sweep) {
      const int reach = Exact ? sweep + 1 : 1;  // distance from the loaded edge to update
      for (int c = thread; c < cells; c += TileX * TileY) {
        const int ri = c / rx, rj = c % rx;
        const int dist = min(min(ri, rj), min(ry - 1 - ri, rx - 1 - rj));
        next[c] = dist >= reach && interior(i0 + ri, j0 + rj)
                      ? s.update(rhs[c], cur[c - rx], cur[c + rx], cur[c + 1], cur[c - 1])
                      : cur[c];
      }
      __syncthreads();
      T* t = cur;
      cur = next;
      next = t;
    }
    const std::int64_t gi = i0 + halo + threadIdx.y, gj = j0 + halo + threadIdx.x;
    if (interior(gi, gj)) out[gi * pitch + gj] = cur[(halo + threadIdx.y) * rx + halo + threadIdx.x];
    __syncthreads();  // the next tile row reuses shared memory
  }
}

//! `count` sweeps in launches of `depth` (and a remainder); the iterate ends in `u`.
template <int TileX, int TileY, bool Exact, class S, class T>
void tiled_sweeps(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  std::int64_t count, int depth, cudaStream_t stream) {
  static_assert(is_stencil_v<S>, "relax: S is not a stencil (is_stencil_v)");
  static_assert(S::radius == 1, "relax: the tiled strategies support radius-1 stencils");
  require(depth >= 1, "D", depth, "a depth of at least 1");
  if (Exact) require(depth <= std::min(TileX, TileY), "D", depth, "no more than the tile's width and height");
  require_layout(scratch.layout(), u.layout(), "scratch");
  require_layout(b.layout(), u.layout(), "b");
  const dim3 grid = tile_grid(u.n(), TileX, TileY);
  const dim3 block(TileX, TileY);
  for_each_launch(count, depth, [&](int d) {
    const std::size_t bytes = tiled_shared_bytes<T>(TileX, TileY, Exact ? d : 1);
    auto kernel = tiled_sweeps_kernel<TileX, TileY, Exact, S, T>;
    if (bytes > 48 * 1024) {
      int device = 0, limit = 0;
      RELAX_CUDA_CHECK(cudaGetDevice(&device));
      RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
      require(bytes <= static_cast<std::size_t>(limit), "D", d,
              "a depth whose tile and halo fit in shared memory");
      RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
    }
    kernel<<<grid, block, bytes, stream>>>(s, u.view().data_handle(), scratch.view().data_handle(),
                                           b.view().data_handle(), u.n(), u.layout().pitch, d);
    RELAX_CUDA_CHECK_LAUNCH();
    u.swap(scratch);
  });
}

//! The launch shared by both tags; `Strategy::exact` picks the halo.
template <class Strategy>
struct TiledSweeper {
  static constexpr int depth = Strategy::depth;
  using tile = typename Strategy::tile;

  //! `count` sweeps at the tag's depth D.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  std::int64_t count, cudaStream_t stream) {
    static_assert(depth != dynamic,
                  "relax: a strategy with D = relax::dynamic needs the depth at run time; call "
                  "run_with_depth (a controller that sets D does)");
    run_with_depth(s, u, scratch, b, count, depth, stream);
  }

  //! Loads the kernel now (one kernel serves every depth); see the ColumnStream sweeper.
  template <class S, class T>
  static void preload() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(
        &attributes, tiled_sweeps_kernel<tile::x, tile::y, Strategy::exact, S, T>));
  }

  //! `count` sweeps at depth `d` (for `relax::dynamic`, or to override the tag's D).
  template <class S, class T>
  static void run_with_depth(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch,
                             const DeviceGrid<T>& b, std::int64_t count, int d, cudaStream_t stream) {
    tiled_sweeps<tile::x, tile::y, Strategy::exact>(s, u, scratch, b, count, d, stream);
  }
};

}  // namespace detail

template <int D, class T>
struct Sweeper<BlockAsync<D, T>> : detail::TiledSweeper<BlockAsync<D, T>> {};

template <int D, class T>
struct Sweeper<TemporalBlock<D, T>> : detail::TiledSweeper<TemporalBlock<D, T>> {};

}  // namespace relax
