// The synchronous sweep and the residual norms on the GPU against the reference backend: the same
// bits on awkward sizes (partial tiles, a 3 x 3 grid, non-multiples of every block shape).
#include <catch2/catch.hpp>

#include "grids.hpp"

#include <relax/cpu/jacobi.hpp>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/strategy/residual.cuh>
#include <relax/strategy/sync.cuh>

#include <limits>

using relax::DeviceGrid;
using relax::HostGrid;
namespace ref = relax::reference;

namespace {

// `sweeps` sweeps of random data with strategy `Strategy` on the GPU and with the reference.
template <class Strategy, class T>
void check_sweeps_match(std::int64_t n, double r, std::int64_t sweeps) {
  const relax::Stencil5<T> s(r);
  HostGrid<T> u(n), b(n);
  relax::testing::fill_random(u, 1000 + n);
  relax::testing::fill_random(b, 2000 + n);
  relax::Stream stream;
  DeviceGrid<T> du = relax::to_device(u, stream), db = relax::to_device(b, stream);
  DeviceGrid<T> scratch = relax::to_device(u, stream);
  relax::Sweeper<Strategy>::run(s, du, scratch, db, {sweeps}, stream);
  const HostGrid<T> got = relax::to_host(du, stream);

  HostGrid<T> out = u;
  for (std::int64_t k = 0; k < sweeps; ++k) {
    ref::sweep(s, u, out, b, ref::Exec::openmp());
    std::swap(u, out);
  }
  INFO("n = " << n << ", sweeps = " << sweeps << ", differing points: "
              << relax::testing::count_differences(got, u));
  CHECK(relax::testing::same_bits(got, u));
}

}  // namespace

TEST_CASE("SyncMatchesReference: sweeps are bit-identical", "[sync][sanitize]") {
  const std::int64_t n = GENERATE(3, 33, 70, 257);
  check_sweeps_match<relax::Sync, float>(n, 10.0, 3);
  check_sweeps_match<relax::SyncTile<32, 8, 2>, float>(n, 10.0, 2);
  check_sweeps_match<relax::SyncTile<32, 8, 4>, float>(n, 100.0, 1);
  check_sweeps_match<relax::SyncTile<64, 4, 1>, float>(n, 1.0, 3);
  check_sweeps_match<relax::Sync, double>(n, 10.0, 3);
}

TEST_CASE("SyncMatchesReference: sweeps are bit-identical on larger grids", "[sync]") {
  const std::int64_t n = GENERATE(512, 1000);
  check_sweeps_match<relax::Sync, float>(n, 10.0, 5);
  check_sweeps_match<relax::SyncTile<32, 8, 4>, float>(n, 10.0, 4);
}

TEST_CASE("ResidualMatchesReference: residual and rhs norms are bit-identical",
          "[residual][sanitize]") {
  const std::int64_t n = GENERATE(3, 70, 1000);
  const relax::Stencil5<float> s(100.0);
  HostGrid<float> u(n), b(n);
  relax::testing::fill_random(u, 7 + n, 0.0, 100.0);
  relax::testing::fill_random(b, 9 + n);
  relax::Stream stream;
  relax::MaxNormSlot<float> slot;
  const DeviceGrid<float> du = relax::to_device(u, stream), db = relax::to_device(b, stream);
  CHECK(relax::residual_norm(s, du, db, slot, stream) == ref::residual_norm(s, u, b));
  CHECK(relax::rhs_norm(s, du, db, slot, stream) == ref::rhs_norm(s, u, b));
  CHECK(relax::residual_norm(s, du, db, slot, stream) > 0.0f);

  b(n, 1) = std::numeric_limits<float>::quiet_NaN();  // a corner point: NaN must win the max
  const DeviceGrid<float> dnan = relax::to_device(b, stream);
  CHECK(std::isnan(relax::residual_norm(s, du, dnan, slot, stream)));
}

TEST_CASE("Solver rejects grids of another size and reports a non-finite residual",
          "[solver][sanitize]") {
  using Solver = relax::Solver<relax::Stencil5<float>, relax::Sync, relax::Fixed>;
  STATIC_REQUIRE(std::is_same_v<Solver::Strategy, relax::Sync>);
  STATIC_REQUIRE(std::is_same_v<Solver::value_type, float>);
  Solver solver(16, relax::Stencil5<float>(1.0), relax::Fixed(4));
  DeviceGrid<float> u(16, solver.stream()), small(15, solver.stream());
  CHECK_THROWS_AS(solver.solve(small, u), relax::invalid_argument);
  CHECK_THROWS_AS(solver.solve(u, small), relax::invalid_argument);

  HostGrid<float> b(16);
  b(3, 3) = std::numeric_limits<float>::infinity();
  const DeviceGrid<float> db = relax::to_device(b, solver.stream());
  const auto rep = solver.solve(u, db);
  CHECK(rep.status == relax::SolveStatus::non_finite);
  CHECK(rep.checks == 1);
}
