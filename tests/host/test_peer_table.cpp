// The numbering of the CPU-free multi-sub-domain kernel's work items (multi/peer_table.hpp), on
// the host: over the slabs of a decomposition, grouped into kernels in several ways, every walk
// tile of every slab is one item exactly once; the edge items (the slabs' first and last bands)
// come before all interior ones; an item owns an edge side exactly when its band is that edge
// and the slab has a neighbour there, and has flags there exactly when that neighbour is in
// another kernel; and an edge tile's flag index is its place across the band, the same for the
// facing tile of the neighbour (flag word r of one slab answers tile r of the other).
#include <catch2/catch.hpp>

#include <relax/domain/decomposition.hpp>
#include <relax/domain/shape.hpp>
#include <relax/multi/peer_table.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

using relax::Decomposition;
using relax::Extents;
namespace detail = relax::detail;

namespace {

// A kernel's launch description over `slabs`, numbered into `edge_items` and `items` work items.
detail::PeerLaunch<float> launch_of(const std::vector<detail::PeerSlab<float>>& slabs, std::int64_t edge_items,
                                    std::int64_t items) {
  detail::PeerLaunch<float> launch{};
  launch.slabs = slabs.data();
  launch.count = static_cast<int>(slabs.size());
  launch.edge_items = edge_items;
  launch.items = items;
  return launch;
}

struct Case {
  Extents global;
  int parts;
  std::int64_t tile_columns;  // X × the vector width
  int block_y, rows;
};

// Slab s goes to kernel kernel_of(s); checks every kernel's numbering.
template <class KernelOf>
void check_numbering(const Case& c, KernelOf kernel_of) {
  const int rank = c.global.rank;
  INFO("box " << c.global.to_text() << ", " << c.parts << " slabs, tiles of " << c.tile_columns << " x " << c.block_y
              << ", " << c.rows << " rows a thread");
  const Decomposition d(c.global, c.parts, 1);
  std::vector<float> dummy(4);  // the arrays' addresses only mark neighbours (nothing is read)
  std::vector<unsigned long long> flags(4);
  int kernels = 0;
  for (int s = 0; s < d.size(); ++s) kernels = std::max(kernels, kernel_of(s) + 1);
  for (int h = 0; h < kernels; ++h) {
    std::vector<detail::PeerSlab<float>> slabs;
    std::vector<int> index;
    for (int s = 0; s < d.size(); ++s) {
      if (kernel_of(s) != h) continue;
      const relax::Slab& me = d[s];
      detail::PeerSlab<float> t{};
      const detail::Shape g = detail::shape_of(me.layout<float>());
      detail::peer_tile(t, g, rank, c.tile_columns, c.block_y, c.rows);
      for (int side = 0; side < 2; ++side) {
        const bool has = side == 0 ? me.has_prev : me.has_next;
        if (!has) continue;
        t.out[side][0] = t.out[side][1] = dummy.data();
        if (kernel_of(side == 0 ? s - 1 : s + 1) != h) t.inbound[side] = t.outbound[side] = flags.data();
      }
      t.index = s;
      slabs.push_back(t);
      index.push_back(s);
    }
    const auto [edge_items, items] = detail::peer_number(slabs.data(), slabs.size());
    const detail::PeerLaunch<float> launch = launch_of(slabs, edge_items, items);

    std::int64_t expected = 0, expected_edges = 0;
    for (const auto& t : slabs) {
      expected += t.items();
      expected_edges += t.edge_items();
    }
    REQUIRE(items == expected);
    REQUIRE(edge_items == expected_edges);
    std::set<std::tuple<int, std::int64_t, std::int64_t>> seen;
    for (std::int64_t v = 0; v < items; ++v) {
      const detail::PeerItem it = detail::peer_item(launch, v, rank);
      REQUIRE(it.slab >= 0);
      REQUIRE(it.slab < launch.count);
      const auto& t = slabs[static_cast<std::size_t>(it.slab)];
      const relax::Slab& me = d[index[static_cast<std::size_t>(it.slab)]];
      const std::int64_t tiles_y = t.band_items / t.tiles_x;  // 1 in 2D
      const std::int64_t band = rank == 2 ? it.t : it.t / tiles_y;
      REQUIRE(it.bx >= 0);
      REQUIRE(it.bx < t.tiles_x);
      REQUIRE(band >= 0);
      REQUIRE(band < t.bands);
      CHECK(seen.insert({it.slab, it.bx, it.t}).second);  // once
      const bool first = band == 0, last = band == t.bands - 1;
      CHECK((v < edge_items) == (first || last));  // edges first, then only interior bands
      CHECK(it.r == it.bx + t.tiles_x * (rank == 2 ? 0 : it.t % tiles_y));  // its place across the band
      const int sides = (first && me.has_prev ? 1 : 0) | (last && me.has_next ? 2 : 0);
      CHECK(it.sides == sides);
      int flagged = 0;
      for (int side = 0; side < 2; ++side)
        if ((sides & (1 << side)) && t.inbound[side] != nullptr) flagged |= 1 << side;
      CHECK(it.flagged == flagged);
    }
    CHECK(static_cast<std::int64_t>(seen.size()) == items);
  }
}

}  // namespace

