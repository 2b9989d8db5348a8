#pragma once
//! \file
//! The geometry of the tiled schedules (`BlockAsync<D>`, `TemporalBlock<D, Tile<...>>`), shared by
//! the GPU agent (`relax/agent/tile.cuh`) and its host emulation (`relax/reference/tiled.hpp`) so
//! both load, update and store the same cells. A tile of `tile_x × tile_y` points (2D) or
//! `tile_x × tile_y × tile_z` (3D) is loaded with a halo `halo` cells wide on every side.

#include <relax/config.hpp>
#include <relax/domain/shape.hpp>
#include <relax/domain/neighbours.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace relax::detail {

//! The region a tile loads: its extents with the halo, in cells.
struct TileRegion {
  int rx, ry, rz;
  RELAX_HOST_DEVICE int cells() const { return rx * ry * rz; }
};

template <int Rank>
RELAX_HOST_DEVICE inline TileRegion tile_region(int tile_x, int tile_y, int tile_z, int halo) {
  return {tile_x + 2 * halo, tile_y + 2 * halo, Rank == 3 ? tile_z + 2 * halo : 1};
}

//! Shared memory one block needs: the loaded region twice (ping-pong) and its right-hand side.
template <int Rank, class T>
std::size_t tile_shared_bytes(int tile_x, int tile_y, int tile_z, int halo) {
  return 3 * static_cast<std::size_t>(tile_region<Rank>(tile_x, tile_y, tile_z, halo).cells()) * sizeof(T);
}

//! Distance in cells from cell (ck, ci, cj) to the nearest face of the loaded region.
template <int Rank>
RELAX_HOST_DEVICE inline int distance_to_edge(const TileRegion& r, int ck, int ci, int cj) {
  int d = ci < cj ? ci : cj;
  const int far_i = r.ry - 1 - ci, far_j = r.rx - 1 - cj;
  d = d < far_i ? d : far_i;
  d = d < far_j ? d : far_j;
  if constexpr (Rank == 3) {
    const int far_k = r.rz - 1 - ck;
    d = d < ck ? d : ck;
    d = d < far_k ? d : far_k;
  }
  return d;
}

//! The neighbourhood of cell `c` of a loaded region stored row-major.
template <int Rank, class T>
RELAX_HOST_DEVICE inline Neighbours<T, Rank> region_neighbours(const T* cur, int c, const TileRegion& r) {
  if constexpr (Rank == 2) return {cur[c], cur[c - r.rx], cur[c + r.rx], cur[c + 1], cur[c - 1]};
  else {
    const int plane = r.rx * r.ry;
    return {cur[c], cur[c - r.rx], cur[c + r.rx], cur[c + 1], cur[c - 1], cur[c - plane], cur[c + plane]};
  }
}

//! Where a tile sits: grid point (k0, i0, j0) is cell (0, 0, 0) of its loaded region.
struct TileOrigin {
  std::int64_t k0, i0, j0;
};

//! The tile with index (tz, ty, tx) among tiles of `tile_x × tile_y × tile_z` points.
template <int Rank>
RELAX_HOST_DEVICE inline TileOrigin tile_origin(std::int64_t tz, std::int64_t ty, std::int64_t tx,
                                                int tile_x, int tile_y, int tile_z, int halo) {
  return {Rank == 3 ? tz * tile_z + 1 - halo : 0, ty * tile_y + 1 - halo, tx * tile_x + 1 - halo};
}

//! Whether grid point (k, i, j) is in the grid (interior or ring) / in the interior.
template <int Rank>
RELAX_HOST_DEVICE inline bool in_grid(const Shape& g, std::int64_t k, std::int64_t i, std::int64_t j) {
  return i >= 0 && j >= 0 && i <= g.ny + 1 && j <= g.nx + 1 && (Rank == 2 || (k >= 0 && k <= g.nz + 1));
}
template <int Rank>
RELAX_HOST_DEVICE inline bool in_interior(const Shape& g, std::int64_t k, std::int64_t i, std::int64_t j) {
  return i >= 1 && j >= 1 && i <= g.ny && j <= g.nx && (Rank == 2 || (k >= 1 && k <= g.nz));
}

//! Cell c of a region as (ck, ci, cj).
RELAX_HOST_DEVICE inline void cell_coordinates(int c, const TileRegion& r, int& ck, int& ci, int& cj) {
  cj = c % r.rx;
  ci = c / r.rx % r.ry;
  ck = c / (r.rx * r.ry);
}

