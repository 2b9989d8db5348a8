// The launched 3D stream's work split (strategy/plane_schedule.hpp): stream-K's shares and
// pieces cover every plane of every tile once, within one tile a piece; the segment count and
// the choice between the two schedules on the boxes they were measured on; and its tiles
// (agent/plane_tiling.hpp), folded, stacked or not, store every point of a plane once.
#include <catch2/catch.hpp>

#include <relax/agent/plane_tiling.hpp>
#include <relax/strategy/plane_schedule.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace relax::detail;

TEST_CASE("stream-K's shares and pieces cover every plane of every tile once", "[plane_schedule]") {
  struct Case {
    std::int64_t tiles, nz, blocks;
  };
  // Shares longer and shorter than a tile, fewer planes than blocks, one plane, one tile.
  const Case cases[] = {{110, 512, 132}, {33, 256, 132}, {1, 33, 132}, {7, 1, 5},  {1, 1, 1},
                        {15, 33, 132},   {3, 5, 4},      {224, 768, 132}, {2, 9, 17}};
  for (const Case& c : cases) {
    INFO("tiles " << c.tiles << ", nz " << c.nz << ", blocks " << c.blocks);
    const std::int64_t planes = c.tiles * c.nz;
    std::vector<int> seen(static_cast<std::size_t>(planes), 0);
    std::int64_t expected_first = 0, shortest = planes, longest = 0;
    for (std::int64_t k = 0; k < c.blocks; ++k) {
      const PlaneShare share = plane_share(planes, k, c.blocks);
      CHECK(share.first == expected_first);  // contiguous, in block order
      CHECK(share.last >= share.first);
      expected_first = share.last;
      shortest = std::min(shortest, share.last - share.first);
      longest = std::max(longest, share.last - share.first);
      for (std::int64_t at = share.first; at < share.last;) {
        const PlanePiece piece = plane_piece(at, share.last, c.nz);
        REQUIRE(piece.z1 > piece.z0);
        CHECK(piece.tile == at / c.nz);
        CHECK(piece.z0 >= 1);
        CHECK(piece.z1 <= c.nz + 1);
        for (std::int64_t z = piece.z0; z < piece.z1; ++z) ++seen[static_cast<std::size_t>(piece.tile * c.nz + z - 1)];
        at += piece.z1 - piece.z0;
      }
    }
    CHECK(expected_first == planes);
    CHECK(longest - shortest <= 1);
    std::int64_t once = 0;
    for (int s : seen) once += s == 1;
    CHECK(once == planes);
  }
}

TEST_CASE("the 3D stream's schedule: segments at low depth and on thin boxes, stream-K else", "[plane_schedule]") {
  // 512³ at D = 4: 5 × 22 tiles of 120 × 24 kept points on 132 SMs (96 with the last column
  // folded), one block each: 6 segments of 86 planes in 5 waves for the 110 whole tiles (475
  // steps a block against stream-K's 427 and two warm-ups), 4 of 128 planes for the 96.
  CHECK(plane_segments(110, 512, 4, 132) == 6);
  CHECK(plane_segments(96, 512, 4, 132) == 4);
  CHECK(use_plane_stream_k(110, 512, 4, 132));
  CHECK(use_plane_stream_k(96, 512, 4, 132));
  CHECK(use_plane_stream_k(87, 512, 3, 132));   // 512³, D = 3 (5 × 20 tiles, 87 folded)
  CHECK(use_plane_stream_k(27, 100, 4, 132));   // 333 × 200 × 100: 20 planes a block
  CHECK(use_plane_stream_k(208, 768, 4, 132));  // 768³ (7 × 32 tiles, 208 folded): more tiles than blocks
  // Measured slower with stream-K: D = 2, and a few planes a block; D = 1 as D = 2.
  CHECK_FALSE(use_plane_stream_k(95, 512, 2, 132));
  CHECK_FALSE(use_plane_stream_k(95, 512, 1, 132));
  CHECK_FALSE(use_plane_stream_k(15, 33, 3, 132));  // 500 × 77 × 33: 3.75 planes a block
  CHECK_FALSE(use_plane_stream_k(1, 33, 4, 132));   // 5 × 17 × 33
  // The bound: two warm-ups of 2D + 1 steps a block.
  CHECK(use_plane_stream_k(2 * 9, 132, 4, 132));
  CHECK_FALSE(use_plane_stream_k(2 * 9, 131, 4, 132));
}

