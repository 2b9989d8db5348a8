// The streaming agents of `TemporalBlock<D, ColumnStream>` run on the CPU in emulated thread
// blocks (tests/support/block_emulation.hpp), against D synchronous sweeps of the reference, bit
// for bit, on awkward boxes, in float and double, every form of each whatever the tuning switches
// say (the device tests run the forms the launch picks, on the GPU):
// - the 3D plane stream (`agent/plane_stream.cuh`): each tile streamed by one block, down all
//   planes or in pieces as stream-K cuts them, the tiles folded or whole, the steps checked or
//   split, the block's warps taking turns in lockstep and apart (a missing barrier shows in the
//   second); and every block of the heads-and-tails schedule, its pieces one after another as
//   `plane_stream_h_kernel` walks them;
// - the 2D column stream (`agent/column_stream.cuh`): each strip streamed by one warp, down all
//   rows or in segments, b in registers, read again from global memory, or in a shared ring, and
//   the residual of the iterate it reads folded as the streamed device loop folds it.
#include "../support/block_emulation.hpp"  // first: the device built-ins the agent calls

#include <catch2/catch.hpp>

#include "../support/grids.hpp"

#include <relax/agent/column_stream.cuh>
#include <relax/agent/plane_stream.cuh>
#include <relax/cpu/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/plane_schedule.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace {

using relax::Extents;
using relax::HostGrid;
using namespace relax::detail;

using relax::reference::detail::origin;  // a host grid's point (0, 0, 0)

// D reference sweeps of u.
template <class S, class T>
HostGrid<T> reference_sweeps(const S& s, const HostGrid<T>& u, const HostGrid<T>& b, int d) {
  HostGrid<T> a = u, scratch = u;
  relax::reference::sweeps(s, a, scratch, b, relax::reference::SyncSchedule{}, d);
  return a;
}

// The result of pieces of work that each store into the grid, and how often each point was stored:
// each piece runs on a grid of all-ones bits (a NaN no arithmetic here gives), and the points it
// changed are moved into the result. On the GPU the pieces run at once, in no order, so a point
// two pieces store, or one outside the interior, is a race or a wrong write even when the values
// agree; here it is counted.
template <class T>
class StoredPieces {
 public:
  explicit StoredPieces(const HostGrid<T>& u) : result_(u), scratch_(u), stores_(u.storage().size(), 0) {}
  //! Runs `piece(out)` (`out`: the origin of the grid the piece stores into).
  template <class F>
  void run(F&& piece) {
    std::memset(scratch_.storage().data(), 0xff, scratch_.storage().size() * sizeof(T));
    piece(origin(scratch_));
    for (std::size_t at = 0; at < stores_.size(); ++at) {
      if (all_ones(scratch_.storage()[at])) continue;
      result_.storage()[at] = scratch_.storage()[at];
      ++stores_[at];
    }
  }
  const HostGrid<T>& result() const { return result_; }
  //! Points of the interior stored other than once, and stores outside it (ring and padding).
  std::int64_t misstored() const {
    const relax::GridLayout& l = result_.layout();
    std::int64_t wrong = 0, interior_stores = 0, all_stores = 0;
    relax::testing::for_each_point(result_, [&](std::int64_t k, std::int64_t i, std::int64_t j) {
      if (i < 1 || i > l.ny() || j < 1 || j > l.nx() || (l.rank() == 3 && (k < 1 || k > l.nz()))) return;
      const int n = stores_[static_cast<std::size_t>(l.offset(k, i, j))];
      wrong += n != 1;
      interior_stores += n;
    });
    for (int n : stores_) all_stores += n;
    return wrong + (all_stores - interior_stores);
  }

 private:
  static bool all_ones(T v) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    for (unsigned char c : bytes)
      if (c != 0xff) return false;
    return true;
  }
  HostGrid<T> result_, scratch_;
  std::vector<int> stores_;
};

