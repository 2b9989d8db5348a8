#pragma once
//! \file
//! How the launched 3D stream of `TemporalBlock<D, ColumnStream>` shares its work out over blocks
//! (`launch_plane_stream` in `column_stream.cuh`): host arithmetic, tested on the host.
//!
//! A tile streams down its nz planes with a warm-up and a drain of D steps at each end of every
//! piece it streams. Two schedules:
//! - segments: each tile's planes cut into `plane_segments` equal segments, a block each; the
//!   resident blocks run in waves, every block of a wave at the same planes as its neighbours.
//! - stream-K: the P = tiles × nz planes of all tiles, in tile order (x tiles fastest), shared out
//!   equally over the resident blocks (`plane_share`); a block streams its share as one piece per
//!   tile it meets (`plane_piece`). No wave is left part-full, at the price of a block's
//!   neighbours being at other planes.
//! `use_plane_stream_k` picks between them (`tuning::plane_stream_k_*`, with the measurements).
//! Stream-K's shares can also be equal in modelled cost rather than in planes
//! (`weighted_plane_shares`, `tuning::plane_stream_weighted`): tiles at the grid's edges and
//! folded tiles do not cost what an inner tile does.

#include <relax/agent/plane_tiling.hpp>
#include <relax/config.hpp>
#include <relax/core/error.hpp>
#include <relax/core/launch.hpp>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace relax::detail {

//! The number of plane segments for `tiles` (x, y) tiles of a box `nz` planes deep: the count
//! that minimises waves × steps per block, where a block of a segment of L planes takes
//! L + 2D + 1 steps and `resident` blocks run at once.
inline std::int64_t plane_segments(std::int64_t tiles, std::int64_t nz, int depth, std::int64_t resident) {
  std::int64_t best = 1, best_cost = -1;
  for (std::int64_t segments = 1; segments <= std::min<std::int64_t>(nz, 65535); ++segments) {
    const std::int64_t waves = tile_count(tiles * segments, resident);
    const std::int64_t cost = waves * (tile_count(nz, segments) + 2 * depth + 1);
    if (best_cost < 0 || cost < best_cost) best = segments, best_cost = cost;
    if (waves > 64) break;  // deeper splits only add warm-up steps
  }
  return best;
}

//! Which schedule a launch of the 3D stream runs: `chosen` (by `use_plane_stream_k`, and
//! `tuning::plane_stream_weighted` for stream-K's shares), or one by name (for tests and
//! measurements): segments, stream-K with equal shares, or with weighted ones.
enum class PlaneSchedule { chosen, segments, stream_k, weighted };

//! Whether the 3D stream of depth `depth` over `tiles` tiles `nz` planes deep, with `resident`
//! blocks, runs stream-K: from `tuning::plane_stream_k_min_depth`, where each block's share is at
//! least `tuning::plane_stream_k_min_warmups` warm-ups (2D + 1 steps) long.
inline bool use_plane_stream_k(std::int64_t tiles, std::int64_t nz, int depth, std::int64_t resident) {
  return depth >= tuning::plane_stream_k_min_depth &&
         tiles * nz >= resident * tuning::plane_stream_k_min_warmups * (2 * depth + 1);
}

//! Stream-K's share of block `k` of `blocks`: planes [first, last) of the `planes` of all tiles
//! (numbered tile by tile). The shares are contiguous, cover every plane once and differ by at
//! most one plane.
struct PlaneShare {
  std::int64_t first, last;
};
RELAX_HOST_DEVICE inline PlaneShare plane_share(std::int64_t planes, std::int64_t k, std::int64_t blocks) {
  return {planes * k / blocks, planes * (k + 1) / blocks};
}

//! The piece of a share that starts at plane `at` (of all tiles) and ends at `last` or at the end
//! of its tile, whichever comes first: the tile, and its planes [z0, z1) counted from 1 as the
//! box's interior planes are.
struct PlanePiece {
  std::int64_t tile, z0, z1;
};
RELAX_HOST_DEVICE inline PlanePiece plane_piece(std::int64_t at, std::int64_t last, std::int64_t nz) {
  const std::int64_t tile = at / nz;
  const std::int64_t stop = last < (tile + 1) * nz ? last : (tile + 1) * nz;
  return {tile, at - tile * nz + 1, stop - tile * nz + 1};
}