namespace {

// The 3D stream's tile shapes: vector width, stored columns and rows, ghost columns and rows (D).
struct TileShape {
  int width, columns_kept, rows_kept, ghost_columns, ghost_rows;
};
// float at D = 4 and 1, double at D = 3 and 1 (eight warps of four rows, 32 lanes).
constexpr TileShape shapes[] = {{4, 120, 24, 4, 4}, {4, 120, 30, 4, 1}, {2, 56, 26, 4, 3}, {2, 60, 30, 2, 1}};

}  // namespace

TEST_CASE("the 3D stream's tiles, folded, stacked or not, store every point of a plane once", "[plane_schedule]") {
  const std::int64_t sizes[][2] = {{1, 1},     {1, 300}, {33, 17},   {130, 200}, {176, 60}, {250, 49}, {121, 25},
                                   {512, 512}, {480, 96}, {1200, 80}, {57, 1},    {61, 31},  {300, 7},  {768, 100},
                                   {370, 30},  {370, 40}, {1000, 5}};
  for (const TileShape& sh : shapes)
    for (const auto& size : sizes)
      for (int form = 0; form < 3; ++form) {  // the plain walk, folded, folded and stacked
        const bool folding = form > 0;
        const int rows_per_warp = form == 2 ? 4 : 0;
        const std::int64_t nx = size[0], ny = size[1];
        INFO("nx " << nx << ", ny " << ny << ", width " << sh.width << ", kept " << sh.columns_kept << " x "
                   << sh.rows_kept << ", folding " << folding << ", rows a warp " << rows_per_warp);
        const PlaneTiling t = plane_tiling(nx, ny, sh.width, sh.columns_kept, sh.rows_kept, sh.ghost_columns,
                                           sh.ghost_rows, folding, rows_per_warp);
        CHECK(t.tiles_x == tile_count(nx, sh.columns_kept));
        CHECK(t.tiles_y == tile_count(ny, sh.rows_kept));
        REQUIRE(t.fold >= 1);
        CHECK(t.fold * t.lanes <= 32);
        if (!folding) CHECK(t.fold == 1);
        if (t.fold == 1) CHECK(t.lanes == 32);
        REQUIRE(t.stack >= 1);
        if (rows_per_warp == 0) CHECK(t.stack == 1);
        // Stacked: the segments and their ghost rows fit in the block's warps, at least twice.
        if (t.stack > 1) {
          CHECK(t.stack * t.stack_warps <= 8);
          CHECK(t.stack_warps * 4 >= ny - (t.tiles_y - 1) * sh.rows_kept + 2 * sh.ghost_rows);
          CHECK(t.stacked == tile_count(t.tiles_x - 1, t.stack));
        }
        const std::int64_t unstacked = t.tiles_y * (t.tiles_x - 1) + tile_count(t.tiles_y, t.fold);
        CHECK(t.tiles == unstacked - (t.stack > 1 ? t.tiles_x - 1 - t.stacked : 0));
        std::vector<int> stored(static_cast<std::size_t>(nx * ny), 0);
        std::int64_t plain = 0, stacks = 0;  // the tile's number in the plain walk, where nothing folds
        for (std::int64_t k = 0; k < t.tiles; ++k) {
          const PlaneTile tile = plane_tile(t, k);
          REQUIRE(tile.segments >= 1);
          REQUIRE(tile.stacks >= 1);
          CHECK(tile.lanes * tile.segments <= 32);
          CHECK((tile.x0 - 1 + sh.ghost_columns) % sh.width == 0);  // whole vectors from column 1 - ghost
          if (t.fold == 1 && t.stack == 1) {
            CHECK(tile.lanes == 32);
            CHECK(tile.segments == 1);
            CHECK(tile.stacks == 1);
            CHECK(tile.x0 == plain % t.tiles_x * sh.columns_kept + 1 - sh.ghost_columns);
            CHECK(tile.y0 == plain / t.tiles_x * sh.rows_kept + 1 - sh.ghost_rows);
            ++plain;
          }
          // What the agent stores: a segment's columns from `ghost_columns` to lanes · width −
          // ghost_columns, its rows from `ghost_rows` for `rows_kept` rows, inside the box; a
          // stacked segment's columns likewise from x0 + s · columns_kept, its rows from
          // `ghost_rows` to stack_warps · 4 − ghost_rows.
          if (k >= t.tiles - t.stacked) stacks += tile.stacks;  // a last one of one segment is a whole tile
          if (tile.stacks > 1) {
            CHECK(k >= t.tiles - t.stacked);
            CHECK(tile.lanes == 32);
            CHECK(tile.stack_warps == t.stack_warps);
            for (int s = 0; s < tile.stacks; ++s)
              for (int local = sh.ghost_columns; local < 32 * sh.width - sh.ghost_columns; ++local)
                for (int r = sh.ghost_rows; r < tile.stack_warps * 4 - sh.ghost_rows; ++r) {
                  const std::int64_t c = tile.x0 + s * sh.columns_kept + local, i = tile.y0 + r;
                  if (c >= 1 && c <= nx && i >= 1 && i <= ny) ++stored[static_cast<std::size_t>((i - 1) * nx + c - 1)];
                }
            continue;
          }
          for (int s = 0; s < tile.segments; ++s)
            for (int local = sh.ghost_columns; local < tile.lanes * sh.width - sh.ghost_columns; ++local)
              for (int r = 0; r < sh.rows_kept; ++r) {
                const std::int64_t c = tile.x0 + local, i = tile.y0 + s * sh.rows_kept + sh.ghost_rows + r;
                if (c >= 1 && c <= nx && i >= 1 && i <= ny) ++stored[static_cast<std::size_t>((i - 1) * nx + c - 1)];
              }
        }
        if (t.stack > 1) CHECK(stacks == t.tiles_x - 1);  // every whole tile of the last row, once
        std::int64_t once = 0;
        for (int v : stored) once += v == 1;
        CHECK(once == nx * ny);
      }
}

