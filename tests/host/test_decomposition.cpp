// The slab decomposition's arithmetic (balanced slabs, halo ranges, local boxes, owners, errors)
// and its host emulation: k slabs swept D times between halo exchanges give the single-domain
// sweeps bit for bit, in 2D and 3D, with a stencil that reads a coefficient field by global
// index (so a wrong local origin shows), and a whole solve on the slabs gives the single-domain
// solve's report and bits.
#include <catch2/catch.hpp>

#include "../support/grids.hpp"
#include "../support/runs.hpp"
#include "../support/variable.hpp"

#include <relax/cpu/jacobi.hpp>
#include <relax/cpu/split.hpp>
#include <relax/domain/decomposition.hpp>
#include <relax/domain/tile.hpp>
#include <relax/reference/tiled.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <cstdlib>
#include <type_traits>
#include <tuple>
#include <vector>

using relax::Decomposition;
using relax::Extents;
using relax::HostGrid;
using relax::RowRange;
namespace ref = relax::reference;

TEST_CASE("slabs are balanced, contiguous and cover the slowest axis", "[decomposition]") {
  for (const Extents& e : {Extents(10, 13), Extents(7, 1000), Extents(5, 6, 29), Extents(64, 64, 64)})
    for (int k : {1, 2, 3, 4})
      for (int h : {1, 2, 3}) {
        if (e.slowest() / k < h && k > 1) continue;
        const Decomposition d(e, k, h);
        INFO("box " << e.to_text() << ", k = " << k << ", H = " << h);
        REQUIRE(d.size() == k);
        std::int64_t next = 0, smallest = e.slowest(), largest = 0;
        for (int s = 0; s < k; ++s) {
          const relax::Slab& slab = d[s];
          CHECK(slab.owned.first == next);
          next += slab.owned.count;
          smallest = std::min(smallest, slab.owned.count);
          largest = std::max(largest, slab.owned.count);
          CHECK(slab.has_prev == (s > 0));
          CHECK(slab.has_next == (s + 1 < k));
          // The local box: owned rows and H - 1 more per neighbour; the other extents unchanged.
          const std::int64_t extra = (slab.has_prev ? h - 1 : 0) + (slab.has_next ? h - 1 : 0);
          CHECK(slab.extents.slowest() == slab.owned.count + extra);
          CHECK(slab.extents.nx == e.nx);
          CHECK(slab.extents.rank == e.rank);
          CHECK(slab.origin_row == slab.owned.first - (slab.has_prev ? h - 1 : 0));
          // Storage row 0 is the ring: the H-th row above the owned ones, or the global boundary.
          CHECK(slab.storage_row(slab.owned.first - (slab.has_prev ? h : 1)) == 0);
          CHECK(d.owner(slab.owned.first) == s);
          CHECK(d.owner(slab.owned.first + slab.owned.count - 1) == s);
          if (s + 1 < k) {
            CHECK(slab.send_to_next() == d[s + 1].receive_from_prev());
            CHECK(d[s + 1].send_to_prev() == slab.receive_from_next());
            CHECK(slab.receive_from_next() == RowRange{slab.owned.first + slab.owned.count, h});
          }
        }
        CHECK(next == e.slowest());
        CHECK(largest - smallest <= 1);
        CHECK(d[0].receive_from_prev().count == 0);
        CHECK(d[k - 1].receive_from_next().count == 0);
      }
}

TEST_CASE("the local layout carries the global index of the slab's first point", "[decomposition]") {
  const Decomposition d2(Extents(20, 10), 3, 2);  // rows 4, 3, 3
  CHECK(d2[1].owned == RowRange{4, 3});
  CHECK(d2[1].layout<float>().origin.y == 3);  // one ghost row above the owned ones
  CHECK(d2[1].layout<float>().origin.x == 0);
  CHECK(d2[1].extents == Extents(20, 5));
  const Decomposition d3(Extents(8, 6, 12), 2, 3);  // planes 6, 6
  CHECK(d3[1].layout<double>().origin.z == 4);
  CHECK(d3[1].extents == Extents(8, 6, 8));
  CHECK(d3[0].extents == Extents(8, 6, 8));
}