// D steps of every tile of u's box, each tile's planes cut into `pieces` consecutive pieces of
// unequal length, each piece one emulated block (the agent's form given by the template flags).
template <int D, bool Split, bool Folded, class T>
StoredPieces<T> stream_emulated(const relax::Stencil7<T>& s, const HostGrid<T>& u, const HostGrid<T>& b, int pieces,
                                relax::testing::Order order, std::int64_t segment_planes = 0) {
  StoredPieces<T> out(u);  // the ring as u's: the agent stores interior points only
  const Shape g = shape_of(u.layout());
  const PlaneTiling tiling =
      Folded ? plane_stream_tiling<D, T>(g)
             : plane_tiling(g.nx, g.ny, Lane<T>::width, plane_columns_kept<D, T>, plane_rows_kept<D>,
                            plane_ghost_columns<D, T>, D, false);
  std::vector<Lane<T>> shared(plane_stream_shared_bytes<T>(D) / sizeof(Lane<T>));
  for (std::int64_t t = 0; t < tiling.tiles; ++t) {
    const PlaneTile tile = plane_tile(tiling, t);
    for (int p = 0; p < pieces; ++p) {
      // Piece p of `pieces`, the first ones shorter: [1 + nz p² / pieces², 1 + nz (p + 1)² / pieces²).
      // (With `segment_planes`: segments of that many planes, as the launch's segments cut them.)
      const std::int64_t z0 = segment_planes > 0 ? 1 + p * segment_planes : 1 + g.nz * p * p / (pieces * pieces);
      const std::int64_t z1 = segment_planes > 0 ? std::min(z0 + segment_planes, g.nz + 1)
                                                 : 1 + g.nz * (p + 1) * (p + 1) / (pieces * pieces);
      if (z1 <= z0) continue;
      // Shared memory starts as all-ones bits (a NaN), so a read of what no thread wrote shows.
      std::memset(static_cast<void*>(shared.data()), 0xff, shared.size() * sizeof(Lane<T>));
      out.run([&](T* stored) {
        relax::testing::emulate_block(plane_stream_warps, order, [&](int lane, int warp) {
          stream_planes<D, Split, Folded>(s, origin(u), stored, origin(b), g, tile, z0, z1, lane, warp,
                                                shared.data());
        });
      });
    }
  }
  return out;
}

template <int D, bool Split, bool Folded, class T>
void check_box(const Extents& e, int pieces) {
  const relax::Stencil7<T> s(0.7);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 11, 0.0, 100.0);  // ring included: the boundary values
  relax::testing::fill_random(b, 12, -1.0, 1.0);
  const HostGrid<T> want = reference_sweeps(s, u, b, D);
  for (auto order : {relax::testing::Order::lockstep, relax::testing::Order::warps_apart}) {
    INFO("box " << e.nx << " x " << e.ny << " x " << e.nz << ", D " << D << ", " << sizeof(T) * 8 << "-bit, split "
                << Split << ", folded " << Folded << ", pieces " << pieces << ", warps "
                << (order == relax::testing::Order::lockstep ? "in lockstep" : "apart"));
    const StoredPieces<T> got = stream_emulated<D, Split, Folded>(s, u, b, pieces, order);
    INFO("differing points " << relax::testing::count_differences(got.result(), want));
    CHECK(relax::testing::same_bits(got.result(), want));
    CHECK(got.misstored() == 0);
  }
}

template <int D, class T>
void check_launched(const Extents& e, int pieces) {
  check_box<D, true, true, T>(e, pieces);  // the launched kernels' agent: split steps, folded tiles
}

}  // namespace

TEST_CASE("the 3D plane stream's agent, emulated on the CPU, equals D reference sweeps bit for bit",
          "[plane_stream][emulated]") {
  // Partial tiles on every axis; folded tiles of six segments (130 x 200), of 16-lane segments
  // (176 x 60), four segments filling the warp (144 x 100); stacked tiles (370 x 30: D = 2, 3, 4,
  // three, two and two segments; 370 x 40: D = 1, 2; 250 x 49: D = 4, two segments of 3 warps and
  // two warps of none); a plane of one column and of one point; enough planes for the split steps
  // (k − D ≥ 1 and k ≤ nz) at every depth.
  const Extents boxes[] = {Extents(33, 17, 5),  Extents(130, 200, 3), Extents(176, 60, 4), Extents(144, 100, 2),
                           Extents(1, 300, 3),  Extents(5, 17, 23),   Extents(1, 1, 11),   Extents(70, 33, 13),
                           Extents(370, 30, 6), Extents(370, 40, 4),  Extents(250, 49, 5)};
  for (const Extents& e : boxes) {
    check_launched<1, float>(e, 1);
    check_launched<2, float>(e, 2);
    check_launched<3, float>(e, 3);
    check_launched<4, float>(e, 2);
  }
  check_launched<4, double>(Extents(70, 33, 13), 2);
  check_launched<3, double>(Extents(57, 25, 9), 1);
  check_launched<3, double>(Extents(130, 30, 5), 2);  // stacked: two segments of 3 warps
  check_launched<4, double>(Extents(130, 30, 5), 1);  // stacked: two segments of 4 warps
  for (const Extents& e : {Extents(70, 33, 21), Extents(33, 17, 5)}) {
    check_launched<1, double>(e, 1);
    check_launched<2, double>(e, 2);
    check_launched<3, double>(e, 3);
  }
}

