#pragma once
//! \file
//! The geometry of the tiled schedules (`BlockAsync<D>`, `TemporalBlock<D, Tile<...>>`), shared by
//! the GPU agent (`relax/agent/tile.cuh`) and its host emulation (`relax/reference/tiled.hpp`) so
//! both load, update and store the same cells. A tile of `tile_x × tile_y` points (2D) or
//! `tile_x × tile_y × tile_z` (3D) is loaded with a halo `halo` cells wide on every side.

#include <relax/config.hpp>
#include <relax/domain/shape.hpp>
#include <relax/stencil/traits.hpp>

#include <cstddef>
#include <cstdint>

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

}  // namespace relax::detail