TEST_CASE("the CPU-free kernel's items cover every tile once, edges first, with the right sides and flags",
          "[peer_store][decomposition]") {
  const std::vector<Case> cases{
      {Extents(1, 1), 1, 128, 8, 1},       {Extents(5, 3), 3, 128, 8, 1},      {Extents(129, 70), 4, 128, 8, 1},
      {Extents(129, 70), 4, 128, 8, 4},    {Extents(1000, 7), 7, 64, 8, 4},    {Extents(257, 257), 2, 128, 8, 4},
      {Extents(33, 517), 3, 64, 8, 1},     {Extents(9, 5, 4), 4, 128, 8, 1},   {Extents(33, 17, 29), 3, 64, 8, 4},
      {Extents(40, 40, 40), 2, 128, 8, 4}, {Extents(20, 9, 7), 2, 128, 8, 4},  {Extents(300, 3, 11), 5, 128, 8, 4}};
  for (const Case& c : cases) {
    check_numbering(c, [](int) { return 0; });        // one kernel
    check_numbering(c, [](int s) { return s; });      // one kernel per slab
    check_numbering(c, [](int s) { return s / 2; });  // slabs in pairs
  }
}

TEST_CASE("the tiling of a slab and the numbering of a kernel's items", "[peer_store][decomposition]") {
  detail::PeerSlab<float> t{};
  detail::Shape g{};
  g.nx = 300;
  g.ny = 70;
  detail::peer_tile(t, g, 2, 128, 8, 4);  // 2D: bands of 32 rows
  CHECK(t.tiles_x == 3);
  CHECK(t.band_items == 3);
  CHECK(t.bands == 3);
  CHECK(t.edge_items() == 6);
  CHECK(t.items() == 9);
  g.nz = 9;
  detail::peer_tile(t, g, 3, 128, 8, 4);  // 3D: bands of 4 planes, 9 row groups across
  CHECK(t.tiles_x == 3);
  CHECK(t.band_items == 27);
  CHECK(t.bands == 3);
  detail::PeerSlab<float> one{};
  g.nz = 1;
  detail::peer_tile(one, g, 3, 128, 8, 4);  // one band: its items are all edge items
  CHECK(one.edge_items() == one.items());
  std::vector<detail::PeerSlab<float>> slabs{t, one, t};
  const auto [edges, items] = detail::peer_number(slabs.data(), slabs.size());
  CHECK(edges == 2 * 54 + 27);
  CHECK(items == 81 + 27 + 81);
  CHECK(slabs[0].edge_first == 0);
  CHECK(slabs[1].edge_first == 54);
  CHECK(slabs[2].edge_first == 81);
  CHECK(slabs[0].inner_first == edges);
  CHECK(slabs[1].inner_first == edges + 27);
  CHECK(slabs[2].inner_first == edges + 27);
}

