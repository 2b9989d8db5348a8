#pragma once
//! \file
//! The (x, y) tiles of the 3D stream (`agent/plane_stream.cuh`): host and device arithmetic,
//! tested on the host.
//!
//! A tile is 32 lanes of W points across (a lane's vector) by the block's rows down, loaded with a
//! ghost zone of G columns and D rows on each side; it stores the 32 W − 2G columns and R − 2D
//! rows inside. The plain walk covers a plane with `tiles_x` × `tiles_y` such tiles, the last of
//! each row of tiles storing only the columns left over (1 .. 32 W − 2G, the rest). Where the rest
//! is narrow, its tile leaves most of its lanes without a stored point, yet costs a block as much
//! as any other. So the last tiles of `fold` consecutive rows of tiles are streamed as one folded
//! tile: its lanes form `fold` segments of `lanes` lanes, segment s holding the rest columns (with
//! their ghost zone) of the s-th of those rows. Every segment is a tile of its own as far as the
//! stream goes: a lane reads its east and west neighbours from the lanes beside it, which at a
//! segment's edge belong to the next segment; those values reach only the segment's G ghost
//! columns, as a whole tile's edge lanes' do. At 512² and D = 4 in float (120 × 24 stored points a
//! tile) the plain walk takes 5 × 22 = 110 tiles, 22 of them storing 32 of their 120 columns;
//! folded three rows of tiles at a time, 96.
//!
//! The last row of tiles has the same problem in y: it stores only the rows left over, and where
//! those and their ghost rows fit in half the block's warps, `stack` of its whole tiles, side by
//! side in the plane, are streamed one above the other by one block: stacked segment s, warps
//! s · `stack_warps` and on, holds the tile `s` columns of tiles to the right of the first. Across
//! the warps' boundary a warp reads its north or south neighbour from the other segment, which
//! reaches only the segment's D ghost rows, as at a whole tile's top and bottom. At 512² and D = 4
//! the last row stores 8 rows; with 8 ghost rows they fill 4 warps of 4 rows, so its four whole
//! tiles stream as two (94 tiles where folding alone leaves 96).
//!
//! Tiles are numbered group by group, a group being `fold` rows of tiles: the whole tiles of the
//! group, x fastest, then its folded tile; where the last row is stacked, its whole tiles are
//! left out of the last group and its stacked tiles come after every group. Without folding or
//! stacking (`fold` 1, `lanes` 32, `stack` 1) that is the plain walk's order, x fastest.

#include <relax/config.hpp>
#include <relax/core/launch.hpp>

#include <cstdint>

