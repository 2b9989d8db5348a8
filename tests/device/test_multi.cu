// Jacobi on k sub-domains on one GPU (the device named k times), host-controlled with HostCopy:
// sweeps, checks, ρ, status and every owned point bit for bit those of the single-domain solve,
// 2D and 3D, square and rectangular boxes, Sync (an exchange every sweep) and
// TemporalBlock<D, ColumnStream> (a D-row halo every D sweeps); bad devices and a split too thin
// for its halo refused with a message.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "grids.hpp"
#include "runs.hpp"

#include <relax/multi/host_copy.cuh>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <vector>

using relax::DeviceGrid;
using relax::Extents;
using relax::HostGrid;

namespace {

template <class Strategy, class S>
void check_split_equals_whole(const Extents& e, const S& s, int parts, int m = 8, std::int64_t max_sweeps = 400) {
  using T = typename S::value_type;
  INFO("box " << e.to_text() << ", " << parts << " sub-domains, M = " << m);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 11 + e.nx, 0.0, 10.0);
  relax::testing::fill_random(b, 13 + e.ny);
  relax::SolveOptions options;
  options.max_sweeps = max_sweeps;
  options.record_history = true;
  relax::Solver<S, Strategy, relax::Fixed> whole(e, s, relax::Fixed(m), options);
  DeviceGrid<T> du = relax::to_device(u, whole.stream());
  const DeviceGrid<T> db = relax::to_device(b, whole.stream());
  const relax::SolveReport want = whole.solve(du, db);
  const HostGrid<T> want_u = relax::to_host(du, whole.stream());

  relax::MultiSolver<S, Strategy> split(e, std::vector<int>(static_cast<std::size_t>(parts), 0), s, relax::Fixed(m),
                                        options);
  auto su = split.make_grid();
  auto sb = split.make_grid();
  su.scatter(u);
  sb.scatter(b);
  const relax::SolveReport got = split.solve(su, sb);
  HostGrid<T> got_u = u;  // the ring stays the boundary values
  su.gather(got_u);
  relax::testing::check_same_report(got, want);
  CHECK(relax::testing::same_bits(got_u, want_u));
}

}  // namespace

TEST_CASE("k sub-domains on one GPU solve as one, bit for bit (Sync, HostCopy)", "[multi][host_copy]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    for (std::int64_t n : {70, 257})
      check_split_equals_whole<relax::Sync>(Extents(n, n), s, parts);
    check_split_equals_whole<relax::Sync>(Extents(1000, 70), s, parts);
    check_split_equals_whole<relax::Sync>(Extents(33, 517), s, parts, 5, 37);  // the cap, not a multiple of M
    check_split_equals_whole<relax::Sync>(Extents(40, 40, 40), relax::Stencil7<float>(1.0), parts);
    check_split_equals_whole<relax::Sync>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts);
  }
  check_split_equals_whole<relax::Sync>(Extents(1000, 1000), s, 3, 8, 96);
  check_split_equals_whole<relax::Sync>(Extents(70, 4), s, 4);  // one-row sub-domains
}

TEST_CASE("k sub-domains on one GPU solve as one with a D-row halo (TemporalBlock<D, ColumnStream>, HostCopy)",
          "[multi][host_copy]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    check_split_equals_whole<relax::TemporalBlock<4, relax::ColumnStream>>(Extents(257, 257), s, parts);
    check_split_equals_whole<relax::TemporalBlock<8, relax::ColumnStream>>(Extents(1000, 70), s, parts);
    check_split_equals_whole<relax::TemporalBlock<3, relax::ColumnStream>>(Extents(70, 70), s, parts, 8, 37);
    check_split_equals_whole<relax::TemporalBlock<2, relax::ColumnStream>>(Extents(40, 40, 40), relax::Stencil7<float>(1.0),
                                                                          parts);
  }
  check_split_equals_whole<relax::TemporalBlock<8, relax::ColumnStream>>(Extents(1000, 1000), s, 3, 8, 96);
}

TEST_CASE("the host-controlled multi-sub-domain solver refuses bad devices, grids and splits", "[multi][validation]") {
  const relax::Stencil5<float> s(1.0);
  const Extents e(64, 64);
  using Multi = relax::MultiSolver<relax::Stencil5<float>, relax::TemporalBlock<8, relax::ColumnStream>>;
  CHECK_THROWS_WITH(Multi(e, {}, s), Catch::Contains("at least one device"));
  CHECK_THROWS_WITH(Multi(e, {0, relax::device_count()}, s), Catch::Contains("devices"));
  // 64 rows in 9 slabs: 7 rows each, thinner than the 8-row halo of D = 8.
  CHECK_THROWS_WITH(Multi(e, std::vector<int>(9, 0), s), Catch::Contains("thinnest sub-domain"));
  Multi two(e, {0, 0}, s);
  relax::MultiSolver<relax::Stencil5<float>, relax::Sync> three(e, {0, 0, 0}, s);
  auto u = two.make_grid();
  auto b = three.make_grid();  // another split of the same box
  CHECK_THROWS_WITH(two.solve(u, b), Catch::Contains("a grid made by this solver"));
  HostGrid<float> other(Extents(32, 32));
  CHECK_THROWS_WITH(u.scatter(other), Catch::Contains("decomposition's box"));
  relax::SolveOptions overlapped;
  overlapped.checks = relax::CheckMode::overlapped;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), overlapped), Catch::Contains("options.checks"));
}

TEST_CASE("the ten-step problem on k sub-domains of one GPU is the single-domain run, bit for bit",
          "[multi][host_copy][diffusion]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  for (double r : {1.0, 10.0, 100.0}) {
    const relax::DiffusionParams p = relax::testing::diffusion_params(257, r, src, 3);
    HostGrid<float> want_u;
    const auto want = relax::testing::gpu_diffusion<relax::Stencil5<float>, relax::TemporalBlock<4, relax::ColumnStream>>(
        p, want_u, relax::Fixed(8), {}, relax::StepLaunch::per_step);
    for (int parts : {2, 3}) {
      INFO("r = " << r << ", " << parts << " sub-domains");
      relax::MultiSolver<relax::Stencil5<float>, relax::TemporalBlock<4, relax::ColumnStream>> solver(
          p.extents(), std::vector<int>(static_cast<std::size_t>(parts), 0), relax::Stencil5<float>(p.r));
      relax::DistributedDiffusionState<float> state(p, solver.decomposition(), solver.devices());
      const auto got = relax::run_diffusion(solver, state);
      HostGrid<float> got_u = relax::initial_state<float>(p);
      state.u().gather(got_u);
      relax::testing::check_same_run(got, got_u, want, want_u);
    }
  }
}