TEST_CASE("the 3D stream folds the narrow last tiles of rows of tiles", "[plane_schedule]") {
  // 512², D = 4 in float: 5 × 22 tiles, the last of each row storing 32 of its 120 columns; ten
  // lanes hold those 32 and their ghost columns, so three rows of tiles share one: 4 · 22 + 8.
  const PlaneTiling t = plane_tiling(512, 512, 4, 120, 24, 4, 4);
  CHECK(t.fold == 3);
  CHECK(t.lanes == 10);
  CHECK(t.tiles == 96);
  CHECK(plane_tiling(512, 512, 4, 120, 24, 4, 4, false).tiles == 110);
  const PlaneTile first = plane_tile(t, 0), folded = plane_tile(t, 12), next = plane_tile(t, 13),
                  last = plane_tile(t, 95);
  CHECK((first.x0 == -3 && first.y0 == -3 && first.lanes == 32 && first.segments == 1));
  CHECK((folded.x0 == 4 * 120 - 3 && folded.y0 == -3 && folded.lanes == 10 && folded.segments == 3));
  CHECK((next.x0 == -3 && next.y0 == 3 * 24 - 3 && next.segments == 1));
  CHECK((last.x0 == 4 * 120 - 3 && last.y0 == 21 * 24 - 3 && last.segments == 1));  // 22 = 7 · 3 + 1
  // A rest of whole width, one whose segments would not fit twice in a warp, and one row of
  // tiles are not folded.
  CHECK(plane_tiling(480, 512, 4, 120, 24, 4, 4).fold == 1);
  CHECK(plane_tiling(600, 512, 4, 120, 24, 4, 4).fold == 1);  // rest 120: 32 lanes
  CHECK(plane_tiling(536, 512, 4, 120, 24, 4, 4).fold == 2);  // rest 56: 16 lanes
  CHECK(plane_tiling(537, 512, 4, 120, 24, 4, 4).fold == 1);  // rest 57: 17 lanes
  CHECK(plane_tiling(130, 24, 4, 120, 24, 4, 4).fold == 1);   // one row of tiles
}

