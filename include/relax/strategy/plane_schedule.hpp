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

#include <relax/config.hpp>
#include <relax/core/launch.hpp>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
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

//! Which schedule a launch of the 3D stream runs: `chosen` (by `use_plane_stream_k`), or either
//! one by name (for tests and measurements).
enum class PlaneSchedule { chosen, segments, stream_k };

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

}  // namespace relax::detail