namespace {

// D steps of u's box as `plane_stream_h_kernel` runs them on `blocks` blocks: heads and tails
// (`heads_and_tails_shares`, the launch's form), each block's pieces in the order
// `next_heads_piece` gives them, one after another in one emulated block whose shared memory
// starts as all-ones bits and is not reset between its pieces (as on the GPU).
template <int D, class T>
StoredPieces<T> heads_emulated(const relax::Stencil7<T>& s, const HostGrid<T>& u, const HostGrid<T>& b, int blocks,
                               relax::testing::Order order, int* rounds) {
  StoredPieces<T> out(u);
  const Shape g = shape_of(u.layout());
  const PlaneTiling tiling = plane_stream_tiling<D, T>(g);
  const PlaneHeadsTable heads = heads_and_tails_shares(tiling, g.nx, g.ny, g.nz, Lane<T>::width, blocks,
                                                       relax::tuning::plane_stream_piece_overhead * D);
  *rounds = heads.rounds;
  std::vector<Lane<T>> shared(plane_stream_shared_bytes<T>(D) / sizeof(Lane<T>));
  for (int k = 0; k < blocks; ++k) {
    std::memset(static_cast<void*>(shared.data()), 0xff, shared.size() * sizeof(Lane<T>));
    PlaneHeadsCursor cursor;
    PlanePiece piece{};
    while (next_heads_piece(heads, k, blocks, tiling.tiles, g.nz, cursor, piece))
      out.run([&](T* stored) {
        relax::testing::emulate_block(plane_stream_warps, order, [&](int lane, int warp) {
          stream_planes<D>(s, origin(u), stored, origin(b), g, plane_tile(tiling, piece.tile), piece.z0, piece.z1,
                           lane, warp, shared.data());
        });
      });
  }
  return out;
}

template <int D, class T>
void check_heads(const Extents& e, int blocks, bool want_rounds) {
  const relax::Stencil7<T> s(0.7);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 31, 0.0, 100.0);
  relax::testing::fill_random(b, 32, -1.0, 1.0);
  const HostGrid<T> want = reference_sweeps(s, u, b, D);
  int rounds = 0;
  const StoredPieces<T> got = heads_emulated<D>(s, u, b, blocks, relax::testing::Order::warps_apart, &rounds);
  INFO("box " << e.nx << " x " << e.ny << " x " << e.nz << ", D " << D << ", " << sizeof(T) * 8 << "-bit, "
              << blocks << " blocks, " << rounds << " rounds of tails, differing points "
              << relax::testing::count_differences(got.result(), want));
  CHECK(relax::testing::same_bits(got.result(), want));
  CHECK(got.misstored() == 0);
  CHECK((rounds > 0) == want_rounds);
}

}  // namespace

TEST_CASE("heads and tails, emulated: every block's pieces as the kernel walks them equal D reference sweeps",
          "[plane_stream][emulated]") {
  // 250 × 100: 3 columns of tiles (2 whole, the rest folded) by 5 rows at D = 4, 4 rows at D = 3;
  // with 3 tail blocks more than tiles' worth the tails come in rounds, with many, not.
  check_heads<4, float>(Extents(250, 100, 40), 16, true);
  check_heads<4, float>(Extents(250, 100, 40), 30, false);
  check_heads<3, float>(Extents(250, 100, 40), 14, true);
  check_heads<4, double>(Extents(130, 60, 24), 9, true);
}

// The device test's float64 case as it launches it (relax_device_tests, "the 3D stream is exact at
// every depth"): its data, its stencil, and 7 sweeps as launches of 3, 3 and 1, each launch's
// result the next one's input.
void check_launches_float64() {
  const Extents e(70, 33, 21);
  const relax::Stencil7<double> s(3.0);
  HostGrid<double> u(e), b(e);
  relax::testing::fill_random(u, 11 + e.nx + 3 * e.ny, 0.0, 10.0);
  relax::testing::fill_random(b, 13 + e.nz);
  HostGrid<double> want = u, got = u;
  const Shape g = shape_of(u.layout());
  // The launch's segments where 132 blocks are resident (an H100's or H200's SMs, a block each).
  auto launch = [&](auto depth) {
    constexpr int D = decltype(depth)::value;
    const std::int64_t tiles = plane_stream_tiling<D, double>(g).tiles;
    const std::int64_t planes = tile_count(g.nz, plane_segments(tiles, g.nz, D, 132));
    INFO("D " << D << ": " << tiles << " tiles, segments of " << planes << " planes");
    return stream_emulated<D, true, true>(s, got, b, static_cast<int>(tile_count(g.nz, planes)),
                                                relax::testing::Order::warps_apart, planes)
        .result();
  };
  for (int d : {3, 3, 1}) {
    want = reference_sweeps(s, want, b, d);
    got = d == 3 ? launch(std::integral_constant<int, 3>{}) : launch(std::integral_constant<int, 1>{});
    INFO("after a launch of " << d << ": differing points "
                 << relax::testing::count_differences(got, want));
    CHECK(relax::testing::same_bits(got, want));
  }
}

TEST_CASE("the emulated 3D agent in float64, launched as the device test launches it", "[plane_stream][emulated]") {
  check_launches_float64();
}