//! What a plane of `tile` costs relative to a plane of a tile whose loaded points all lie in the
//! grid (the model of `tuning::plane_weight_*`), on an nx × ny plane with `width` points a lane.
//! A stacked tile counts its segments' columns in the grid on average, and its rows outside the
//! grid (those of warps past its last segment too) over the block's rows.
inline double plane_tile_weight(const PlaneTiling& t, const PlaneTile& tile, std::int64_t nx, std::int64_t ny,
                                int width) {
  const std::int64_t rows = t.rows_kept + 2 * t.ghost_rows, columns = std::int64_t{tile.lanes} * width;
  auto columns_of = [&](std::int64_t x0) {  // columns in the grid of a segment loaded from x0
    const std::int64_t first = std::max<std::int64_t>(x0, 0), last = std::min(x0 + columns - 1, nx + 1);
    return last >= first ? last - first + 1 : std::int64_t{0};
  };
  auto rows_out_of = [&](std::int64_t y0, std::int64_t height) {  // rows outside the grid of one
    const std::int64_t in = std::min(y0 + height - 1, ny + 1) - std::max<std::int64_t>(y0, 0) + 1;
    return height - std::max<std::int64_t>(in, 0);
  };
  double columns_in = 0, rows_out_fraction = 0;
  bool ring = false;
  if (tile.stacks > 1) {
    const std::int64_t height = std::int64_t{tile.stack_warps} * t.rows_per_warp;
    std::int64_t rows_out = rows - tile.stacks * height;  // warps past the last segment
    for (int s = 0; s < tile.stacks; ++s) {
      const std::int64_t x0 = tile.x0 + std::int64_t{s} * t.columns_kept;
      columns_in += double(columns_of(x0)) / tile.stacks;
      rows_out += rows_out_of(tile.y0, height);
      ring = ring || x0 <= 0 || x0 + columns - 1 >= nx + 1;
    }
    rows_out_fraction = double(rows_out) / double(rows);
  } else {
    columns_in = double(columns_of(tile.x0) * tile.segments);
    std::int64_t rows_out = 0;
    for (int s = 0; s < tile.segments; ++s) rows_out += rows_out_of(tile.y0 + std::int64_t{s} * t.rows_kept, rows);
    rows_out_fraction = double(rows_out) / double(rows * tile.segments);
    ring = tile.x0 <= 0 || tile.x0 + columns - 1 >= nx + 1;  // column 0 or nx + 1 in its lanes
  }
  const bool folded = tile.lanes < 32;
  return (1 - tuning::plane_weight_columns_out * (1 - columns_in / (32.0 * width))) *
         (1 - tuning::plane_weight_rows_out * rows_out_fraction) *
         (1 + (ring ? tuning::plane_weight_ring_lanes : 0.0)) * (1 + (folded ? tuning::plane_weight_folded : 0.0)) *
         (1 + (tile.stacks > 1 ? tuning::plane_weight_stacked : 0.0));
}

//! Stream-K's shares for up to `capacity` blocks: block k streams planes [first[k], first[k + 1])
//! of all tiles (numbered tile by tile, as `plane_share`'s), a kernel parameter. 256 blocks: one
//! an SM on every GPU of today (132 on an H200; a block of depth 4 takes an SM's shared memory),
//! in 2 KiB, which keeps the launch's parameters under 4 KiB. The table had 1024 rows (8 KiB)
//! until 2026-12-05, and a weighted launch then took 19.8 µs of host time on an H100 machine
//! (512³, D = 4), which the first launch of a batch waits for; with 2 KiB 13.7, of which 6.4 the
//! table's arithmetic, and with the table remembered (`cached_weighted_plane_shares`) 4.5, where
//! an equal-shares launch takes 4.3 to 8.3 (`relax_study_plane_balance` prints them).
struct PlaneShareTable {
  static constexpr int capacity = 256;
  std::int64_t first[capacity + 1];
};
static_assert(sizeof(PlaneShareTable) <= 4096 - 512, "relax: the share table leaves no room under 4 KiB of parameters");