TEST_CASE("a split thinner than its halo, and other bad splits, are refused with a clear message",
          "[decomposition][validation]") {
  CHECK_THROWS_WITH(Decomposition(Extents(10, 11), 4, 3),
                    Catch::Contains("parts = 4") && Catch::Contains("thinnest sub-domain (2 rows of 11)") &&
                        Catch::Contains("halo (3 rows)"));
  CHECK_THROWS_WITH(Decomposition(Extents(10, 10, 5), 3, 2), Catch::Contains("1 planes of 5"));
  CHECK_THROWS_WITH(Decomposition(Extents(10, 1), 2, 1), Catch::Contains("parts = 2"));
  CHECK_THROWS_WITH(Decomposition(Extents(10, 10), 0, 1), Catch::Contains("parts = 0"));
  CHECK_THROWS_WITH(Decomposition(Extents(10, 10), 2, 0), Catch::Contains("halo = 0"));
  CHECK_NOTHROW(Decomposition(Extents(10, 1), 1, 5));  // one slab needs no halo rows
  CHECK_THROWS_WITH(Decomposition(Extents(10, 10), 2, 1).owner(10), Catch::Contains("row = 10"));
}

namespace {
// `rounds` rounds of D sweeps on each slab and an exchange, against rounds·D sweeps of the box.
template <class S>
void check_split_equals_whole(const S& s, const Extents& e, int k, int d, int rounds) {
  using T = typename S::value_type;
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 17 + e.nx, 0.0, 10.0);
  relax::testing::fill_random(b, 19 + e.slowest());
  const Decomposition split(e, k, d);
  std::vector<HostGrid<T>> us = ref::scatter(u, split), bs = ref::scatter(b, split);
  for (int round = 0; round < rounds; ++round) {
    for (int p = 0; p < k; ++p) {
      HostGrid<T> scratch = us[static_cast<std::size_t>(p)];
      ref::sweeps(s, us[static_cast<std::size_t>(p)], scratch, bs[static_cast<std::size_t>(p)], ref::SyncSchedule{}, d);
    }
    ref::exchange(us, split);
  }
  HostGrid<T> got = u;
  ref::gather(us, split, got);
  HostGrid<T> scratch = u;
  ref::sweeps(s, u, scratch, b, ref::SyncSchedule{}, static_cast<std::int64_t>(rounds) * d);
  INFO("box " << e.to_text() << ", k = " << k << ", D = H = " << d << ", differing points "
              << relax::testing::count_differences(got, u));
  CHECK(relax::testing::same_bits(got, u));
}
}  // namespace

TEST_CASE("k slabs with D-row halos exchanged every D sweeps equal the whole box bit for bit",
          "[decomposition][reference]") {
  for (int d : {1, 2, 3})
    for (int k : {1, 2, 3, 4}) {
      for (const Extents& e : {Extents(70, 70), Extents(57, 13), Extents(5, 40)})
        if (k == 1 || e.slowest() / k >= d) check_split_equals_whole(relax::Stencil5<float>(10.0), e, k, d, 3);
      for (const Extents& e : {Extents(33, 17, 12), Extents(6, 5, 25)})
        if (k == 1 || e.slowest() / k >= d) check_split_equals_whole(relax::Stencil7<double>(1.0), e, k, d, 2);
    }
  // A coefficient field read by global index: every slab must see its rows' own couplings.
  const Extents e(41, 30);
  const std::vector<float> field = relax::testing::variable_couplings(e.nx, e.ny);
  for (int k : {2, 3}) check_split_equals_whole(relax::testing::VariableDiffusion5{field.data(), e.nx}, e, k, 2, 3);
  const Extents e3(19, 11, 16);
  const std::vector<float> field3 = relax::testing::variable_couplings(e3.nx, e3.ny, e3.nz);
  check_split_equals_whole(relax::testing::VariableDiffusion7{field3.data(), e3.nx, e3.ny}, e3, 4, 2, 2);
}