TEST_CASE("the emulated 3D agent's other forms: checked steps, and the persistent loops' whole tiles",
          "[plane_stream][emulated]") {
  for (const Extents& e : {Extents(33, 17, 13), Extents(130, 50, 11)}) {
    check_box<4, false, true, float>(e, 2);   // every step checked
    check_box<4, false, false, float>(e, 1);  // as `stream_group` / `stream_item` call it
    check_box<2, false, false, double>(e, 3);
    // The loops' form with the split steps (RELAX_TUNING_PLANE_STREAM_SPLIT_LOOPS=1): whole
    // tiles, the warm-up's checked steps skipping the levels nothing needs.
    check_box<4, true, false, float>(e, 3);
    check_box<3, true, false, double>(e, 2);
  }
}

namespace {

// D steps of every strip of u's 2D box (strips of `strip_kept` columns, as the launch cuts them),
// each strip's rows cut into `segments` segments, each segment one emulated warp; with `Fold`, the
// largest |residual| of u the warps fold (the bits of `arith::abs_bits`).
template <int D, RhsIn Rhs, bool Fold, class T>
StoredPieces<T> strips_emulated(const relax::Stencil5<T>& s, const HostGrid<T>& u, const HostGrid<T>& b, int segments,
                            relax::arith::bits_t<T>& residual) {
  StoredPieces<T> out(u);
  const Shape g = shape_of(u.layout());
  std::vector<Lane<T>> ring(rhs_ring_lanes<D>);
  std::vector<relax::arith::bits_t<T>> folded(32, 0);  // each lane's fold
  for (std::int64_t strip = 0; strip * strip_kept<D, T> + 1 <= g.nx; ++strip) {
    const std::int64_t x0 = strip * strip_kept<D, T> + 1 - D;
    for (int k = 0; k < segments; ++k) {
      const std::int64_t y0 = 1 + g.ny * k / segments, y1 = 1 + g.ny * (k + 1) / segments;
      if (y1 <= y0) continue;
      std::memset(static_cast<void*>(ring.data()), 0xff, ring.size() * sizeof(Lane<T>));  // as above
      out.run([&](T* stored) {
        relax::testing::emulate_block(1, relax::testing::Order::lockstep, [&](int lane, int) {
          stream_strip<D, Rhs>(s, origin(u), stored, origin(b), g, x0, y0, y1, lane,
                               Rhs == RhsIn::shared ? ring.data() : nullptr, Fold ? &folded[lane] : nullptr);
        });
      });
    }
  }
  residual = 0;
  for (auto bits : folded) residual = residual > bits ? residual : bits;
  return out;
}

template <int D, RhsIn Rhs, bool Fold, class T>
void check_strips(const Extents& e, int segments) {
  INFO("box " << e.nx << " x " << e.ny << ", D " << D << ", " << sizeof(T) * 8 << "-bit, b "
              << (Rhs == RhsIn::registers ? "in registers" : Rhs == RhsIn::global ? "from global" : "in a shared ring")
              << ", fold " << Fold << ", segments " << segments);
  const relax::Stencil5<T> s(0.7);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 21, 0.0, 100.0);
  relax::testing::fill_random(b, 22, -1.0, 1.0);
  const HostGrid<T> want = reference_sweeps(s, u, b, D);
  relax::arith::bits_t<T> residual = 0;
  const StoredPieces<T> got = strips_emulated<D, Rhs, Fold>(s, u, b, segments, residual);
  INFO("differing points " << relax::testing::count_differences(got.result(), want));
  CHECK(relax::testing::same_bits(got.result(), want));
  CHECK(got.misstored() == 0);
  if (Fold) CHECK(relax::arith::from_bits<T>(residual) == relax::reference::residual_norm(s, u, b));
}

}  // namespace

TEST_CASE("the 2D column stream's agent, emulated on the CPU, equals D reference sweeps bit for bit",
          "[column_stream][emulated]") {
  // Partial strips, one column, one row, a box of one strip's width exactly, rows in segments.
  const Extents boxes[] = {Extents(1, 1), Extents(1, 57), Extents(57, 1), Extents(300, 37), Extents(124, 20),
                           Extents(129, 70)};
  for (const Extents& e : boxes) {
    check_strips<1, RhsIn::registers, false, float>(e, 1);
    check_strips<2, RhsIn::registers, false, float>(e, 3);
    check_strips<4, RhsIn::global, false, float>(e, 2);
    check_strips<8, RhsIn::registers, false, float>(e, 2);
    check_strips<8, RhsIn::shared, false, float>(e, 1);
    check_strips<4, RhsIn::shared, true, float>(e, 3);
    check_strips<4, RhsIn::registers, true, double>(e, 2);
    check_strips<8, RhsIn::global, true, double>(e, 1);
  }
}
