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

#include <relax/agent/plane_claims.hpp>
#include <relax/agent/plane_tiling.hpp>
#include <relax/config.hpp>
#include <relax/core/error.hpp>
#include <relax/core/launch.hpp>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

//! Which schedule a launch of the 3D stream runs: `chosen` (by `use_plane_stream_k`, then
//! `use_heads_and_tails` or `use_weighted_plane_shares` for stream-K's shares), or one by name
//! (for tests and measurements): segments, stream-K with equal shares, with weighted ones, or
//! heads and tails (weighted shares where the tiles are not fewer than the blocks), heads and
//! tails then steals (`agent/plane_claims.hpp`), or whole tiles then steals (both chosen where
//! `use_plane_steals`).
enum class PlaneSchedule { chosen, segments, stream_k, weighted, heads, heads_and_steals, tiles_and_steals };

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

//! The table `make()` builds for a tiling, an nx × ny × nz box, `width` points a lane and
//! `blocks` blocks, remembered: the table of the last call on this thread for the same table type
//! and the same key is returned again. A launch computes its table on the host before the kernel
//! starts (the weighted shares' 6.4 µs at 512³, D = 4, on an H100 machine's host:
//! relax_study_plane_balance), and a batch of sweeps launches the same box again and again.
template <class Table, class Make>
const Table& cached_plane_table(const PlaneTiling& t, std::int64_t nx, std::int64_t ny, std::int64_t nz, int width,
                                int blocks, Make&& make) {
  struct Key {
    std::int64_t values[16];
    bool operator==(const Key& o) const { return std::equal(values, values + 16, o.values); }
  };
  const Key key{{t.tiles_x, t.tiles_y, t.fold, t.lanes, t.stack, t.stack_warps, t.rows_per_warp, t.columns_kept,
                 t.rows_kept, t.ghost_columns, t.ghost_rows, nx, ny, nz, width, blocks}};
  thread_local Key last{};
  thread_local bool known = false;
  thread_local Table table{};
  if (!known || !(last == key)) {
    table = make();
    last = key;
    known = true;
  }
  return table;
}

//! `weighted_plane_shares`, remembered (`cached_plane_table`).
inline const PlaneShareTable& cached_weighted_plane_shares(const PlaneTiling& t, std::int64_t nx, std::int64_t ny,
                                                           std::int64_t nz, int width, int blocks) {
  return cached_plane_table<PlaneShareTable>(t, nx, ny, nz, width, blocks,
                                             [&] { return weighted_plane_shares(t, nx, ny, nz, width, blocks); });
}

//! Heads and tails: stream-K's shares laid out so that vertical neighbours stream the same planes
//! at the same time. Where the tiles are fewer than the blocks, block k < tiles streams the head
//! of tile k, its planes [1, head_end[k]), and all heads start together; the other `blocks −
//! tiles` blocks (the tail blocks) stream the tails [head_end[k], nz + 1): first in `rounds`
//! rounds of whole tails (tail block j takes the tails of tiles j, j + tail blocks, ..., so a
//! round's tails start together), then the rest in tile order, tail block j taking planes
//! [rest[j], rest[j + 1]) of all tiles (numbered tile by tile, as stream-K's), less the heads.
//!
//! Why: a tile loads D ghost rows on each side, which its neighbour above or below stores or loads
//! too. Streamed at the same planes, the second load of those rows hits L2. Stream-K's equal
//! shares start each block at its own plane, so they line up only by chance: at 512³, D = 4, 110
//! whole tiles on 132 blocks (six shares are a row of five tiles exactly) ran 668.5 G updates/s
//! on an H100 and 572.6 on 131 blocks; folded (94 tiles) 577.3, and in heads and tails 713.8.
//! Measured by relax_study_plane_balance (docs/performance-notes.md, "Heads and tails").
//!
//! Each share is equal in modelled cost (`plane_tile_weight`), a piece after a block's first
//! costing `overhead` planes of its tile more (its warm-up): the heads' length is searched for
//! at which the last tail block, which takes what is left, costs what a head does.
struct PlaneHeadsTable {
  static constexpr int capacity = PlaneShareTable::capacity;
  //! [0, tiles): head_end, the plane after tile k's head (1: no head; nz + 1: no tail);
  //! [tiles, blocks]: rest, the tail blocks' shares of the rest (rest[blocks − tiles] = tiles · nz).
  std::int64_t value[capacity + 1];
  int rounds;
};
static_assert(sizeof(PlaneHeadsTable) <= 4096 - 512, "relax: the heads table leaves no room under 4 KiB of parameters");