TEST_CASE("the kernels of a CPU-free solve: per device, per sub-domain, or runs of a device's sub-domains",
          "[peer_store][decomposition]") {
  using Kernels = std::vector<std::pair<int, std::vector<int>>>;
  CHECK(detail::peer_kernels({0, 0, 0, 0}, false, 1) == Kernels{{0, {0, 1, 2, 3}}});
  CHECK(detail::peer_kernels({0, 0, 0, 0}, true, 1) == Kernels{{0, {0}}, {0, {1}}, {0, {2}}, {0, {3}}});
  CHECK(detail::peer_kernels({0, 0, 0, 0}, false, 2) == Kernels{{0, {0, 1}}, {0, {2, 3}}});
  CHECK(detail::peer_kernels({0, 0, 0, 0, 0}, false, 2) == Kernels{{0, {0, 1, 2}}, {0, {3, 4}}});
  CHECK(detail::peer_kernels({0, 0}, false, 5) == Kernels{{0, {0}}, {0, {1}}});  // at most one a sub-domain
  CHECK(detail::peer_kernels({0, 1, 0, 1}, false, 1) == Kernels{{0, {0, 2}}, {1, {1, 3}}});
  CHECK(detail::peer_kernels({1, 1, 0, 0}, false, 1) == Kernels{{1, {0, 1}}, {0, {2, 3}}});
  CHECK(detail::peer_kernels({0, 0, 1, 1}, false, 2) == Kernels{{0, {0}}, {0, {1}}, {1, {2}}, {1, {3}}});
  CHECK(detail::peer_kernels({3}, false, 1) == Kernels{{3, {0}}});
}

TEST_CASE("one rank per GPU: each rank's run of slabs and kernels, and where a neighbour's memory is",
          "[peer_table][decomposition]") {
  using Kernels = std::vector<std::pair<int, std::vector<int>>>;
  // Three ranks of two slabs each, seen from rank 1 (on its device 5).
  detail::RankLayout l{3, 1, 2, 2};
  CHECK(l.parts() == 6);
  CHECK(l.kernels(5) == Kernels{{-1, {0, 1}}, {5, {2, 3}}, {-1, {4, 5}}});
  CHECK(l.local_kernels() == std::pair<int, int>{1, 1});
  for (int n = 0; n < 6; ++n) {
    CHECK(l.owner_of_slab(n) == n / 2);
    CHECK(l.twin_slab(n) == 2 + n % 2);  // held here at the same place among rank 1's slabs
  }
  CHECK(l.owner_of_kernel(2) == 2);
  CHECK(l.twin_kernel(0) == 1);
  // One kernel per slab: rank 1 runs kernels 2 and 3; kernel 5 is rank 2's second, whose twin
  // here is rank 1's second (kernel 3).
  l.per_kernel = 1;
  CHECK(l.kernels(5) == Kernels{{-1, {0}}, {-1, {1}}, {5, {2}}, {5, {3}}, {-1, {4}}, {-1, {5}}});
  CHECK(l.local_kernels() == std::pair<int, int>{2, 2});
  CHECK(l.owner_of_kernel(5) == 2);
  CHECK(l.twin_kernel(5) == 3);
  CHECK(l.twin_kernel(2) == 2);
  // One rank (one GPU): every slab and kernel is its own twin.
  const detail::RankLayout alone{1, 0, 4, 1};
  for (int n = 0; n < 4; ++n) {
    CHECK(alone.twin_slab(n) == n);
    CHECK(alone.twin_kernel(n) == n);
    CHECK(alone.owner_of_slab(n) == 0);
  }
}