TEST_CASE("a solve on k slabs equals the single-domain solve: sweeps, checks, rho and bits",
          "[decomposition][reference]") {
  relax::SolveOptions options;
  options.record_history = true;
  auto check = [&](const auto& s, const Extents& e, int k, int h, int m, const relax::SolveOptions& o) {
    using T = typename std::decay_t<decltype(s)>::value_type;
    HostGrid<T> u(e), b(e);
    relax::testing::fill_random(u, 23 + e.nx, 0.0, 10.0);
    relax::testing::fill_random(b, 29 + e.slowest());
    HostGrid<T> whole = u, scratch = u;
    const relax::SolveReport want = ref::solve(s, whole, scratch, b, m, o);
    const relax::SolveReport got = ref::solve_split(s, Decomposition(e, k, h), u, b, m, o);
    INFO("box " << e.to_text() << ", k = " << k << ", H = " << h << ", M = " << m);
    relax::testing::check_same_report(got, want);
    CHECK(relax::testing::same_bits(u, whole));
  };
  for (int k : {1, 2, 3, 4})
    for (int h : {1, 2, 3}) {
      check(relax::Stencil5<float>(10.0), Extents(40, 37), k, h, 8, options);
      check(relax::Stencil7<float>(1.0), Extents(13, 11, 14), k, h, 5, options);  // M not a multiple of H
    }
  relax::SolveOptions capped = options;
  capped.max_sweeps = 21;
  capped.tol = 1e-30;
  check(relax::Stencil5<double>(100.0), Extents(30, 20), 3, 2, 8, capped);
  HostGrid<float> other(Extents(10, 11));
  CHECK_THROWS_WITH(ref::solve_split(relax::Stencil5<float>(1.0), Decomposition(Extents(10, 10), 2, 1), other,
                                     other, 8, options),
                    Catch::Contains("the decomposition's box 10 x 10"));
}

TEST_CASE("tiled schedules on k slabs: exact ones are the whole box's solve, block-asynchronous ones the split solve",
          "[decomposition][reference][tiled]") {
  relax::SolveOptions options;
  options.record_history = true;
  auto setup = [](const Extents& e, HostGrid<float>& u, HostGrid<float>& b) {
    u = HostGrid<float>(e);
    b = HostGrid<float>(e);
    relax::testing::fill_random(u, 31 + e.nx, 0.0, 10.0);
    relax::testing::fill_random(b, 37 + e.slowest());
  };
  const relax::Stencil5<float> s(10.0);
  for (const Extents& e : {Extents(70, 45), Extents(41, 17)})
    for (int depth : {2, 3}) {
      HostGrid<float> u0, b;
      setup(e, u0, b);
      // Exact (TemporalBlock<D, Tile>), halo H = D: the whole box's solve under the schedule.
      const ref::TiledSchedule exact{32, 8, depth, true};
      HostGrid<float> whole = u0, scratch = u0;
      const relax::SolveReport want = ref::solve(s, whole, scratch, b, 8, options, {}, exact);
      for (int k : {1, 2, 3, 4}) {
        INFO("box " << e.to_text() << ", exact D = " << depth << ", k = " << k);
        HostGrid<float> u = u0;
        const relax::SolveReport got = ref::solve_split(s, Decomposition(e, k, depth), u, b, 8, options, {}, exact);
        relax::testing::check_same_report(got, want);
        CHECK(relax::testing::same_bits(u, whole));
      }
      // Block-asynchronous (BlockAsync<D>), halo 1: one slab is the whole box's solve; on
      // several, the tiles are cut at the slabs' edges, so the iterates differ from it, but the
      // solve converges and repeats bit for bit.
      const ref::TiledSchedule async{32, 8, depth, false};
      HostGrid<float> whole_async = u0, scratch_async = u0;
      const relax::SolveReport one = ref::solve(s, whole_async, scratch_async, b, 8, options, {}, async);
      HostGrid<float> u1 = u0;
      const relax::SolveReport got1 = ref::solve_split(s, Decomposition(e, 1, 1), u1, b, 8, options, {}, async);
      relax::testing::check_same_report(got1, one);
      CHECK(relax::testing::same_bits(u1, whole_async));
      for (int k : {2, 3}) {
        INFO("box " << e.to_text() << ", block-asynchronous D = " << depth << ", k = " << k);
        HostGrid<float> u = u0, again = u0;
        const relax::SolveReport got = ref::solve_split(s, Decomposition(e, k, 1), u, b, 8, options, {}, async);
        const relax::SolveReport repeat = ref::solve_split(s, Decomposition(e, k, 1), again, b, 8, options, {}, async);
        CHECK(got.converged());
        relax::testing::check_same_report(repeat, got);
        CHECK(relax::testing::same_bits(u, again));
        CHECK_FALSE(relax::testing::same_bits(u, whole_async));  // the slabs' tiles are not the box's
      }
    }
  HostGrid<float> u(Extents(40, 40)), b(Extents(40, 40));
  CHECK_THROWS_WITH(ref::solve_split(s, Decomposition(Extents(40, 40), 2, 2), u, b, 8, options, {},
                                     ref::TiledSchedule{32, 8, 3, true}),
                    Catch::Contains("at least D rows"));
}