TEST_CASE("the 3D stream stacks the short whole tiles of the last row of tiles", "[plane_schedule]") {
  // 512², D = 4 in float, 8 warps of 4 rows: the last row of tiles stores 8 rows, which with
  // their 8 ghost rows fill 4 warps, so its four whole tiles stream two to a block: 96 - 2.
  const PlaneTiling t = plane_tiling(512, 512, 4, 120, 24, 4, 4, true, 4);
  CHECK(t.fold == 3);
  CHECK(t.stack == 2);
  CHECK(t.stack_warps == 4);
  CHECK(t.stacked == 2);
  CHECK(t.tiles == 94);
  // The last group (row 21 alone) keeps only its folded tile; the stacked tiles come last.
  const PlaneTile folded = plane_tile(t, 91), first = plane_tile(t, 92), second = plane_tile(t, 93);
  CHECK((folded.x0 == 4 * 120 - 3 && folded.y0 == 21 * 24 - 3 && folded.lanes == 10 && folded.segments == 1));
  CHECK((first.x0 == -3 && first.y0 == 21 * 24 - 3 && first.stacks == 2 && first.stack_warps == 4));
  CHECK((second.x0 == 2 * 120 - 3 && second.y0 == 21 * 24 - 3 && second.stacks == 2));
  CHECK(plane_tile(t, 90).stacks == 1);
  // Rows left that with their ghost rows need more than half the warps, or one whole tile in the
  // last row, are not stacked; nor is anything without the rows a warp.
  CHECK(plane_tiling(512, 520, 4, 120, 24, 4, 4, true, 4).stack == 1);  // 16 rows left: 6 warps
  CHECK(plane_tiling(130, 512, 4, 120, 24, 4, 4, true, 4).stack == 1);  // one whole tile in the row
  CHECK(plane_tiling(370, 49, 4, 120, 24, 4, 4, true, 4).stack == 2);   // 1 row left: 3 warps
  CHECK(plane_tiling(512, 512, 4, 120, 24, 4, 4, true).stack == 1);
  CHECK(plane_tiling(512, 512, 4, 120, 24, 4, 4, false, 4).stack == 1);
}

TEST_CASE("stream-K's weighted shares cover every plane once and are equal in modelled cost", "[plane_schedule]") {
  // 512³ at D = 4 in float (folded: 96 tiles), 768³ (208), a box of a few tiles and few planes,
  // and more blocks than planes.
  struct Case {
    std::int64_t nx, ny, nz;
    int blocks;
  };
  const Case cases[] = {{512, 512, 512, 132}, {768, 768, 768, 132}, {250, 49, 61, 132}, {33, 17, 5, 132},
                        {130, 200, 9, 7},     {1, 1, 3, 132},       {1200, 800, 3, PlaneShareTable::capacity}};
  for (const Case& c : cases) {
    INFO("box " << c.nx << " x " << c.ny << " x " << c.nz << ", blocks " << c.blocks);
    const PlaneTiling t = plane_tiling(c.nx, c.ny, 4, 120, 24, 4, 4, true, 4);  // stacked where it can
    const int blocks = static_cast<int>(std::min<std::int64_t>(c.blocks, t.tiles * c.nz));
    const PlaneShareTable shares = weighted_plane_shares(t, c.nx, c.ny, c.nz, 4, blocks);
    CHECK(shares.first[0] == 0);
    CHECK(shares.first[blocks] == t.tiles * c.nz);
    double total = 0, heaviest = 0;
    std::vector<double> weight(static_cast<std::size_t>(t.tiles));
    for (std::int64_t k = 0; k < t.tiles; ++k) {
      weight[k] = plane_tile_weight(t, plane_tile(t, k), c.nx, c.ny, 4);
      total += weight[k] * c.nz;
      heaviest = std::max(heaviest, weight[k]);
    }
    for (int k = 0; k < blocks; ++k) {
      REQUIRE(shares.first[k + 1] >= shares.first[k]);  // contiguous, in block order, every plane once
      double cost = 0;
      for (std::int64_t p = shares.first[k]; p < shares.first[k + 1]; ++p) cost += weight[p / c.nz];
      CHECK(std::abs(cost - total / blocks) <= 2 * heaviest);  // equal to within a plane or two
    }
  }
}