//! The tiles of a device loop that keeps one tile per block resident on chip
//! (`DeviceLoop<TemporalBlock<D, OnChip>>`): `count_*` tiles of `tile_*` points along each axis
//! (the last one on an axis may be shorter), each held with a halo `halo` cells wide.
struct ResidentTiles {
  int tile_x = 0, tile_y = 0, tile_z = 1;
  int count_x = 0, count_y = 0, count_z = 1;
  int halo = 0;
  RELAX_HOST_DEVICE int count() const { return count_x * count_y * count_z; }
  template <int Rank>
  RELAX_HOST_DEVICE TileRegion region() const { return tile_region<Rank>(tile_x, tile_y, tile_z, halo); }
  //! False when no tiling met the limits.
  bool found() const { return count_x > 0; }
};

//! The resident tiling of an `nx × ny (× nz)` interior with a `halo`-wide halo: at most
//! `max_tiles` tiles (the blocks that can be co-resident), each region at most `max_cells` cells
//! (what shared memory holds) with its rows padded to a multiple of `pad` cells. Along an axis
//! with more than one tile the tile size is at least `halo` (the last tile may be shorter: beyond
//! it is the ring), so a halo reaches only the adjacent tiles and the ring, and lies in their
//! frames (tested on the host in tests/host/test_decomposition.cpp). Among the tilings that fit it takes the fewest cells per region (a sweep's time is
//! one block's: its shared-memory traffic grows with its cells, and every block runs on its own
//! SM), then the fewest tiles (fewer blocks at the barriers). A first objective, the fewest
//! rounds of the block's threads and then the fewest tiles, put 256² with an 8-cell halo on 36
//! SMs and measured 1.5 µs a sweep against 1.1 on 132. A region may also be limited to
//! `max_rx × max_ry` cells (the register-resident tile's frame). Returns a tiling whose `found()`
//! is false when none fits.
template <int Rank>
ResidentTiles choose_resident_tiles(std::int64_t nx, std::int64_t ny, std::int64_t nz, int halo, int max_tiles,
                                    std::int64_t max_cells, int pad = 1,
                                    std::int64_t max_rx = std::numeric_limits<std::int64_t>::max(),
                                    std::int64_t max_ry = std::numeric_limits<std::int64_t>::max()) {
  const auto tile_count = [](std::int64_t n, std::int64_t t) { return (n + t - 1) / t; };
  ResidentTiles best;
  std::int64_t best_key[2] = {0, 0};
  const std::int64_t top_z = Rank == 3 ? std::min<std::int64_t>(nz, max_tiles) : 1;
  for (std::int64_t cz = 1; cz <= top_z; ++cz)
    for (std::int64_t cy = 1; cy <= std::min<std::int64_t>(ny, max_tiles / cz); ++cy)
      for (std::int64_t cx = 1; cx <= std::min<std::int64_t>(nx, max_tiles / (cz * cy)); ++cx) {
        const std::int64_t tx = tile_count(nx, cx), ty = tile_count(ny, cy), tz = Rank == 3 ? tile_count(nz, cz) : 1;
        const std::int64_t kx = tile_count(nx, tx), ky = tile_count(ny, ty), kz = Rank == 3 ? tile_count(nz, tz) : 1;
        if ((kx > 1 && tx < halo) || (ky > 1 && ty < halo) || (kz > 1 && tz < halo)) continue;
        if (tx + 2 * halo > max_rx || ty + 2 * halo > max_ry) continue;
        const std::int64_t cells =
            tile_count(tx + 2 * halo, pad) * pad * (ty + 2 * halo) * (Rank == 3 ? tz + 2 * halo : 1);
        if (cells > max_cells) continue;
        const std::int64_t key[2] = {cells, kx * ky * kz};
        const bool better = !best.found() || key[0] < best_key[0] || (key[0] == best_key[0] && key[1] < best_key[1]);
        if (!better) continue;
        best = {static_cast<int>(tx), static_cast<int>(ty), static_cast<int>(tz),
                static_cast<int>(kx), static_cast<int>(ky), static_cast<int>(kz), halo};
        for (int q = 0; q < 2; ++q) best_key[q] = key[q];
      }
  return best;
}

}  // namespace relax::detail