//! Where block `block`'s next piece is (`next_heads_piece`).
struct PlaneHeadsCursor {
  std::int64_t step = 0;  //!< a head block: its pieces so far; a tail block: its rounds so far
  std::int64_t at = -1;   //!< a tail block's next plane of the rest (−1: not started)
};

//! The next piece of block `block` of `blocks` in the heads-and-tails schedule `h` of `tiles`
//! tiles `nz` planes deep, into `piece`; false when the block has streamed all its pieces.
RELAX_HOST_DEVICE inline bool next_heads_piece(const PlaneHeadsTable& h, std::int64_t block, std::int64_t blocks,
                                               std::int64_t tiles, std::int64_t nz, PlaneHeadsCursor& c,
                                               PlanePiece& piece) {
  if (block < tiles) {
    piece = {block, 1, h.value[block]};
    return c.step++ == 0 && piece.z1 > 1;
  }
  const std::int64_t tails = blocks - tiles, j = block - tiles;
  while (c.step < h.rounds) {
    const std::int64_t tile = c.step++ * tails + j;
    if (h.value[tile] <= nz) {
      piece = {tile, h.value[tile], nz + 1};
      return true;
    }
  }
  if (c.at < 0) c.at = h.value[tiles + j];
  const std::int64_t last = h.value[tiles + j + 1];
  while (c.at < last) {
    const std::int64_t tile = c.at / nz, stop = (tile + 1) * nz < last ? (tile + 1) * nz : last;
    const std::int64_t z0 = c.at - tile * nz + 1 > h.value[tile] ? c.at - tile * nz + 1 : h.value[tile];
    c.at = stop;
    if (z0 <= stop - tile * nz) {
      piece = {tile, z0, stop - tile * nz + 1};
      return true;
    }
  }
  return false;
}

//! The heads-and-tails table for a given head cost `head` (in inner-tile planes), with the tiles'
//! weights `weight`; `*last_cost` is what the last tail block then costs (`heads_and_tails_shares`).
inline PlaneHeadsTable heads_and_tails_at(const std::vector<double>& weight, std::int64_t nz, int blocks,
                                          double head, double overhead, bool rounds, double* last_cost) {
  const auto tiles = static_cast<std::int64_t>(weight.size());
  const std::int64_t tails = blocks - tiles;
  PlaneHeadsTable h{};
  // Heads rounded so that their planes add up to the sum of head / weight, rounded; rounded and
  // clamped to [0, nz] as doubles, so that no quotient, however large, overflows an integer.
  double sum = 0;
  for (std::int64_t k = 0; k < tiles; ++k) {
    const double before = sum;
    sum += head / weight[k];
    h.value[k] = 1 + static_cast<std::int64_t>(std::min(double(nz), std::max(0.0, std::round(sum) - std::round(before))));
  }
  // A piece costs its planes and `overhead` planes, weighted by its tile; a head is one piece, so
  // each tail block has head + overhead to spend (the last one spends what is left).
  auto cost = [&](std::int64_t k, std::int64_t planes) { return weight[k] * (double(planes) + overhead); };
  std::vector<double> left(static_cast<std::size_t>(tails), head + overhead);
  std::int64_t k = 0;
  h.rounds = 0;
  for (; rounds && k + tails <= tiles; k += tails, ++h.rounds) {
    bool fits = true;
    for (std::int64_t j = 0; j < tails; ++j) fits = fits && cost(k + j, nz + 1 - h.value[k + j]) <= left[j];
    if (!fits) break;
    for (std::int64_t j = 0; j < tails; ++j) left[j] -= cost(k + j, nz + 1 - h.value[k + j]);
  }
  // The rest in tile order: tile k from plane z on.
  std::int64_t z = k < tiles ? h.value[k] : nz + 1;
  for (std::int64_t j = 0; j < tails; ++j) {
    h.value[tiles + j] = k < tiles ? k * nz + z - 1 : tiles * nz;
    const bool last = j + 1 == tails;
    double& want = left[j];
    while (k < tiles && (last || want > (overhead + 0.5) * weight[k])) {
      if (z > nz) {
        if (++k < tiles) z = h.value[k];
        continue;
      }
      const std::int64_t planes =
          last ? nz + 1 - z
               : static_cast<std::int64_t>(std::min(double(nz + 1 - z), std::max(1.0, std::round(want / weight[k] - overhead))));
      z += planes;
      want -= cost(k, planes);
    }
  }
  h.value[blocks] = tiles * nz;
  *last_cost = head + overhead - left[tails - 1];
  return h;
}