//! Whether the chosen stream-K schedule of depth `depth` over `tiles` tiles `nz` planes deep on
//! `resident` blocks weights its shares (`weighted_plane_shares`): with
//! `tuning::plane_stream_weighted`, from `tuning::plane_stream_weighted_min_depth`, where a
//! block's share is at least `tuning::plane_stream_weighted_min_planes` planes, and where every
//! resident block has a row in the table (more would leave SMs idle: equal shares then).
inline bool use_weighted_plane_shares(std::int64_t tiles, std::int64_t nz, int depth, std::int64_t resident) {
  return tuning::plane_stream_weighted && depth >= tuning::plane_stream_weighted_min_depth &&
         resident <= PlaneShareTable::capacity && tiles * nz >= resident * tuning::plane_stream_weighted_min_planes;
}

//! Shares of the planes of all `t.tiles` tiles of an nx × ny × nz box over `blocks` (1 ..
//! capacity) blocks, equal in modelled cost (`plane_tile_weight`): contiguous, in block order,
//! covering every plane once. Host arithmetic, once a launch (each tile's weight computed twice,
//! for the total and on the walk, rather than kept: no allocation a launch).
inline PlaneShareTable weighted_plane_shares(const PlaneTiling& t, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                             int width, int blocks) {
  require(blocks >= 1 && blocks <= PlaneShareTable::capacity, "blocks", blocks, "1 to PlaneShareTable::capacity");
  PlaneShareTable table{};
  double total = 0;
  for (std::int64_t k = 0; k < t.tiles; ++k) total += plane_tile_weight(t, plane_tile(t, k), nx, ny, width);
  std::int64_t tile = 0;
  double before = 0;  // cost of the planes of the tiles before `tile`, in inner-tile planes / nz
  double weight = plane_tile_weight(t, plane_tile(t, 0), nx, ny, width);
  table.first[0] = 0;
  for (int k = 1; k < blocks; ++k) {
    const double target = total * k / blocks;
    while (tile + 1 < t.tiles && before + weight <= target) {
      before += weight;
      ++tile;
      weight = plane_tile_weight(t, plane_tile(t, tile), nx, ny, width);
    }
    const double planes = std::floor((target - before) / weight * double(nz));
    const std::int64_t at = tile * nz + std::min<std::int64_t>(nz, std::max(0.0, planes));
    table.first[k] = std::max(at, table.first[k - 1]);
  }
  table.first[blocks] = t.tiles * nz;
  return table;
}

//! `weighted_plane_shares`, remembered: the table of the last call on this thread with the same
//! tiling, box and block count is returned again. A launch computes its table on the host before
//! the kernel starts (6.4 µs at 512³, D = 4, on an H100 machine's host: relax_study_plane_balance),
//! and a batch of sweeps launches the same box again and again.
inline const PlaneShareTable& cached_weighted_plane_shares(const PlaneTiling& t, std::int64_t nx, std::int64_t ny,
                                                           std::int64_t nz, int width, int blocks) {
  struct Key {
    std::int64_t values[16];
    bool operator==(const Key& o) const { return std::equal(values, values + 16, o.values); }
  };
  const Key key{{t.tiles_x, t.tiles_y, t.fold, t.lanes, t.stack, t.stack_warps, t.rows_per_warp, t.columns_kept,
                 t.rows_kept, t.ghost_columns, t.ghost_rows, nx, ny, nz, width, blocks}};
  thread_local Key last{};
  thread_local bool known = false;
  thread_local PlaneShareTable table{};
  if (!known || !(last == key)) {
    table = weighted_plane_shares(t, nx, ny, nz, width, blocks);
    last = key;
    known = true;
  }
  return table;
}

}  // namespace relax::detail
