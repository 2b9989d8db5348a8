// BlockAsync<D> and TemporalBlock<D> on the GPU: each launch against the host emulation of its
// schedule, bit for bit; TemporalBlock<D> against Sync on the ten-step problem (same sweeps, same
// bits); BlockAsync<1> against Sync; BlockAsync<D> runs against their host emulation.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "runs.hpp"

#include <relax/control/feedback.hpp>
#include <relax/control/ladder.hpp>
#include <relax/cpu/diffusion.hpp>
#include <relax/reference/tiled.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/auto.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#include <algorithm>
#include <cmath>

using relax::DeviceGrid;
using relax::HostGrid;
namespace ref = relax::reference;

namespace {

template <class Strategy>
void check_launches_match(std::int64_t n, int depth, std::int64_t count) {
  using Tile = typename Strategy::tile;
  const relax::Stencil5<float> s(10.0);
  HostGrid<float> u(n), b(n);
  relax::testing::fill_random(u, 41 + n, 0.0, 100.0);
  relax::testing::fill_random(b, 43 + n);
  relax::Stream stream;
  DeviceGrid<float> du = relax::to_device(u, stream), scratch = relax::to_device(u, stream);
  const DeviceGrid<float> db = relax::to_device(b, stream);
  relax::Sweeper<Strategy>::run(s, du, scratch, db, {count, depth}, stream);
  const HostGrid<float> got = relax::to_host(du, stream);
  HostGrid<float> host_scratch = u;
  ref::sweeps(s, u, host_scratch, b, ref::TiledSchedule{Tile::x, Tile::y, depth, Strategy::exact},
              count, ref::Exec::openmp());
  INFO("n = " << n << ", tile " << Tile::x << "x" << Tile::y << ", D = " << depth << ", exact "
              << Strategy::exact << ", differing points " << relax::testing::count_differences(got, u));
  CHECK(relax::testing::same_bits(got, u));
}

template <class Tile>
void check_both(std::int64_t n, int depth) {
  check_launches_match<relax::BlockAsync<relax::dynamic, Tile>>(n, depth, 2 * depth + 1);
  check_launches_match<relax::TemporalBlock<relax::dynamic, Tile>>(n, depth, 2 * depth + 1);
}

using relax::testing::check_same_run;
using relax::testing::diffusion_params;

template <class Strategy, class Controller = relax::Fixed>
relax::RunReport gpu_run(const relax::DiffusionParams& p, HostGrid<float>& u,
                         Controller controller = relax::Fixed(8)) {
  return relax::testing::gpu_diffusion<relax::Stencil5<float>, Strategy>(p, u, controller);
}

template <int D>
void check_temporal_equals_sync(const relax::DiffusionParams& p, const relax::RunReport& sync,
                                const HostGrid<float>& sync_u) {
  HostGrid<float> u;
  {
    INFO("TemporalBlock<" << D << ">");
    const auto run = gpu_run<relax::TemporalBlock<D>>(p, u);
    check_same_run(run, u, sync, sync_u);
  }
  {
    INFO("TemporalBlock<" << D << ", ColumnStream>");
    const auto run = gpu_run<relax::TemporalBlock<D, relax::ColumnStream>>(p, u);
    check_same_run(run, u, sync, sync_u);
  }
}

// `count` sweeps of random data with TemporalBlock<D, ColumnStream> and with Sync.
template <int D, class T>
void check_stream_equals_sync(std::int64_t n, std::int64_t count) {
  const relax::Stencil5<T> s(10.0);
  HostGrid<T> u(n), b(n);
  relax::testing::fill_random(u, 51 + n, 0.0, 100.0);
  relax::testing::fill_random(b, 53 + n);
  relax::Stream stream;
  DeviceGrid<T> a = relax::to_device(u, stream), a_scratch = relax::to_device(u, stream);
  DeviceGrid<T> c = relax::to_device(u, stream), c_scratch = relax::to_device(u, stream);
  const DeviceGrid<T> db = relax::to_device(b, stream);
  relax::Sweeper<relax::TemporalBlock<D, relax::ColumnStream>>::run(s, a, a_scratch, db, {count}, stream);
  relax::Sweeper<relax::Sync>::run(s, c, c_scratch, db, {count}, stream);
  const HostGrid<T> got = relax::to_host(a, stream), want = relax::to_host(c, stream);
  INFO("n = " << n << ", D = " << D << ", " << sizeof(T) * 8 << "-bit, differing points "
              << relax::testing::count_differences(got, want));
  CHECK(relax::testing::same_bits(got, want));
}

}  // namespace