// The on-chip device loop's tiling (`choose_resident_tiles`): the host arithmetic the kernel
// trusts. Every grid point belongs to exactly one tile, the limits hold, and a halo reaches only
// the adjacent tiles.
namespace {
template <int Rank>
void check_tiling(std::int64_t nx, std::int64_t ny, std::int64_t nz, int halo, int max_tiles, std::int64_t max_cells,
                  int pad = 1) {
  const relax::detail::ResidentTiles t =
      relax::detail::choose_resident_tiles<Rank>(nx, ny, nz, halo, max_tiles, max_cells, pad);
  INFO("grid " << nx << " x " << ny << " x " << nz << ", halo " << halo << ", at most " << max_tiles << " tiles of "
               << max_cells << " cells");
  REQUIRE(t.found());
  CHECK(t.halo == halo);
  CHECK(t.count() <= max_tiles);
  const auto r = t.template region<Rank>();
  CHECK(static_cast<std::int64_t>((r.rx + pad - 1) / pad * pad) * r.ry * r.rz <= max_cells);
  // Tiles cover each axis with no empty tile: count = ceil(n / tile), and the last tile is not empty.
  const std::int64_t n[3] = {nx, ny, Rank == 3 ? nz : 1};
  const int tile[3] = {t.tile_x, t.tile_y, t.tile_z}, count[3] = {t.count_x, t.count_y, t.count_z};
  for (int a = 0; a < 3; ++a) {
    CHECK(static_cast<std::int64_t>(count[a]) * tile[a] >= n[a]);
    CHECK(static_cast<std::int64_t>(count[a] - 1) * tile[a] < n[a]);
    if (count[a] > 1) CHECK(tile[a] >= halo);
  }
}
}  // namespace

TEST_CASE("the on-chip tiling covers the grid within its limits", "[decomposition][on_chip]") {
  for (std::int64_t n : {1, 2, 3, 70, 256, 257, 1000})
    for (int halo : {1, 4, 8}) {
      check_tiling<2>(n, n, 1, halo, 132, 16384);
      check_tiling<2>(n, n, 1, halo, 132, 16384, 4);
    }
  check_tiling<2>(1000, 70, 1, 4, 132, 16384, 4);
  check_tiling<2>(33, 517, 1, 8, 132, 16384, 2);
  check_tiling<2>(1, 4000, 1, 3, 132, 16384, 4);
  check_tiling<3>(33, 17, 9, 4, 132, 16384, 4);
  check_tiling<3>(64, 64, 64, 2, 132, 16384, 4);
  check_tiling<3>(1, 1, 64, 4, 132, 16384, 2);
}

