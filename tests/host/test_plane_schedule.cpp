// The launched 3D stream's work split (strategy/plane_schedule.hpp): stream-K's shares and
// pieces cover every plane of every tile once, within one tile a piece; the segment count and
// the choice between the two schedules on the boxes they were measured on.
#include <catch2/catch.hpp>

#include <relax/strategy/plane_schedule.hpp>

#include <algorithm>
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
  // 512³ at D = 4: 5 × 22 tiles of 120 × 24 kept points on 132 SMs, one block each: 6 segments
  // of 86 planes in 5 waves (475 steps a block against stream-K's 427 and two warm-ups).
  CHECK(plane_segments(110, 512, 4, 132) == 6);
  CHECK(use_plane_stream_k(110, 512, 4, 132));
  CHECK(use_plane_stream_k(100, 512, 3, 132));  // 512³, D = 3 (5 × 20 tiles)
  CHECK(use_plane_stream_k(27, 100, 4, 132));   // 333 × 200 × 100: 20 planes a block
  CHECK(use_plane_stream_k(224, 768, 4, 132));  // 768³ (7 × 32 tiles): more tiles than blocks
  // Measured slower with stream-K: D = 2, and a few planes a block; D = 1 as D = 2.
  CHECK_FALSE(use_plane_stream_k(95, 512, 2, 132));
  CHECK_FALSE(use_plane_stream_k(95, 512, 1, 132));
  CHECK_FALSE(use_plane_stream_k(15, 33, 3, 132));  // 500 × 77 × 33: 3.75 planes a block
  CHECK_FALSE(use_plane_stream_k(1, 33, 4, 132));   // 5 × 17 × 33
  // The bound: two warm-ups of 2D + 1 steps a block.
  CHECK(use_plane_stream_k(2 * 9, 132, 4, 132));
  CHECK_FALSE(use_plane_stream_k(2 * 9, 131, 4, 132));
}
