// Host emulation of the tiled schedules: TemporalBlock is exact (equal to plain sweeps bit for
// bit), BlockAsync<1> is Sync, BlockAsync<D> converges to Sync's solution within the bound.
#include <catch2/catch.hpp>

#include "../support/grids.hpp"

#include <relax/core/batches.hpp>
#include <relax/cpu/diffusion.hpp>
#include <relax/reference/tiled.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

using relax::HostGrid;
namespace ref = relax::reference;

namespace {
// `count` sweeps of random data under `sched`, and under plain Sync, with stencil `s` on box `e`.
template <class S>
void check_against_sync(const S& s, const relax::Extents& e, const ref::TiledSchedule& sched,
                        std::int64_t count, bool expect_equal) {
  HostGrid<float> u(e), b(e);
  relax::testing::fill_random(u, 31 + e.nx, 0.0, 100.0);
  relax::testing::fill_random(b, 37 + e.ny);
  HostGrid<float> tiled = u, tiled_scratch = u, plain = u, plain_scratch = u;
  ref::sweeps(s, tiled, tiled_scratch, b, sched, count, ref::Exec::openmp());
  ref::sweeps(s, plain, plain_scratch, b, ref::SyncSchedule{}, count, ref::Exec::openmp());
  INFO("box " << e.to_text() << ", tile " << sched.tile_x << "x" << sched.tile_y << "x" << sched.tile_z
              << ", D = " << sched.depth << ", exact " << sched.exact << ", differing points "
              << relax::testing::count_differences(tiled, plain));
  CHECK(relax::testing::same_bits(tiled, plain) == expect_equal);
}

void check_against_sync(std::int64_t n, const ref::TiledSchedule& sched, std::int64_t count,
                        bool expect_equal) {
  check_against_sync(relax::Stencil5<float>(10.0), relax::Extents(n, n), sched, count, expect_equal);
}
}  // namespace

TEST_CASE("TemporalBlock emulation is exact on rectangular, degenerate and 3D boxes", "[tiled][reference][3d]") {
  const relax::Stencil5<float> s2(10.0);
  for (auto e : {relax::Extents(1, 1), relax::Extents(1, 57), relax::Extents(57, 1), relax::Extents(70, 100),
                 relax::Extents(100, 70)})
    for (int d : {1, 2, 3, 4}) check_against_sync(s2, e, {32, 8, d, true}, 7, true);
  const relax::Stencil7<float> s3(10.0);
  for (auto e : {relax::Extents(33, 17, 5), relax::Extents(5, 17, 33), relax::Extents(1, 1, 64),
                 relax::Extents(40, 9, 10)})
    for (int d : {1, 2, 3, 4}) {
      check_against_sync(s3, e, {32, 8, d, true, 4}, 7, true);
      check_against_sync(s3, e, {32, 4, d, true, 3}, 5, true);  // partial tiles on every axis
    }
  // BlockAsync<1> is Sync in 3D; deeper stale halos change the iterates where tiles meet.
  check_against_sync(s3, relax::Extents(40, 9, 10), {32, 4, 1, false, 3}, 6, true);
  check_against_sync(s3, relax::Extents(40, 9, 10), {32, 4, 3, false, 3}, 6, false);
}

TEST_CASE("TemporalBlock emulation equals synchronous sweeps bit for bit", "[tiled][reference]") {
  const std::int64_t n = GENERATE(3, 70, 257);
  const int d = GENERATE(1, 2, 3, 4, 8);
  for (auto [tx, ty] : {std::pair{32, 8}, std::pair{32, 16}, std::pair{64, 8}})
    check_against_sync(n, {tx, ty, d, true}, 16, true);  // 16 sweeps: D = 3 leaves a remainder
}

TEST_CASE("BlockAsync<1> emulation is Sync; BlockAsync<D> with D > 1 is not", "[tiled][reference]") {
  const std::int64_t n = GENERATE(70, 257);
  check_against_sync(n, {32, 8, 1, false}, 8, true);
  check_against_sync(n, {32, 8, 4, false}, 8, false);  // stale halos change the iterates
}

TEST_CASE("BlockAsync<D> converges to Sync's solution within the tolerance's bound",
          "[tiled][reference]") {
  relax::DiffusionParams p;
  p.n = 70;
  p.r = 10.0;
  p.steps = 3;
  HostGrid<float> sync_u, async_u;
  const auto sync = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &sync_u);
  const int d = GENERATE(2, 4, 8);
  const auto async = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &async_u, {},
                                               ref::TiledSchedule{32, 8, d, false});
  REQUIRE(sync.converged());
  REQUIRE(async.converged());
  // Both are within rho * ||b|| of the exact solution of the last step (diagonal margin 1).
  const auto& a = async.steps.back();
  const auto& y = sync.steps.back();
  double diff = 0;
  for (std::int64_t i = 1; i <= p.n; ++i)
    for (std::int64_t j = 1; j <= p.n; ++j)
      diff = std::max(diff, std::abs(double(async_u(i, j)) - sync_u(i, j)));
  INFO("D = " << d << ": sweeps " << async.sweeps() << " against " << sync.sweeps() << ", diff " << diff);
  // The steps before the last differ slightly, so their uⁿ (the last step's b) differs too: allow
  // the same bound once more for the propagated difference.
  CHECK(diff <= 2 * (a.rho * a.rhs_norm + y.rho * y.rhs_norm));
  CHECK(async.sweeps() >= sync.sweeps());  // staleness costs sweeps, never saves them here
}

TEST_CASE("tiled schedules reject bad depths", "[tiled][validation]") {
  CHECK_THROWS_AS((ref::TiledSchedule{32, 8, 0, false}.validate()), relax::invalid_argument);
  CHECK_THROWS_AS((ref::TiledSchedule{32, 8, 9, true}.validate()), relax::invalid_argument);
  CHECK_NOTHROW((ref::TiledSchedule{32, 8, 16, false}.validate()));
  STATIC_REQUIRE(relax::is_strategy_v<relax::BlockAsync<4>>);
  STATIC_REQUIRE(relax::is_strategy_v<relax::TemporalBlock<8, relax::Tile<64, 8>>>);
  STATIC_REQUIRE(relax::BlockAsync<relax::dynamic>::depth == relax::dynamic);
  STATIC_REQUIRE(relax::TemporalBlock<4>::exact);
}

TEST_CASE("a batch splits into launches of D and one remainder", "[tiled]") {
  std::vector<int> depths;
  relax::detail::for_each_launch(8, 3, [&](int d) { depths.push_back(d); });
  CHECK(depths == std::vector<int>{3, 3, 2});
  depths.clear();
  relax::detail::for_each_launch(16, 8, [&](int d) { depths.push_back(d); });
  CHECK(depths == std::vector<int>{8, 8});
  depths.clear();
  relax::detail::for_each_launch(5, 8, [&](int d) { depths.push_back(d); });
  CHECK(depths == std::vector<int>{5});
  depths.clear();
  relax::detail::for_each_launch(0, 4, [&](int d) { depths.push_back(d); });
  CHECK(depths.empty());
}