TEST_CASE("the weights of the 3D stream's tiles: edges cheaper or dearer as measured", "[plane_schedule]") {
  // 512², D = 4 in float, folded (tile numbers as in the folding test above).
  const PlaneTiling t = plane_tiling(512, 512, 4, 120, 24, 4, 4);
  auto weight = [&](std::int64_t k) { return plane_tile_weight(t, plane_tile(t, k), 512, 512, 4); };
  const double inner = weight(13 + 1);  // second row of tiles, second tile: every loaded point in the grid
  CHECK(inner == Approx(1.0));
  const double first_x = weight(13), folded = weight(12), last_row = weight(92), last_folded = weight(95);
  CHECK(first_x == Approx(1.059).epsilon(0.005));  // lane 0 holds the ring column: every warp restores
  CHECK(folded > first_x);                         // measured 1.130 of an inner tile
  CHECK(last_row == Approx(0.878).epsilon(0.01));  // 19 of 32 rows beyond the grid
  CHECK(last_folded > last_row);
  // Without folding the last tile of a row of tiles stores 32 of 120 columns (measured 0.966).
  const PlaneTiling whole = plane_tiling(512, 512, 4, 120, 24, 4, 4, false);
  const double last_x = plane_tile_weight(whole, plane_tile(whole, 4 + 5), 512, 512, 4);
  CHECK(last_x < first_x);
  CHECK(last_x == Approx(0.966).epsilon(0.03));
  // A stacked tile of the last row (two whole tiles of 16 rows each, rows 501..516, 3 of them
  // beyond the grid's row 513): measured 0.921 of an inner tile without the ring column, 0.978
  // with it (an H100), far less than the two tiles of the last row it replaces.
  const PlaneTiling stacked = plane_tiling(512, 512, 4, 120, 24, 4, 4, true, 4);
  REQUIRE(plane_tile(stacked, 92).stacks == 2);
  REQUIRE(plane_tile(stacked, 93).stacks == 2);
  CHECK(plane_tile_weight(stacked, plane_tile(stacked, 93), 512, 512, 4) == Approx(0.921).epsilon(0.01));
  CHECK(plane_tile_weight(stacked, plane_tile(stacked, 92), 512, 512, 4) == Approx(0.978).epsilon(0.01));
  CHECK(plane_tile_weight(stacked, plane_tile(stacked, 93), 512, 512, 4) < 2 * last_row);
}

TEST_CASE("the launch's weighted shares, remembered, are the table of their tiling, box and blocks",
          "[plane_schedule]") {
  const PlaneTiling a = plane_tiling(512, 512, 4, 120, 24, 4, 4, true, 4);
  const PlaneTiling b = plane_tiling(768, 768, 4, 120, 24, 4, 4, true, 4);
  const PlaneTiling unstacked = plane_tiling(512, 512, 4, 120, 24, 4, 4, true);  // the same box, 96 tiles
  REQUIRE(unstacked.tiles != a.tiles);
  auto same = [](const PlaneShareTable& x, const PlaneShareTable& y, int blocks) {
    return std::equal(x.first, x.first + blocks + 1, y.first);
  };
  // Alternating boxes, block counts and depths of box: each call gets its own table.
  for (int round = 0; round < 2; ++round) {
    CHECK(same(cached_weighted_plane_shares(a, 512, 512, 512, 4, 132), weighted_plane_shares(a, 512, 512, 512, 4, 132),
               132));
    CHECK(same(cached_weighted_plane_shares(a, 512, 512, 512, 4, 100), weighted_plane_shares(a, 512, 512, 512, 4, 100),
               100));
    CHECK(same(cached_weighted_plane_shares(a, 512, 512, 300, 4, 100), weighted_plane_shares(a, 512, 512, 300, 4, 100),
               100));
    CHECK(same(cached_weighted_plane_shares(b, 768, 768, 768, 4, 132), weighted_plane_shares(b, 768, 768, 768, 4, 132),
               132));
    // Only the tiling differs (stacked or not): a table of its own.
    CHECK(same(cached_weighted_plane_shares(unstacked, 512, 512, 512, 4, 132),
               weighted_plane_shares(unstacked, 512, 512, 512, 4, 132), 132));
    CHECK(same(cached_weighted_plane_shares(a, 512, 512, 512, 4, 132), weighted_plane_shares(a, 512, 512, 512, 4, 132),
               132));
  }
}

