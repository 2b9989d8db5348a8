#pragma once
//! \file
//! The 3D synchronous walk in a block: the block owns an x-y tile of `BlockX` 16-byte vectors by
//! `BlockY` rows and streams it down a segment of planes. A thread keeps the vectors of its row
//! in planes k − 1, k and k + 1 in registers (up, centre, down); north and south come from the
//! centre vectors of the rows beside it through shared memory (one barrier a plane, two planes
//! of rows so the next plane's writes cannot overtake this plane's reads), and west and east
//! from the lanes beside it by warp shuffles. Only the tile's two halo rows and its lane-edge
//! points (the warp's first west and last east point) are loaded besides the tile itself, and
//! every load a plane needs is issued one plane ahead, so a thread has a plane of loads in
//! flight while it updates the one before.
//!
//! Against `walk_tile` (a thread loads its up, down, north, south, west and east neighbours from
//! L1/L2 for each of a few planes) this loads each point of u once per segment, plus
//! 2 / BlockY for the halo rows and 2 / segment for the segment's first planes.

#include <relax/agent/vector_walk.cuh>
#include <relax/config.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/domain/shape.hpp>
#include <relax/strategy/tuning.hpp>

#include <cstdint>

namespace relax::detail {

//! The shared rows of `walk_plane_tile`: the tile's rows and its two halo rows, for two planes.
template <int BlockX, int BlockY, class T>
struct PlaneWalkRows {
  Vec16<T> row[2][BlockY + 2][BlockX];
};

//! The tiles of the plane walk: x tiles of `BlockX` vectors, y tiles of `BlockY` rows, and
//! z segments of `segment` planes; a block takes x tile blockIdx.x and the (y tile, segment)
//! pairs t = blockIdx.y, blockIdx.y + gridDim.y, … with the y tile varying fastest.
struct PlaneWalkTiles {
  std::int64_t x = 0, y = 0, z = 0;
  std::int64_t segment = 1;
  RELAX_HOST_DEVICE std::int64_t pairs() const { return y * z; }
};

template <int BlockX, int BlockY, class T>
RELAX_HOST_DEVICE inline PlaneWalkTiles plane_walk_tiles(const Shape& g, std::int64_t segment) {
  return {tile_count(g.nx, BlockX * Vec16<T>::width), tile_count(g.ny, BlockY), tile_count(g.nz, segment), segment};
}

//! The plane walk's tiles of 3D Sync and of the 3D residual for the box `g`: segments of
//! `tuning::sync_plane_segment` planes, halved (down to `tuning::sync_plane_min_segment`) while
//! there are fewer than `tuning::sync_plane_min_blocks_per_sm` tiles an SM: long segments load
//! the two planes where segments meet less often, short ones fill the device on a small box.
template <int BlockX, int BlockY, class T>
PlaneWalkTiles sync_plane_tiles(const Shape& g) {
  const std::int64_t enough = static_cast<std::int64_t>(tuning::sync_plane_min_blocks_per_sm) * current_sm_count();
  std::int64_t segment = tuning::sync_plane_segment;
  PlaneWalkTiles tiles = plane_walk_tiles<BlockX, BlockY, T>(g, segment);
  while (segment > tuning::sync_plane_min_segment && tiles.x * tiles.pairs() < enough) {
    segment /= 2;
    tiles = plane_walk_tiles<BlockX, BlockY, T>(g, segment);
  }
  return tiles;
}

//! The launch grid of the plane walk (blockIdx.y capped at the hardware limit; blocks loop).
inline dim3 plane_walk_grid(const PlaneWalkTiles& tiles) {
  const std::int64_t y = tiles.pairs() < 65535 ? tiles.pairs() : 65535;
  return dim3(static_cast<unsigned>(tiles.x), static_cast<unsigned>(y), 1);
}

//! Walks tile (`bx`, `t`) of `tiles` over the interior of the 3D box `g`: for each row vector of
//! the calling thread's row in the segment's planes it calls `visit(at, rhs, star)` as
//! `walk_tile` does (`at` the offset of its first point from point (0, 0, 0), `rhs` its b, `star`
//! its neighbourhood). Every thread of the block must call it with the same `bx` and `t`: it
//! holds block barriers. `u` and `b` point at point (0, 0, 0) of grids whose interior rows start
//! 16-byte aligned.
template <int BlockX, int BlockY, class T, class Visit>
__device__ __forceinline__ void walk_plane_tile(PlaneWalkRows<BlockX, BlockY, T>& rows, const PlaneWalkTiles& tiles,
                                                std::int64_t bx, std::int64_t t, const T* __restrict__ u,
                                                const T* __restrict__ b, const Shape& g, Visit&& visit) {
  static_assert(BlockX % 32 == 0, "relax: the plane walk's rows are whole warps");
  static_assert(BlockY >= 2, "relax: the plane walk's halo rows are loaded by two different warps");
  constexpr int W = Vec16<T>::width;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int lane = tx % 32;
  const std::int64_t i0 = (t % tiles.y) * BlockY + 1;  // the tile's first row
  const std::int64_t k0 = (t / tiles.y) * tiles.segment + 1;
  const std::int64_t k1 = k0 + tiles.segment <= g.nz + 1 ? k0 + tiles.segment : g.nz + 1;  // past the last plane
  const std::int64_t i = i0 + ty;
  const std::int64_t j0 = (bx * BlockX + tx) * W + 1;
  const int valid = j0 > g.nx ? 0 : j0 + W - 1 <= g.nx ? W : static_cast<int>(g.nx - j0 + 1);
  // Which rows this thread loads: its own (the row past the box too, the ring, as the south
  // neighbour of the box's last row when it is not the tile's halo row), and the halo rows.
  const bool stored = valid > 0 && i <= g.ny;
  const int loaded = valid > 0 && i <= g.ny + 1 ? valid : 0;
  const bool north_halo = ty == 0 && valid > 0;
  const bool south_halo = ty == BlockY - 1 && valid > 0 && i0 + BlockY <= g.ny + 1;
  const int halo = north_halo || south_halo ? valid : 0;
  const std::int64_t halo_shift = north_halo ? -g.pitch : g.pitch;
  const int halo_row = north_halo ? 0 : BlockY + 1;
  // The warp's edge lanes and the row's last vector read their outer neighbour from memory.
  const bool west_edge = stored && lane == 0;
  const bool east_edge = stored && (lane == 31 || j0 + W > g.nx);

  std::int64_t at = g.at(k0, i, j0);
  Vec16<T> up = load_vector(u + at - g.plane, loaded);
  Vec16<T> centre = load_vector(u + at, loaded);
  Vec16<T> down = load_vector(u + at + g.plane, loaded);
  Vec16<T> rhs = load_vector(b + at, stored ? valid : 0);
  Vec16<T> side = load_vector(u + at + halo_shift, halo);
  T west = west_edge ? u[at - 1] : T(0);
  T east = east_edge ? u[at + valid] : T(0);
  VectorStar<T, 3> star;
  star.valid = valid;
  for (std::int64_t k = k0; k < k1; ++k, at += g.plane) {
    // The next plane's loads first, so they are in flight during this plane's update.
    const bool more = k + 1 < k1;
    const Vec16<T> down_next = load_vector(u + at + 2 * g.plane, more ? loaded : 0);
    const Vec16<T> rhs_next = load_vector(b + at + g.plane, more && stored ? valid : 0);
    const Vec16<T> side_next = load_vector(u + at + g.plane + halo_shift, more ? halo : 0);
    const T west_next = more && west_edge ? u[at + g.plane - 1] : T(0);
    const T east_next = more && east_edge ? u[at + g.plane + valid] : T(0);

    const int buffer = static_cast<int>((k - k0) & 1);
    rows.row[buffer][ty + 1][tx] = centre;
    if (halo > 0) rows.row[buffer][halo_row][tx] = side;
    __syncthreads();
    star.c = centre;
    star.up = up;
    star.down = down;
    star.n = rows.row[buffer][ty][tx];
    star.s = rows.row[buffer][ty + 2][tx];
    const T from_west = __shfl_up_sync(0xffffffffu, centre.v[W - 1], 1);
    const T from_east = __shfl_down_sync(0xffffffffu, centre.v[0], 1);
    star.west = west_edge ? west : from_west;
    star.east = east_edge ? east : from_east;
    star.first = g.point<3>(k, i, j0);
    if (stored) visit(at, rhs, star);

    up = centre;
    centre = down;
    down = down_next;
    rhs = rhs_next;
    side = side_next;
    west = west_next;
    east = east_next;
  }
  __syncthreads();  // the next tile's first plane may not overwrite rows still being read
}

}  // namespace relax::detail
