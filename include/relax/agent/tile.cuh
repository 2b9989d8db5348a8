#pragma once
//! \file
//! The block-level worker of the tiled strategies: load a tile and its halo (and b) into shared
//! memory, run D local sweeps there, store the tile. The halo is D cells wide for the exact ghost
//! zone (`TemporalBlock`) and 1 cell, frozen at load time, for the stale halo (`BlockAsync`). A
//! tile is `TileX × TileY` points in 2D and `TileX × TileY × TileZ` in 3D. The host emulation
//! `relax::reference::sweeps(..., TiledSchedule, ...)` follows the same steps point for point.

#include <relax/domain/tile.hpp>
#include <relax/stencil/traits.hpp>

#include <cstdint>

namespace relax::detail {

//! One tile's pass by the `threads` threads of a block (`thread` is the caller's rank): load,
//! `depth` local sweeps, store. `smem` holds `tile_shared_bytes` bytes. Returns with the block
//! synchronised, so the caller may reuse the shared memory for the next tile.
template <int Rank, bool Exact, class S, class T>
__device__ __forceinline__ void tile_pass(const S& s, const T* __restrict__ u, T* __restrict__ out,
                                          const T* __restrict__ b, const Shape& g, TileOrigin o,
                                          int tile_x, int tile_y, int tile_z, int depth, T* smem,
                                          int thread, int threads) {
  const int halo = Exact ? depth : 1;
  const TileRegion r = tile_region<Rank>(tile_x, tile_y, tile_z, halo);
  const int cells = r.cells();
  T* cur = smem;
  T* next = cur + cells;
  T* rhs = next + cells;
  for (int c = thread; c < cells; c += threads) {
    int ck, ci, cj;
    cell_coordinates(c, r, ck, ci, cj);
    const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
    cur[c] = in_grid<Rank>(g, k, i, j) ? u[g.at(k, i, j)] : T(0);
    rhs[c] = in_interior<Rank>(g, k, i, j) ? b[g.at(k, i, j)] : T(0);
  }
  __syncthreads();
  for (int sweep = 0; sweep < depth; ++sweep) {
    const int reach = Exact ? sweep + 1 : 1;  // distance from the loaded edge to update
    for (int c = thread; c < cells; c += threads) {
      int ck, ci, cj;
      cell_coordinates(c, r, ck, ci, cj);
      const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
      next[c] = distance_to_edge<Rank>(r, ck, ci, cj) >= reach && in_interior<Rank>(g, k, i, j)
                    ? s.update(region_neighbours<Rank>(cur, c, r), g.point<Rank>(k, i, j), rhs[c])
                    : cur[c];
    }
    __syncthreads();
    T* t = cur;
    cur = next;
    next = t;
  }
  const int tile_points = tile_x * tile_y * (Rank == 3 ? tile_z : 1);
  for (int p = thread; p < tile_points; p += threads) {
    const int cj = halo + p % tile_x, ci = halo + p / tile_x % tile_y;
    const int ck = Rank == 3 ? halo + p / (tile_x * tile_y) : 0;
    const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
    if (in_interior<Rank>(g, k, i, j)) out[g.at(k, i, j)] = cur[(ck * r.ry + ci) * r.rx + cj];
  }
  __syncthreads();
}

}  // namespace relax::detail