TEST_CASE("the chosen stream-K weights its shares at D = 4 where a block's share is long", "[plane_schedule]") {
  // Measured faster weighted: 512³ (96 tiles, 372 planes a block) and 768³ (208, 1210) at D = 4;
  // slower: 256³ (25 tiles, 48 planes a block), 333 × 200 × 100 (27, 20), and 512³ at D = 3.
  CHECK(use_weighted_plane_shares(96, 512, 4, 132) == relax::tuning::plane_stream_weighted);
  CHECK(use_weighted_plane_shares(208, 768, 4, 132) == relax::tuning::plane_stream_weighted);
  CHECK_FALSE(use_weighted_plane_shares(25, 256, 4, 132));
  CHECK_FALSE(use_weighted_plane_shares(27, 100, 4, 132));
  CHECK_FALSE(use_weighted_plane_shares(87, 512, 3, 132));
  // More resident blocks than the table has rows (a GPU of over 256 SMs): equal shares, which
  // use every block, even where the shares are long.
  CHECK(use_weighted_plane_shares(208, 768, 4, PlaneShareTable::capacity) == relax::tuning::plane_stream_weighted);
  CHECK_FALSE(use_weighted_plane_shares(208, 768, 4, PlaneShareTable::capacity + 1));
}

namespace {

// The pieces of every block of a heads-and-tails table, through the kernel's own enumeration.
std::vector<std::vector<PlanePiece>> heads_pieces(const PlaneHeadsTable& h, std::int64_t blocks, std::int64_t tiles,
                                                  std::int64_t nz) {
  std::vector<std::vector<PlanePiece>> pieces(static_cast<std::size_t>(blocks));
  for (std::int64_t k = 0; k < blocks; ++k) {
    PlaneHeadsCursor cursor;
    PlanePiece piece{};
    while (next_heads_piece(h, k, blocks, tiles, nz, cursor, piece)) {
      REQUIRE(pieces[k].size() < 1000);  // it ends
      pieces[k].push_back(piece);
    }
  }
  return pieces;
}

}  // namespace