//! Whether the 3D stream's stream-K schedule (`use_plane_stream_k`) of depth `depth` over `tiles`
//! tiles on `resident` blocks runs as heads and tails (`PlaneHeadsTable`): with
//! `tuning::plane_stream_heads`, from `tuning::plane_stream_heads_min_depth`, where the tiles are
//! fewer than the blocks and every resident block has a row in the table.
inline bool use_heads_and_tails(std::int64_t tiles, int depth, std::int64_t resident) {
  return tuning::plane_stream_heads && depth >= tuning::plane_stream_heads_min_depth && tiles < resident &&
         resident <= PlaneHeadsTable::capacity;
}

//! Whether the chosen stream-K schedule of depth `depth` over `tiles` tiles `nz` planes deep on
//! `resident` blocks runs with steals (`agent/plane_claims.hpp`): heads and tails then steals
//! where the tiles are fewer than the blocks, whole tiles then steals where they are not. With
//! `tuning::plane_stream_steals`, from `tuning::plane_stream_heads_min_depth`, where a block's
//! share is at least `tuning::plane_stream_steals_min_planes` planes (a steal costs its thief a
//! warm-up, and where the shares are short the blocks end together without them), every resident
//! block has a claim word, and the box fits the claim words.
inline bool use_plane_steals(std::int64_t tiles, std::int64_t nz, int depth, std::int64_t resident) {
  return tuning::plane_stream_steals && depth >= tuning::plane_stream_heads_min_depth &&
         resident <= PlaneHeadsTable::capacity && tiles * nz >= resident * tuning::plane_stream_steals_min_planes &&
         plane_steals_fit(tiles, nz, tuning::plane_stream_steal_chunk);
}

//! The heads-and-tails table of tiles whose planes cost `weight` (in inner-tile planes), `nz`
//! planes deep, over `blocks` (more than the tiles, at most the capacity) blocks: shares of equal
//! cost, a piece after a block's first costing `overhead` planes more, whole tails in rounds
//! where `rounds`.
inline PlaneHeadsTable heads_and_tails_shares(const std::vector<double>& weight, std::int64_t nz, int blocks,
                                              double overhead, bool rounds = true) {
  require(blocks > static_cast<std::int64_t>(weight.size()) && blocks <= PlaneHeadsTable::capacity, "blocks", blocks,
          "more blocks than tiles, at most PlaneHeadsTable::capacity");
  require(overhead >= 0 && std::isfinite(overhead), "overhead", overhead, "a finite overhead of at least 0 planes");
  double total = 0;
  for (double w : weight) {
    require(w > 0 && std::isfinite(w), "weight", w, "positive and finite tile weights");
    total += w * double(nz);
  }
  // The last tail block's cost falls as the heads grow: bisect for the head cost where it is a
  // head's (the table is valid, every plane once, whatever the head cost).
  double lo = 0, hi = 2 * total / blocks + overhead, last = 0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    heads_and_tails_at(weight, nz, blocks, mid, overhead, rounds, &last);
    (last > mid + overhead ? lo : hi) = mid;
  }
  return heads_and_tails_at(weight, nz, blocks, hi, overhead, rounds, &last);
}

//! The heads-and-tails table of all `t.tiles` tiles of an nx × ny × nz box over `blocks` blocks,
//! each tile's planes weighing `plane_tile_weight` (1 where `weighted` is false). Host
//! arithmetic, once a box (`cached_heads_and_tails`).
inline PlaneHeadsTable heads_and_tails_shares(const PlaneTiling& t, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                              int width, int blocks, double overhead, bool weighted = true,
                                              bool rounds = true) {
  std::vector<double> weight(static_cast<std::size_t>(t.tiles), 1.0);
  if (weighted)
    for (std::int64_t k = 0; k < t.tiles; ++k) weight[k] = plane_tile_weight(t, plane_tile(t, k), nx, ny, width);
  return heads_and_tails_shares(weight, nz, blocks, overhead, rounds);
}

//! `heads_and_tails_shares` of the launch (weighted, in rounds, a piece's warm-up costing
//! `tuning::plane_stream_piece_overhead` planes a level of depth, the depth being the tiling's
//! ghost rows), remembered (`cached_plane_table`, whose key holds the tiling).
inline const PlaneHeadsTable& cached_heads_and_tails(const PlaneTiling& t, std::int64_t nx, std::int64_t ny,
                                                     std::int64_t nz, int width, int blocks) {
  return cached_plane_table<PlaneHeadsTable>(t, nx, ny, nz, width, blocks, [&] {
    return heads_and_tails_shares(t, nx, ny, nz, width, blocks, tuning::plane_stream_piece_overhead * t.ghost_rows);
  });
}

}  // namespace relax::detail