TEST_CASE("TiledMatchesReference: launches equal the host emulation", "[tiled][sanitize]") {
  const std::int64_t n = GENERATE(3, 70, 257);
  const int depth = GENERATE(1, 2, 3, 8);
  check_both<relax::Tile<32, 8>>(n, depth);
  check_both<relax::Tile<32, 16>>(n, depth);
  check_both<relax::Tile<64, 8>>(n, depth);
}

TEST_CASE("TemporalBlock<D, ColumnStream> sweeps equal Sync's bit for bit", "[tiled][sanitize]") {
  const std::int64_t n = GENERATE(3, 70, 257);
  check_stream_equals_sync<1, float>(n, 3);
  check_stream_equals_sync<2, float>(n, 5);
  check_stream_equals_sync<3, float>(n, 7);
  check_stream_equals_sync<4, float>(n, 9);
  check_stream_equals_sync<8, float>(n, 17);
  check_stream_equals_sync<4, double>(n, 9);
}

TEST_CASE("TemporalBlock<D, ColumnStream> on larger grids", "[tiled]") {
  const std::int64_t n = GENERATE(1000, 4099);
  check_stream_equals_sync<8, float>(n, 16);
  check_stream_equals_sync<8, double>(n, 8);
}

TEST_CASE("TiledMatchesReference: larger grid", "[tiled]") {
  check_both<relax::Tile<32, 8>>(1000, 4);
}

TEST_CASE("TemporalBlock<D> is bit-identical to Sync on the ten-step problem", "[tiled][diffusion]") {
  const std::int64_t n = GENERATE(70, 257, 1000);
  const double r = GENERATE(1.0, 10.0, 100.0);
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  const auto p = diffusion_params(n, r, src);
  INFO("N = " << n << ", r = " << r << ", source " << relax::to_string(src));
  HostGrid<float> sync_u;
  const auto sync = gpu_run<relax::Sync>(p, sync_u);
  REQUIRE(sync.converged());
  check_temporal_equals_sync<1>(p, sync, sync_u);
  check_temporal_equals_sync<2>(p, sync, sync_u);
  check_temporal_equals_sync<3>(p, sync, sync_u);
  check_temporal_equals_sync<4>(p, sync, sync_u);
  check_temporal_equals_sync<8>(p, sync, sync_u);
}

TEST_CASE("BlockAsync<1> is Sync; BlockAsync<D> runs equal their host emulation",
          "[tiled][diffusion]") {
  const std::int64_t n = GENERATE(70, 257);
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  const auto p = diffusion_params(n, 10.0, src);
  HostGrid<float> sync_u, one_u, four_u, want_u;
  const auto sync = gpu_run<relax::Sync>(p, sync_u);
  check_same_run(gpu_run<relax::BlockAsync<1>>(p, one_u), one_u, sync, sync_u);
  const auto four = gpu_run<relax::BlockAsync<4>>(p, four_u);
  const auto want = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &want_u, {},
                                              ref::TiledSchedule{32, 8, 4, false});
  CHECK(four.converged());
  check_same_run(four, four_u, want, want_u);
}

TEST_CASE("tiled strategies reject depths the tile cannot hold", "[tiled][validation]") {
  const relax::Stencil5<float> s(1.0);
  relax::Stream stream;
  DeviceGrid<float> u(40, stream), scratch(40, stream), b(40, stream);
  using Tag = relax::TemporalBlock<relax::dynamic>;
  using Temporal = relax::Sweeper<Tag>;
  const int too_deep = std::min(Tag::tile::x, Tag::tile::y) + 1;  // a halo wider than the tile
  CHECK_THROWS_AS(Temporal::run(s, u, scratch, b, {too_deep, too_deep}, stream),
                  relax::invalid_argument);
  CHECK_THROWS_AS(Temporal::run(s, u, scratch, b, {4, 0}, stream), relax::invalid_argument);
}