TEST_CASE("heads and tails: every plane once, heads together from plane 1, shares equal in modelled cost",
          "[plane_schedule]") {
  // 512³ at D = 4 (94 tiles, stacked) and D = 3 (87), boxes of a few tiles and few planes, more
  // blocks than planes, one tile, and a box whose tails are fewer than a round.
  struct Case {
    std::int64_t nx, ny, nz;
    int blocks, columns_kept, rows_kept, ghost;
  };
  const Case cases[] = {{512, 512, 512, 132, 120, 24, 4}, {512, 512, 512, 132, 122, 26, 3},
                        {250, 49, 61, 132, 120, 24, 4},   {33, 17, 5, 132, 120, 24, 4},
                        {130, 200, 9, 40, 120, 24, 4},    {1, 1, 3, 2, 120, 24, 4},
                        {1, 1, 300, 132, 120, 24, 4},     {700, 300, 256, 132, 120, 24, 4},
                        {512, 512, 512, 256, 120, 24, 4}};
  for (const Case& c : cases)
    for (const bool weighted : {true, false})
      for (const bool rounds : {true, false}) {
        INFO("box " << c.nx << " x " << c.ny << " x " << c.nz << ", blocks " << c.blocks << ", weighted "
                    << weighted << ", rounds " << rounds);
        const PlaneTiling t = plane_tiling(c.nx, c.ny, 4, c.columns_kept, c.rows_kept, c.ghost, c.ghost, true, 4);
        REQUIRE(t.tiles < c.blocks);
        const double overhead = 2.0 * c.ghost;
        const PlaneHeadsTable h = heads_and_tails_shares(t, c.nx, c.ny, c.nz, 4, c.blocks, overhead, weighted, rounds);
        const auto pieces = heads_pieces(h, c.blocks, t.tiles, c.nz);
        std::vector<int> seen(static_cast<std::size_t>(t.tiles * c.nz), 0);
        std::vector<double> weight(static_cast<std::size_t>(t.tiles), 1.0);
        double total = 0, heaviest = 0;
        for (std::int64_t k = 0; k < t.tiles; ++k) {
          if (weighted) weight[k] = plane_tile_weight(t, plane_tile(t, k), c.nx, c.ny, 4);
          total += weight[k] * c.nz;
          heaviest = std::max(heaviest, weight[k]);
        }
        double most = 0;
        for (std::int64_t k = 0; k < c.blocks; ++k) {
          double cost = 0;
          for (const PlanePiece& p : pieces[k]) {
            REQUIRE(p.tile >= 0);
            REQUIRE(p.tile < t.tiles);
            REQUIRE(p.z0 >= 1);
            REQUIRE(p.z1 > p.z0);
            REQUIRE(p.z1 <= c.nz + 1);
            for (std::int64_t z = p.z0; z < p.z1; ++z) ++seen[static_cast<std::size_t>(p.tile * c.nz + z - 1)];
            cost += weight[p.tile] * (double(p.z1 - p.z0) + overhead);
          }
          if (k < t.tiles) {  // a head block: at most its tile's head, from plane 1
            REQUIRE(pieces[k].size() <= 1);
            if (!pieces[k].empty()) {
              CHECK(pieces[k][0].tile == k);
              CHECK(pieces[k][0].z0 == 1);
            }
          }
          if (!pieces[k].empty()) most = std::max(most, cost);
        }
        std::int64_t once = 0;
        for (int s : seen) once += s == 1;
        CHECK(once == t.tiles * c.nz);
        // Where every block has more than a few planes' work, the costliest block is within a
        // piece's overhead and two planes of the mean (with overheads counted).
        if (total / c.blocks >= 4 * (overhead + 2)) CHECK(most <= total / c.blocks + (2 * overhead + 3) * heaviest);
        // Whole tails in rounds: round r's tails are tiles r · tails + j, a piece each from the
        // tile's head's end to its last plane.
        if (rounds && h.rounds > 0)
          for (std::int64_t j = 0; j < c.blocks - t.tiles; ++j) {
            const std::int64_t tile = j;  // round 0
            if (h.value[tile] > c.nz) continue;
            REQUIRE(!pieces[t.tiles + j].empty());
            CHECK(pieces[t.tiles + j][0].tile == tile);
            CHECK(pieces[t.tiles + j][0].z0 == h.value[tile]);
            CHECK(pieces[t.tiles + j][0].z1 == c.nz + 1);
          }
      }
}

TEST_CASE("heads and tails at 512³, D = 4: one piece a head block, a few a tail block, whole tails in rounds",
          "[plane_schedule]") {
  const PlaneTiling t = plane_tiling(512, 512, 4, 120, 24, 4, 4, true, 4);
  REQUIRE(t.tiles == 94);
  const PlaneHeadsTable h = heads_and_tails_shares(t, 512, 512, 512, 4, 132, 8.0);
  const auto pieces = heads_pieces(h, 132, t.tiles, 512);
  // 38 tail blocks: two rounds of whole tails (76 tiles), the 18 tails left shared out.
  CHECK(h.rounds == 2);
  std::size_t most = 0;
  for (std::int64_t k = 0; k < 132; ++k) {
    if (k < t.tiles) CHECK(pieces[k].size() == 1);
    most = std::max(most, pieces[k].size());
  }
  CHECK(most <= 4);
  // The heads are about 2.6 times a tail long (an inner tile's about 366 planes of 512).
  CHECK(h.value[14] - 1 > 340);
  CHECK(h.value[14] - 1 < 400);
  // Remembered per tiling, box and blocks.
  const PlaneHeadsTable& again = cached_heads_and_tails(t, 512, 512, 512, 4, 132);
  CHECK(std::equal(again.value, again.value + 133, h.value));
  CHECK(again.rounds == h.rounds);
  const PlaneHeadsTable& other = cached_heads_and_tails(t, 512, 512, 512, 4, 120);
  CHECK(other.value[120] == t.tiles * 512);
}