TEST_CASE("an edge row lands in the neighbour's ring row on our side, whatever the slabs' thickness", "[peer_table]") {
  using relax::detail::Shape;
  for (int rank : {2, 3}) {
    const Shape mine{70, rank == 2 ? 5 : 9, rank == 2 ? 1 : 5, 96, 96 * 11, {}};
    const Shape theirs{70, rank == 2 ? 7 : 9, rank == 2 ? 1 : 7, 96, 96 * 11, {}};
    const std::int64_t step = rank == 2 ? mine.pitch : mine.plane;
    const std::int64_t along = rank == 2 ? mine.ny : mine.nz, their_along = rank == 2 ? theirs.ny : theirs.nz;
    for (std::int64_t column : {1, 33, 70}) {
      INFO("rank " << rank << ", column " << column);
      // Side 0: our row 1 becomes the ring row after their last row; side 1: our last row their row 0.
      CHECK(step + column + relax::detail::peer_ring_shift(0, mine, theirs, rank) == (their_along + 1) * step + column);
      CHECK(along * step + column + relax::detail::peer_ring_shift(1, mine, theirs, rank) == column);
    }
  }
}

TEST_CASE("a stalled word names the sub-domain and the sweep", "[peer_table]") {
  const unsigned long long key = 41ull << relax::detail::peer_stall_bits | 3ull;
  CHECK(relax::detail::peer_stall_text(~key, "put") == "sub-domain 3 never put its edge rows of sweep 41");
  relax::detail::PeerSlab<float> t{};
  relax::detail::peer_tile(t, relax::detail::Shape{300, 61, 1, 320, 0, {}}, 2, 128, 8, 4);
  CHECK(relax::detail::peer_band_items(relax::detail::Shape{300, 61, 1, 320, 0, {}}, 2, 128, 8) == t.band_items);
  CHECK(relax::detail::peer_band_items(relax::detail::Shape{150, 19, 13, 160, 160 * 21, {}}, 3, 128, 8) == 2 * 3);
}

namespace {

// The streamed loop's numbering of the slabs of `d` (halo H), all in one kernel or one kernel a
// slab, segments of `segment` rows: every segment of owned rows once, the edge segments first;
// a segment's sides are the bands it touches, brute force; the neighbour's band segments facing
// a slab (the pushes it counts per strip group) are the segments of that neighbour with that side.
void check_stream_numbering(const Extents& e, int parts, int halo, std::int64_t segment, bool per_slab) {
  INFO("box " << e.to_text() << ", " << parts << " slabs, halo " << halo << ", segments of " << segment
              << (per_slab ? ", a kernel a slab" : ", one kernel"));
  const Decomposition d(e, parts, halo);
  std::vector<float> dummy(4);
  std::vector<unsigned long long> flags(4);
  std::vector<detail::PeerSlab<float>> all;
  for (int s = 0; s < d.size(); ++s) {
    detail::PeerSlab<float> t{};
    for (int side = 0; side < 2; ++side)
      if (side == 0 ? d[s].has_prev : d[s].has_next) {
        t.out[side][0] = t.out[side][1] = dummy.data();
        if (per_slab) t.inbound[side] = t.outbound[side] = flags.data();
      }
    detail::peer_stream_tile(t, d[s].has_prev ? halo : 1, d[s].owned.count, halo, segment);
    all.push_back(t);
  }
  // Sides of each segment of a slab, brute force over its rows; the pushes towards each side.
  std::vector<std::vector<int>> sides(all.size());
  std::vector<std::int64_t> pushing[2] = {std::vector<std::int64_t>(all.size()), std::vector<std::int64_t>(all.size())};
  for (std::size_t s = 0; s < all.size(); ++s) {
    const auto& t = all[s];
    REQUIRE(t.segments == (t.owned + segment - 1) / segment);
    for (std::int64_t q = 0; q < t.segments; ++q) {
      int bits = 0;
      for (std::int64_t row = t.first + q * segment; row < std::min(t.first + (q + 1) * segment, t.first + t.owned); ++row) {
        if (t.out[0][0] != nullptr && row < t.first + halo) bits |= 1;
        if (t.out[1][0] != nullptr && row >= t.first + t.owned - halo) bits |= 2;
      }
      sides[s].push_back(bits);
      for (int side = 0; side < 2; ++side) pushing[side][s] += (bits >> side) & 1;
    }
    CHECK(t.band_segments[0] == pushing[0][s]);
    CHECK(t.band_segments[1] == pushing[1][s]);
    for (int side = 0; side < 2; ++side)
      if (t.out[side][0] != nullptr)  // what the neighbour counts, from its own arithmetic
        CHECK(detail::peer_band_segments(t.owned, halo, segment, side) == pushing[side][s]);
  }
  const int kernels = per_slab ? d.size() : 1;
  for (int h = 0; h < kernels; ++h) {
    std::vector<detail::PeerSlab<float>> slabs(per_slab ? all.begin() + h : all.begin(), per_slab ? all.begin() + h + 1 : all.end());
    const auto [edges, segments] = detail::peer_stream_number(slabs.data(), slabs.size());
    const detail::PeerLaunch<float> launch = launch_of(slabs, edges, segments);
    std::set<std::pair<int, std::int64_t>> seen;
    for (std::int64_t v = 0; v < segments; ++v) {
      const detail::PeerSegment it = detail::peer_segment(launch, v);
      REQUIRE(it.slab >= 0);
      REQUIRE(it.slab < launch.count);
      const auto& t = slabs[static_cast<std::size_t>(it.slab)];
      const std::size_t s = static_cast<std::size_t>(per_slab ? h : it.slab);
      REQUIRE((it.y0 - t.first) % segment == 0);
      const std::int64_t q = (it.y0 - t.first) / segment;
      REQUIRE(q >= 0);
      REQUIRE(q < t.segments);
      CHECK(it.y1 == std::min(it.y0 + segment, t.first + t.owned));
      CHECK(seen.insert({it.slab, q}).second);
      CHECK(it.sides == sides[s][static_cast<std::size_t>(q)]);
      CHECK((v < edges) == (it.sides != 0 || detail::peer_edge_segments(t) == t.segments));
      CHECK(it.flagged == (per_slab ? it.sides : 0));
    }
    std::int64_t total = 0;
    for (const auto& t : slabs) total += t.segments;
    CHECK(static_cast<std::int64_t>(seen.size()) == total);
    CHECK(segments == total);
  }
}

}  // namespace