namespace relax::detail {

//! One tile of the 3D stream: the first loaded column `x0` and row `y0` of its segment 0, and
//! `segments` segments of `lanes` lanes each (one of 32 for a whole tile), segment s loaded from
//! row y0 + s · (rows kept); or, `stacks` > 1, that many whole tiles stacked, stacked segment s
//! in warps s · `stack_warps` .. (s + 1) · `stack_warps` − 1, loaded from column x0 + s ·
//! (columns kept) and row y0 (`stack_warps` means nothing where `stacks` is 1).
struct PlaneTile {
  std::int64_t x0, y0;
  int lanes, segments;
  int stacks = 1, stack_warps = 0;
};

//! How the planes of a box are tiled (see the file comment).
struct PlaneTiling {
  std::int64_t tiles_x, tiles_y;  //!< the plain walk's tiles across and down
  std::int64_t fold;              //!< rows of tiles whose last tiles stream as one (1: none)
  int lanes;                      //!< lanes of a folded tile's segment (32 without folding)
  int stack;        //!< whole tiles of the last row of tiles stacked in one block (1: none)
  int stack_warps;  //!< warps of a stacked segment (where `stack` > 1)
  int rows_per_warp;  //!< the block's rows a warp (0: not given, no stacking)
  std::int64_t stacked;  //!< stacked tiles (0 where `stack` is 1)
  int columns_kept, rows_kept, ghost_columns, ghost_rows;
  std::int64_t tiles;  //!< tiles in all
};

//! The tiling of an nx × ny plane by tiles of 32 lanes of `width` points, `columns_kept` ×
//! `rows_kept` of them stored, `ghost_columns` and `ghost_rows` loaded on each side. `folding`
//! false: the plain walk, whole tiles only (what the persistent loops stream, without this
//! arithmetic). A fold needs at least two segments in a warp and two rows of tiles. Stacking
//! needs `rows_per_warp` (the block's rows a warp; 0: no stacking), at least two stacked segments
//! in the block's warps, and at least two whole tiles in the last row of tiles.
RELAX_HOST_DEVICE inline PlaneTiling plane_tiling(std::int64_t nx, std::int64_t ny, int width, int columns_kept,
                                                  int rows_kept, int ghost_columns, int ghost_rows,
                                                  bool folding = true, int rows_per_warp = 0) {
  PlaneTiling t{};
  t.tiles_x = tile_count(nx, columns_kept);
  t.tiles_y = tile_count(ny, rows_kept);
  t.columns_kept = columns_kept;
  t.rows_kept = rows_kept;
  t.ghost_columns = ghost_columns;
  t.ghost_rows = ghost_rows;
  const std::int64_t rest = nx - (t.tiles_x - 1) * columns_kept;
  const int lanes = static_cast<int>(tile_count(rest + 2 * ghost_columns, width));
  const std::int64_t fold = folding ? (32 / lanes < t.tiles_y ? 32 / lanes : t.tiles_y) : 1;
  t.fold = fold >= 2 ? fold : 1;
  t.lanes = fold >= 2 ? lanes : 32;
  const std::int64_t whole_x = t.tiles_x - 1;
  t.stack = 1;
  t.stack_warps = 0;
  t.rows_per_warp = rows_per_warp;
  t.stacked = 0;
  if (folding && rows_per_warp > 0 && whole_x >= 2) {
    const int warps = (rows_kept + 2 * ghost_rows) / rows_per_warp;
    const std::int64_t rest_y = ny - (t.tiles_y - 1) * rows_kept;
    const int stack_warps = static_cast<int>(tile_count(rest_y + 2 * ghost_rows, rows_per_warp));
    const int stack = warps / stack_warps;
    if (stack >= 2) {
      t.stack = stack;
      t.stack_warps = stack_warps;
      t.stacked = tile_count(whole_x, stack);
    }
  }
  t.tiles = t.tiles_y * whole_x + tile_count(t.tiles_y, t.fold) - (t.stack > 1 ? whole_x - t.stacked : 0);
  return t;
}

//! Tile `tile` (0 .. tiles − 1) of the tiling `t`.
RELAX_HOST_DEVICE inline PlaneTile plane_tile(const PlaneTiling& t, std::int64_t tile) {
  const std::int64_t whole_x = t.tiles_x - 1;  // whole tiles across a row of tiles
  const std::int64_t last_y0 = (t.tiles_y - 1) * t.rows_kept + 1 - t.ghost_rows;
  if (tile >= t.tiles - t.stacked) {  // stacked tiles of the last row of tiles
    const std::int64_t first = (tile - (t.tiles - t.stacked)) * t.stack;
    const std::int64_t stacks = whole_x - first < t.stack ? whole_x - first : t.stack;
    return {first * t.columns_kept + 1 - t.ghost_columns, last_y0, 32, 1, static_cast<int>(stacks), t.stack_warps};
  }
  const std::int64_t per_group = t.fold * whole_x + 1;
  const std::int64_t group = tile / per_group, at = tile - group * per_group;
  const std::int64_t first_row = group * t.fold;
  const std::int64_t rows = t.tiles_y - first_row < t.fold ? t.tiles_y - first_row : t.fold;
  // Rows of the group whose whole tiles are numbered here: not the last row where it is stacked.
  const std::int64_t whole_rows = rows - (t.stack > 1 && first_row + rows == t.tiles_y ? 1 : 0);
  if (at < whole_rows * whole_x) {
    const std::int64_t tx = at % whole_x, ty = first_row + at / whole_x;
    return {tx * t.columns_kept + 1 - t.ghost_columns, ty * t.rows_kept + 1 - t.ghost_rows, 32, 1};
  }
  return {whole_x * t.columns_kept + 1 - t.ghost_columns, first_row * t.rows_kept + 1 - t.ghost_rows, t.lanes,
          static_cast<int>(rows)};
}

}  // namespace relax::detail
