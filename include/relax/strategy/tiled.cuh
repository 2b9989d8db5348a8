#pragma once
//! \file
//! Kernels and launches of `BlockAsync<D>` and `TemporalBlock<D, Tile<...>>` (tags in
//! `tiled.hpp`): one block per tile, over the block-level worker `relax/agent/tile.cuh`.

#include <relax/agent/tile.cuh>
#include <relax/core/batches.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/tiled.hpp>
#include <relax/strategy/traits.hpp>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {

//! One launch of `depth` local sweeps over every tile: blockIdx.x walks tiles along x, blockIdx.y
//! (strided) the tiles along y and z.
template <int TileX, int TileY, int TileZ, bool Exact, class S, class T>
__global__ void __launch_bounds__(TileX* TileY)
    tiled_sweeps_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                        Shape g, int depth) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  constexpr int rank = S::rank;
  const int halo = Exact ? depth : 1;
  const std::int64_t tiles_y = tile_count(g.ny, TileY);
  const std::int64_t tiles = tiles_y * (rank == 3 ? tile_count(g.nz, TileZ) : 1);
  for (std::int64_t t = blockIdx.y; t < tiles; t += gridDim.y) {
    const TileOrigin o = tile_origin<rank>(t / tiles_y, t % tiles_y, blockIdx.x, TileX, TileY, TileZ, halo);
    tile_pass<rank, Exact>(s, u, out, b, g, o, TileX, TileY, TileZ, depth,
                           reinterpret_cast<T*>(shared_bytes), threadIdx.y * TileX + threadIdx.x, TileX * TileY);
  }
}

//! `count` sweeps in launches of `depth` (and a remainder); the iterate ends in `u`.
template <int TileX, int TileY, int TileZ, bool Exact, class S, class T>
void tiled_sweeps(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  std::int64_t count, int depth, cudaStream_t stream) {
  static_assert(is_stencil_v<S>, "relax: S is not a stencil (is_stencil_v)");
  static_assert(S::radius == 1, "relax: the tiled strategies support radius-1 stencils");
  constexpr int rank = S::rank;
  require(depth >= 1, "D", depth, "a depth of at least 1");
  if (Exact) require(depth <= std::min(TileX, TileY), "D", depth, "no more than the tile's width and height");
  require_layout(scratch.layout(), u.layout(), "scratch");
  require_layout(b.layout(), u.layout(), "b");
  require_swept_grid(u.layout(), rank, "u");
  const Shape g = shape_of(u.layout());
  const dim3 grid = tile_grid(g.nx, g.ny * (rank == 3 ? tile_count(g.nz, TileZ) : 1), TileX, TileY);
  for_each_launch(count, depth, [&](int d) {
    const std::size_t bytes = tile_shared_bytes<rank, T>(TileX, TileY, TileZ, Exact ? d : 1);
    auto kernel = tiled_sweeps_kernel<TileX, TileY, TileZ, Exact, S, T>;
    if (bytes > 48 * 1024) {
      require(bytes <= shared_bytes_limit(), "D", d, "a depth whose tile and halo fit in shared memory");
      RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
    }
    kernel<<<grid, dim3(TileX, TileY), bytes, stream>>>(s, u.origin(), scratch.origin(), b.origin(), g, d);
    RELAX_CUDA_CHECK_LAUNCH();
    u.swap(scratch);
  });
}

//! The launch shared by both tags; `Strategy::exact` picks the halo.
template <class Strategy>
struct TiledSweeper {
  using tile = typename Strategy::tile;

  //! The deepest D whose tile and ghost zone fit in shared memory on the current device (at most
  //! the tag's `max_depth`); 0 for stale halos, whose one-cell halo does not grow with D.
  template <class S, class T>
  static int deepest_depth() {
    if (!Strategy::exact) return 0;
    const std::size_t limit = shared_bytes_limit();
    int d = 0;
    while (d < Strategy::max_depth &&
           tile_shared_bytes<S::rank, T>(tile::x, tile::y, tile::z, d + 1) <= limit)
      ++d;
    return d;
  }

  //! Loads the kernel now (one kernel serves every depth); see the ColumnStream sweeper.
  template <class S, class T>
  static void preload() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(
        &attributes, tiled_sweeps_kernel<tile::x, tile::y, tile::z, Strategy::exact, S, T>));
  }

  //! `batch.sweeps` sweeps at the tag's D, or at `batch.depth` for `D = relax::dynamic`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    const int d = Strategy::depth == dynamic ? batch.depth : Strategy::depth;
    tiled_sweeps<tile::x, tile::y, tile::z, Strategy::exact>(s, u, scratch, b, batch.sweeps, d, stream);
  }
};

}  // namespace detail

template <int D, class T>
struct Sweeper<BlockAsync<D, T>> : detail::TiledSweeper<BlockAsync<D, T>> {};

// Only tile shapes: `TemporalBlock<D, ColumnStream>` is specialised in column_stream.cuh, and
// without that header it reaches the primary template's error instead of this sweeper.
template <int D, int X, int Y, int Z>
struct Sweeper<TemporalBlock<D, Tile<X, Y, Z>>> : detail::TiledSweeper<TemporalBlock<D, Tile<X, Y, Z>>> {};

}  // namespace relax