TEST_CASE("the chosen stream-K runs heads and tails where the tiles are fewer than the blocks", "[plane_schedule]") {
  // Measured faster than stream-K's weighted and equal shares on the H200 at 512³ (94 tiles at
  // D = 4, 87 at D = 3), 256³ (25 tiles, 48 planes a block) and 333 × 200 × 100 (20).
  CHECK(use_heads_and_tails(94, 4, 132) == relax::tuning::plane_stream_heads);
  CHECK(use_heads_and_tails(87, 3, 132) == relax::tuning::plane_stream_heads);
  CHECK(use_heads_and_tails(25, 4, 132) == relax::tuning::plane_stream_heads);
  CHECK_FALSE(use_heads_and_tails(208, 4, 132));  // 768³: more tiles than blocks
  CHECK_FALSE(use_heads_and_tails(132, 4, 132));
  CHECK_FALSE(use_heads_and_tails(94, 2, 132));   // below the depth stream-K starts at
  CHECK_FALSE(use_heads_and_tails(94, 4, PlaneHeadsTable::capacity + 1));
}

TEST_CASE("the chosen stream-K steals where a block's share is long", "[plane_schedule]") {
  // On the H200 (relax_study_plane_balance --shares, float32): 512³ (94 tiles, 365 planes a
  // block) heads then steals 1.015 of heads alone at D = 4, 1.006 at D = 3; 768³ (208 tiles,
  // 1210 planes a block) whole tiles then steals 1.07 of weighted shares at D = 4, 1.19 at D = 3;
  // at D = 4, 256³ (48 planes a block) 0.80 of heads alone, 333 × 200 × 100 (20) 0.75.
  const bool on = relax::tuning::plane_stream_steals;
  CHECK(use_plane_steals(94, 512, 4, 132) == on);
  CHECK(use_plane_steals(87, 512, 3, 132) == on);
  CHECK(use_plane_steals(208, 768, 4, 132) == on);
  CHECK_FALSE(use_plane_steals(25, 256, 4, 132));  // 48 planes a block
  CHECK_FALSE(use_plane_steals(27, 100, 4, 132));
  CHECK_FALSE(use_plane_steals(94, 512, 2, 132));  // below the depth heads and tails start at
  CHECK_FALSE(use_plane_steals(94, 512, 4, PlaneHeadsTable::capacity + 1));
  CHECK_FALSE(use_plane_steals(1, plane_claim_max_plane, 4, 1));  // planes beyond the claim words
  CHECK_FALSE(use_plane_steals(plane_claim_max_tiles, 512, 4, 132));
}

TEST_CASE("heads and tails refuses bad weights and stays exact for weights far apart", "[plane_schedule]") {
  CHECK_THROWS(heads_and_tails_shares(std::vector<double>{1.0, 0.0}, 64, 4, 8.0));
  CHECK_THROWS(heads_and_tails_shares(std::vector<double>{1.0, std::nan("")}, 64, 4, 8.0));
  CHECK_THROWS(heads_and_tails_shares(std::vector<double>{1.0, 1.0}, 64, 4, -1.0));
  CHECK_THROWS(heads_and_tails_shares(std::vector<double>{1.0, 1.0}, 64, 2, 8.0));  // no more blocks than tiles
  // Quotients beyond any integer (head / 1e-12 planes) are clamped, not overflowed: every plane of
  // each tile still streamed once, counted piece by piece (10⁸ planes a tile).
  const std::int64_t nz = 100'000'000;
  const std::vector<double> weight{1e-12, 1.0, 1e6};
  const PlaneHeadsTable h = heads_and_tails_shares(weight, nz, 5, 8.0);
  std::vector<std::int64_t> covered(weight.size(), 0);
  for (std::int64_t k = 0; k < 5; ++k) {
    PlaneHeadsCursor cursor;
    PlanePiece piece{};
    int pieces = 0;
    while (next_heads_piece(h, k, 5, 3, nz, cursor, piece)) {
      REQUIRE(++pieces < 100);
      REQUIRE(piece.z0 >= 1);
      REQUIRE(piece.z1 > piece.z0);
      REQUIRE(piece.z1 <= nz + 1);
      covered[piece.tile] += piece.z1 - piece.z0;
    }
  }
  for (std::int64_t c : covered) CHECK(c == nz);
}
