// The reference backend on 3D and rectangular boxes: hand-computed sweeps, the 3D diffusion
// problem, and a stencil that reads a coefficient field by global index.
#include <catch2/catch.hpp>

#include "../support/grids.hpp"
#include "../support/variable.hpp"

#include <relax/cpu/diffusion.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <cstdint>

using relax::Extents;
using relax::HostGrid;
namespace ref = relax::reference;

TEST_CASE("3D reference sweep and norms match hand-computed values on a 3 x 3 x 3 box", "[reference][3d]") {
  // r = 0.5: 1 + 6r = 4, every value below is exact in binary.
  const relax::Stencil7<float> s(0.5);
  HostGrid<float> u(Extents(3, 3, 3)), out(Extents(3, 3, 3)), b(Extents(3, 3, 3));
  for (int i = 0; i <= 4; ++i)
    for (int j = 0; j <= 4; ++j) u(0, i, j) = 100.0f;  // the top face (plane 0)
  out = u;
  CHECK(ref::rhs_norm(s, u, b) == 50.0f);  // r · 100 under the top face
  ref::sweep(s, u, out, b);
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j) {
      CHECK(out(1, i, j) == 12.5f);  // 0.5 · 100 / 4
      CHECK(out(2, i, j) == 0.0f);
    }
  CHECK(out(0, 2, 2) == 100.0f);  // the ring is not written
  ref::sweep(s, out, u, b);
  CHECK(u(1, 2, 2) == 0.5f * (100.0f + 4 * 12.5f) / 4.0f);  // four neighbours in plane 1
  CHECK(u(1, 1, 1) == 0.5f * (100.0f + 2 * 12.5f) / 4.0f);  // a corner has two
  CHECK(u(2, 2, 2) == 0.5f * 12.5f / 4.0f);
}

TEST_CASE("rectangular 2D boxes: x runs along a row, y down the rows", "[reference]") {
  const relax::Stencil5<double> s(1.0);
  HostGrid<double> u(Extents(5, 2)), out(Extents(5, 2)), b(Extents(5, 2));
  u(0, 3) = 10.0;  // north of (1, 3) only
  out = u;
  ref::sweep(s, u, out, b);
  CHECK(out(1, 3) == 2.0);  // 1 · 10 / 5
  CHECK(out(1, 2) == 0.0);
  CHECK(out(2, 3) == 0.0);
}

TEST_CASE("3D diffusion converges every step and needs as many sweeps at every N", "[reference][3d]") {
  double per_step[3];
  int k = 0;
  for (std::int64_t n : {32, 48, 64}) {
    relax::DiffusionParams p;
    p.n = n;
    p.dims = 3;
    p.r = 10.0;
    HostGrid<float> u;
    const auto run = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &u);
    REQUIRE(run.converged());
    CHECK(run.steps.size() == 10);
    per_step[k++] = double(run.sweeps()) / 10.0;
    CHECK(u(1, (n + 1) / 2, (n + 1) / 2) > u(n, (n + 1) / 2, (n + 1) / 2));  // heat flows from the top face
  }
  INFO("sweeps per step " << per_step[0] << ", " << per_step[1] << ", " << per_step[2]);
  CHECK(per_step[2] <= 1.3 * per_step[0]);
  CHECK(per_step[2] >= 0.7 * per_step[0]);
}

TEST_CASE("3D problem parameters: a rectangular box, rejected extents", "[reference][3d][validation]") {
  relax::DiffusionParams p;
  p.dims = 3;
  p.nx = 33;
  p.ny = 17;
  p.nz = 5;
  CHECK(p.extents() == Extents(33, 17, 5));
  p.nz = 2;
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("invalid nz = 2"));
  p.dims = 2;
  p.nz = 4;
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("invalid nz = 4"));
}

TEST_CASE("a stencil reads its coefficient field by the point's global index", "[reference][user]") {
  const std::int64_t nx = 37, ny = 23;
  const auto field = relax::testing::variable_couplings(nx, ny);
  const relax::testing::VariableDiffusion5 s{field.data(), nx};
  HostGrid<float> u(Extents(nx, ny)), out(Extents(nx, ny)), b(Extents(nx, ny));
  relax::testing::fill_random(u, 5, 0.0, 1.0);
  relax::testing::fill_random(b, 6, 0.0, 1.0);
  out = u;
  ref::sweep(s, u, out, b);
  // Point (x = 10, y = 4) is grid point (i = 5, j = 11).
  const float c = field[4 * nx + 10];
  const float want = (b(5, 11) + c * ((u(4, 11) + u(6, 11)) + (u(5, 12) + u(5, 10)))) / (1.0f + 4.0f * c);
  CHECK(out(5, 11) == want);
  HostGrid<float> scratch = u;
  const auto rep = ref::solve(s, u, scratch, b, 8, {});
  CHECK(rep.converged());
}