TEST_CASE("the on-chip tiling takes the smallest regions, then the fewest tiles", "[decomposition][on_chip]") {
  using relax::detail::choose_resident_tiles;
  for (std::int64_t n : {70, 256, 1000})
    for (int halo : {1, 4, 8}) {
      const auto t = choose_resident_tiles<2>(n, n, 1, halo, 132, 16384, 4);
      const auto r = t.region<2>();
      const std::int64_t cells = (r.rx + 3) / 4 * 4 * r.ry;
      INFO("N = " << n << ", halo " << halo);
      // Every tiling of at most 132 tiles has at least as many cells per region, and those with
      // as many have at least as many tiles.
      for (std::int64_t cx = 1; cx <= 132; ++cx)
        for (std::int64_t cy = 1; cx * cy <= 132; ++cy) {
          const std::int64_t tx = (n + cx - 1) / cx, ty = (n + cy - 1) / cy;
          const std::int64_t kx = (n + tx - 1) / tx, ky = (n + ty - 1) / ty;
          if ((kx > 1 && tx < halo) || (ky > 1 && ty < halo)) continue;
          const std::int64_t c = (tx + 2 * halo + 3) / 4 * 4 * (ty + 2 * halo);
          CHECK(c >= cells);
          if (c == cells) CHECK(kx * ky >= t.count());
        }
    }
}

TEST_CASE("on an H200's limits the on-chip loop holds about 1400^2 float points at D = 4", "[decomposition][on_chip]") {
  // What the README says: 132 SMs, 227 KiB of shared memory a block less the kernel's 96 static
  // bytes (ptxas, 512 threads), 13 bytes a cell (three float arrays and a class byte), rows
  // padded to 4 cells.
  using relax::detail::choose_resident_tiles;
  const std::int64_t cells = (227 * 1024 - 96) / 13;
  CHECK(choose_resident_tiles<2>(1400, 1400, 1, 4, 132, cells, 4).found());
  CHECK_FALSE(choose_resident_tiles<2>(1500, 1500, 1, 4, 132, cells, 4).found());
  CHECK(choose_resident_tiles<2>(1024, 1024, 1, 8, 132, cells, 4).found());
}

TEST_CASE("the register-resident tiling keeps every region within the frame", "[decomposition][on_chip][in_registers]") {
  // The frame of `RegisterTile<512, 6, float>`: 128 x 96 cells (tuning.hpp, README).
  using relax::detail::choose_resident_tiles;
  const auto frame = [](std::int64_t n, std::int64_t m, int halo) {
    return choose_resident_tiles<2>(n, m, 1, halo, 132, 128 * 96, 1, 128, 96);
  };
  for (std::int64_t n : {1, 2, 3, 70, 257, 1000, 1024})
    for (int halo : {1, 4, 8}) {
      const auto t = frame(n, n, halo);
      INFO("N = " << n << ", halo " << halo);
      REQUIRE(t.found());
      CHECK(t.tile_x + 2 * halo <= 128);
      CHECK(t.tile_y + 2 * halo <= 96);
      check_tiling<2>(n, n, 1, halo, 132, 128 * 96);
    }
  // 1024^2 at D = 8: the largest tiles the frame takes are 112 x 80, so at least 10 x 13 = 130 tiles.
  const auto t = frame(1024, 1024, 8);
  CHECK(t.count() == 130);
  CHECK(t.tile_x == 103);
  CHECK(t.tile_y == 79);
  // Wider than 112 x 80 tiles on 132 SMs cannot hold 1100^2 (10 x 14 tiles) nor 1000 x 1100.
  CHECK_FALSE(frame(1100, 1100, 8).found());
  // The largest square the frame holds at D = 8 on 132 SMs (the README's "about 1040²").
  CHECK(frame(1040, 1040, 8).found());
  CHECK_FALSE(frame(1041, 1041, 8).found());
  CHECK(frame(1232, 80 * 12, 8).found());  // 11 x 12 tiles of exactly 112 x 80
  CHECK_FALSE(frame(1233, 80 * 12, 8).found());
  // Rectangular and one-cell-high grids.
  for (const auto& [n, m, halo] : {std::tuple{1000, 70, 4}, std::tuple{33, 517, 8}, std::tuple{4000, 1, 3}}) {
    const auto r = frame(n, m, halo);
    INFO(n << " x " << m << ", halo " << halo);
    REQUIRE(r.found());
    CHECK(r.tile_x + 2 * halo <= 128);
    CHECK(r.tile_y + 2 * halo <= 96);
  }
}