TEST_CASE("the streamed CPU-free kernel's segments cover the owned rows once, bands first, with their sides",
          "[peer_store][decomposition]") {
  for (bool per_slab : {false, true}) {
    check_stream_numbering(Extents(70, 70), 1, 4, 16, per_slab);
    check_stream_numbering(Extents(70, 70), 3, 4, 16, per_slab);
    check_stream_numbering(Extents(70, 16), 4, 4, 16, per_slab);   // as thin as the halo: one segment, both bands
    check_stream_numbering(Extents(70, 23), 3, 4, 3, per_slab);    // bands overlap, segments shorter than the halo
    check_stream_numbering(Extents(70, 1000), 4, 8, 37, per_slab);
    check_stream_numbering(Extents(70, 1000), 4, 8, 250, per_slab);
    check_stream_numbering(Extents(9, 5, 8), 4, 2, 1, per_slab);   // one-plane segments
    check_stream_numbering(Extents(20, 9, 29), 3, 2, 4, per_slab);
  }
}

TEST_CASE("a row moves to the same global row of the neighbour's halo", "[peer_table]") {
  // Slabs of 70 rows, halo 4: the band of slab s + 1 facing slab s (its storage rows 4..7, its
  // first owned rows) lands on the storage rows of slab s that hold the same global rows.
  const Decomposition d(Extents(30, 210), 3, 4);
  const std::int64_t pitch = 32;
  for (int s = 0; s + 1 < d.size(); ++s) {
    const relax::Slab& me = d[s + 1];
    const relax::Slab& them = d[s];
    const std::int64_t shift = detail::peer_halo_shift(me.origin_row, them.origin_row, pitch);
    for (std::int64_t row = 4; row < 8; ++row) {  // slab s + 1's band facing slab s (storage rows)
      const std::int64_t global = me.origin_row + row - 1;
      CHECK(row * pitch + shift == (global - them.origin_row + 1) * pitch);
    }
  }
}