TEST_CASE("Ladder with BlockAsync<dynamic> equals its host emulation; with TemporalBlock, Sync",
          "[tiled][control]") {
  const std::int64_t n = GENERATE(70, 257);
  const auto dir = GENERATE(relax::Ladder::Direction::ascending, relax::Ladder::Direction::descending);
  const auto p = diffusion_params(n, 10.0, relax::Source::gaussian, 4);
  const relax::Ladder ladder(dir);
  HostGrid<float> gpu_u, host_u, sync_u, exact_u;
  const auto gpu = gpu_run<relax::BlockAsync<relax::dynamic>>(p, gpu_u, ladder);
  const auto host = ref::run_diffusion<float>(p, ladder, {}, ref::Exec::openmp(), &host_u, {},
                                              ref::TiledSchedule{32, 8, 1, false});
  check_same_run(gpu, gpu_u, host, host_u);
  // Exact temporal blocking gives Sync's iterates whatever depths the ladder picks.
  const auto sync = gpu_run<relax::Sync>(p, sync_u);
  const auto exact = gpu_run<relax::TemporalBlock<relax::dynamic, relax::ColumnStream>>(p, exact_u, ladder);
  check_same_run(exact, exact_u, sync, sync_u);
}

TEST_CASE("Feedback with BlockAsync<dynamic> solves the ten-step problem", "[tiled][control]") {
  const std::int64_t n = GENERATE(70, 512);
  const auto p = diffusion_params(n, 10.0, relax::Source::point);
  HostGrid<float> u;
  const auto run = gpu_run<relax::BlockAsync<relax::dynamic>>(p, u, relax::Feedback{});
  CHECK(run.converged());
  for (const auto& s : run.steps) CHECK(s.rho < 1e-5);
}

TEST_CASE("Auto runs a solve as the on-chip loop where it fits, and streamed or launch-based beyond", "[tiled][auto]") {
  relax::Solver<relax::Stencil5<float>, relax::Auto, relax::Fixed> small(relax::Extents(300, 200), relax::Stencil5<float>(10.0));
  CHECK(small.runs_on_chip());
  CHECK(small.steps_fused());
  relax::Solver<relax::Stencil5<float>, relax::Auto, relax::Fixed> large(relax::Extents(4099, 4099), relax::Stencil5<float>(10.0));
  CHECK_FALSE(large.runs_on_chip());
  CHECK_FALSE(large.steps_fused());
  // 4099² float is 3.2 L2s of working set on an H200: the tree's streamed loop at D = 4, one launch
  // a solve (not a run of steps).
  if (relax::current_sm_count() == 132) CHECK(large.device_loop() == relax::AutoLoop::streamed4);
  relax::DeviceGrid<float> u(relax::Extents(4099, 4099)), f(relax::Extents(4099, 4099));
  CHECK_THROWS_WITH(large.solve_steps(u, f, 2, large.stream()), Catch::Contains("steps_fused"));
  relax::Solver<relax::Stencil7<float>, relax::Auto, relax::Fixed> cube(relax::Extents(40, 40, 40), relax::Stencil7<float>(10.0));
  CHECK_FALSE(cube.runs_on_chip());  // 3D: Sync
  CHECK(cube.device_loop() == relax::AutoLoop::none);
  // On chip, the tiles go in registers from 1024 points an SM where the register frame holds the
  // grid (tuning::auto_registers_points_per_sm), in shared memory below and beyond the frame.
  using S5 = relax::Stencil5<float>;
  CHECK_FALSE(relax::auto_in_registers<S5>(relax::Extents(300, 200)));
  CHECK_FALSE(relax::auto_in_registers<relax::Stencil7<float>>(relax::Extents(40, 40, 40)));
  if (relax::current_sm_count() == 132) {  // an H200
    CHECK_FALSE(relax::auto_in_registers<S5>(relax::Extents(256, 256)));
    CHECK(relax::auto_in_registers<S5>(relax::Extents(512, 512)));
    CHECK(relax::auto_in_registers<S5>(relax::Extents(1000, 1000)));
    CHECK_FALSE(relax::auto_in_registers<S5>(relax::Extents(1200, 1200)));  // beyond the frame: shared memory
    CHECK(relax::Solver<S5, relax::Auto, relax::Fixed>(relax::Extents(1200, 1200), S5(10.0)).runs_on_chip());
  }
}