// What the on-chip kernel relies on: every interior cell of a tile's halo belongs to an adjacent
// tile, and lies in that tile's frame (its distance to the owner's region faces is in
// [halo, 2 halo)), so the frames the neighbours store cover every halo a tile reloads.
template <int Rank>
void check_halos_in_frames(std::int64_t nx, std::int64_t ny, std::int64_t nz, int halo, int max_tiles) {
  using namespace relax::detail;
  const ResidentTiles t = choose_resident_tiles<Rank>(nx, ny, nz, halo, max_tiles, 1 << 20, 4);
  INFO("grid " << nx << " x " << ny << " x " << nz << ", halo " << halo << ", tiles " << t.count_x << " x "
               << t.count_y << " x " << t.count_z << " of " << t.tile_x << " x " << t.tile_y << " x " << t.tile_z);
  REQUIRE(t.found());
  Shape g;
  g.nx = nx;
  g.ny = ny;
  g.nz = Rank == 3 ? nz : 1;
  const TileRegion r = t.region<Rank>();
  std::int64_t checked = 0;
  bool all_in_frames = true;
  for (int tz = 0; tz < t.count_z; ++tz)
    for (int ty = 0; ty < t.count_y; ++ty)
      for (int tx = 0; tx < t.count_x; ++tx) {
        const TileOrigin o = tile_origin<Rank>(tz, ty, tx, t.tile_x, t.tile_y, t.tile_z, halo);
        for (int ck = 0; ck < r.rz; ++ck)
          for (int ci = 0; ci < r.ry; ++ci)
            for (int cj = 0; cj < r.rx; ++cj) {
              const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
              if (distance_to_edge<Rank>(r, ck, ci, cj) >= halo || !in_interior<Rank>(g, k, i, j)) continue;
              // The owner of grid point (k, i, j) and the cell's place in the owner's region.
              const std::int64_t ox = (j - 1) / t.tile_x, oy = (i - 1) / t.tile_y, oz = Rank == 3 ? (k - 1) / t.tile_z : 0;
              const TileOrigin w = tile_origin<Rank>(oz, oy, ox, t.tile_x, t.tile_y, t.tile_z, halo);
              const int d = distance_to_edge<Rank>(r, static_cast<int>(k - w.k0), static_cast<int>(i - w.i0),
                                                   static_cast<int>(j - w.j0));
              const bool adjacent = std::abs(ox - tx) <= 1 && std::abs(oy - ty) <= 1 && std::abs(oz - tz) <= 1 &&
                                    !(ox == tx && oy == ty && oz == tz);
              all_in_frames = all_in_frames && adjacent && d >= halo && d < 2 * halo;
              ++checked;
            }
      }
  CHECK(all_in_frames);
  CHECK(checked > 0);
}

TEST_CASE("every halo cell of an on-chip tile is in an adjacent tile's frame", "[decomposition][on_chip]") {
  // 13 points with a 4-cell halo and at most 4 tiles a side: tiles of 4, 4, 4 and a last one of 1.
  check_halos_in_frames<2>(13, 13, 1, 4, 16);
  check_halos_in_frames<2>(13, 5, 1, 4, 16);
  for (int halo : {1, 2, 4, 8}) {
    check_halos_in_frames<2>(70, 70, 1, halo, 132);
    check_halos_in_frames<2>(257, 33, 1, halo, 132);
  }
  check_halos_in_frames<3>(13, 13, 13, 4, 64);
  check_halos_in_frames<3>(33, 17, 9, 2, 132);
  check_halos_in_frames<3>(40, 40, 40, 4, 132);
}

TEST_CASE("a grid too large for the chip has no on-chip tiling", "[decomposition][on_chip]") {
  using relax::detail::choose_resident_tiles;
  CHECK_FALSE(choose_resident_tiles<2>(4099, 4099, 1, 4, 132, 16384).found());
  CHECK_FALSE(choose_resident_tiles<3>(256, 256, 256, 2, 132, 16384).found());
  // Too many tiles needed: 2 tiles of at most 30 cells cannot hold 30 × 1 points with a 1-cell halo.
  CHECK_FALSE(choose_resident_tiles<2>(30, 1, 1, 1, 2, 30).found());
}