TEST_CASE("the blocks' shares of a pass: every item once, and with roles the edge items to the boundary blocks only",
          "[peer_table][peer_store]") {
  // (edge items, items, grid): no edge items, only edge items, one block, more blocks than items,
  // fewer boundary blocks than edge items, the 16384² Sync walk's counts at two slabs.
  const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> cases{
      {0, 10, 4},  {10, 10, 4},   {3, 10, 1},    {3, 10, 2},     {2, 5, 16},        {1, 1000, 7},
      {7, 8, 3},   {256, 32768, 1056}, {128, 130, 132}, {4, 7, 5}, {64, 4096, 264}, {999, 1000, 1000}};
  for (const auto& [edge, items, grid] : cases) {
    for (const bool specialised : {false, true}) {
      INFO(edge << " edge items of " << items << ", " << grid << " blocks, specialised " << specialised);
      const std::int64_t boundary = specialised ? detail::peer_boundary_blocks(edge, items, grid) : 0;
      if (specialised) CHECK((boundary > 0) == (edge > 0 && edge < items && grid > 1));
      std::vector<int> taken(static_cast<std::size_t>(items), 0);
      std::int64_t most = 0;  // the items of the busiest block
      for (std::int64_t block = 0; block < grid; ++block) {
        const detail::PeerShare share = detail::peer_share(edge, items, block, grid, boundary);
        REQUIRE(share.stride >= 1);
        std::int64_t mine = 0;
        for (std::int64_t v = share.first; v < share.end; v += share.stride) {
          REQUIRE(v >= 0);
          REQUIRE(v < items);
          ++taken[static_cast<std::size_t>(v)];
          ++mine;
          if (boundary > 0) CHECK((v < edge) == (block < boundary));  // a block keeps to its role
        }
        if (!specialised) {
          // Today's walk: block, block + grid, ...
          CHECK(share.first == block);
          CHECK(share.stride == grid);
          CHECK(share.end == items);
        }
        most = std::max(most, mine);
      }
      for (std::int64_t v = 0; v < items; ++v) CHECK(taken[static_cast<std::size_t>(v)] == 1);  // once each
      if (boundary > 0) {
        CHECK(boundary <= edge);
        CHECK(boundary < grid);  // an interior block at least
        // Balanced: no other count of boundary blocks leaves its busiest block fewer items.
        std::int64_t best = items;
        for (std::int64_t b = 1; b <= std::min(edge, grid - 1); ++b)
          best = std::min(best, std::max((edge + b - 1) / b, (items - edge + grid - b - 1) / (grid - b)));
        CHECK(most == best);
      }
    }
  }
  // Any count of boundary blocks from 1 to grid − 1 shares the items out once each, each block
  // keeping to its role.
  for (std::int64_t boundary = 1; boundary < 9; ++boundary) {
    std::vector<int> taken(40, 0);
    for (std::int64_t block = 0; block < 9; ++block) {
      const detail::PeerShare share = detail::peer_share(5, 40, block, 9, boundary);
      for (std::int64_t v = share.first; v < share.end; v += share.stride) {
        ++taken[static_cast<std::size_t>(v)];
        CHECK((v < 5) == (block < boundary));
      }
    }
    for (int t : taken) CHECK(t == 1);
  }
  // The roles need edge and interior items and two blocks; their count is the edge items' share.
  CHECK(detail::peer_boundary_blocks(0, 10, 4) == 0);
  CHECK(detail::peer_boundary_blocks(10, 10, 4) == 0);
  CHECK(detail::peer_boundary_blocks(3, 10, 1) == 0);
  CHECK(detail::peer_boundary_blocks(256, 32768, 1056) == 9);  // 8.25: 29 and 32 items; 8 ties (32 and 32), the larger wins
  CHECK(detail::peer_boundary_blocks(401, 1000, 10) == 4);     // 4.01: 101 and 100 items, not 81 and 120
  CHECK(detail::peer_boundary_blocks(128, 130, 132) == 128);   // one block per edge item
  CHECK(detail::peer_boundary_blocks(999, 1000, 1000) == 999); // at most grid − 1
}