TEST_CASE("Auto runs the strategy it picks for the grid and the device", "[tiled][auto]") {
  const std::int64_t n = GENERATE(70, 512, 1000, 1200, 1501);
  const double r = GENERATE(1.0, 100.0);
  const auto p = diffusion_params(n, r, relax::Source::gaussian, 3);
  const relax::Stencil5<float> s(r);
  const relax::FamilyChoice c = relax::auto_select(n, r, sizeof(float), relax::current_l2_bytes());
  const bool on_chip = relax::auto_runs_on_chip<relax::Stencil5<float>>(p.extents());
  const relax::AutoLoop loop = relax::auto_device_loop(s, p.extents());
  INFO("N = " << n << ", r = " << r << ": " << (on_chip ? "on chip" : relax::to_string(c)));
  CHECK(on_chip == (loop == relax::AutoLoop::on_chip));
  CHECK(relax::Solver<relax::Stencil5<float>, relax::Auto>(p.extents(), s).device_loop() == loop);
  if (relax::current_sm_count() >= 132) {  // on an H200 (132 SMs) the first four fit on chip
    CHECK(on_chip == (n <= 1200));
    // Beyond the chip the tree trained on the H200 runs the streamed loop (D = 4 in 8 L2s).
    if (!on_chip) CHECK(loop == (c.device_loop ? (c.depth == 4 ? relax::AutoLoop::streamed4 : relax::AutoLoop::streamed8)
                                                : relax::AutoLoop::none));
    if (n == 1501) CHECK(loop == relax::AutoLoop::streamed4);  // 0.43 L2s of working set
  }
  HostGrid<float> auto_u, want_u;
  const auto got = gpu_run<relax::Auto>(p, auto_u);
  if (c.family == relax::Family::blockasync && !on_chip) {
    const auto want = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &want_u, {},
                                                ref::TiledSchedule{32, 8, c.depth, false});
    check_same_run(got, auto_u, want, want_u);
  } else {  // Sync, TemporalBlock<D, ColumnStream> and the device loops have Sync's iterates
    const auto want = gpu_run<relax::Sync>(p, want_u);
    check_same_run(got, auto_u, want, want_u);
  }
}

TEST_CASE("Auto beyond eight L2s runs the streamed loop at D = 8, and the launched stream at r = 1", "[tiled][auto]") {
  // The tree's third leaf (auto_tree.hpp): a working set above 8 L2s (12 bytes a point) runs
  // TemporalBlock<8, ColumnStream>, as the device loop where r > 5.5. The smallest square past
  // that bound on this device, plus a partial strip group and tile: odd and not a multiple of 8.
  const auto l2 = relax::current_l2_bytes();
  const auto beyond = static_cast<std::int64_t>(std::ceil(std::sqrt(8.0 * static_cast<double>(l2) / 12.0)));
  const std::int64_t n = beyond + 13 + beyond % 2;
  const double r = GENERATE(1.0, 10.0);
  const auto p = diffusion_params(n, r, relax::Source::point, 2);
  const relax::Stencil5<float> s(r);
  const relax::FamilyChoice c = relax::auto_select(n, r, sizeof(float), l2);
  INFO("N = " << n << ", r = " << r << ": " << relax::to_string(c));
  CHECK(c.family == relax::Family::temporal);
  CHECK(c.depth == 8);
  CHECK(c.device_loop == (r > 5.5));
  const relax::AutoLoop loop = relax::auto_device_loop(s, p.extents());
  const bool cooperative = relax::detail::cached_device_attribute<cudaDevAttrCooperativeLaunch>() != 0;
  CHECK(loop == (c.device_loop && cooperative ? relax::AutoLoop::streamed8 : relax::AutoLoop::none));
  CHECK(relax::Solver<relax::Stencil5<float>, relax::Auto>(p.extents(), s).device_loop() == loop);
  CHECK(relax::auto_strategy_name(s, p.extents()) ==
        (loop == relax::AutoLoop::streamed8 ? "DeviceLoop<TemporalBlock<8, ColumnStream>>"
                                            : "TemporalBlock<8, ColumnStream>"));
  HostGrid<float> auto_u, want_u;
  const auto got = gpu_run<relax::Auto>(p, auto_u);
  const auto want = gpu_run<relax::Sync>(p, want_u);
  check_same_run(got, auto_u, want, want_u);
}
