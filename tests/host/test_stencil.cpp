// Stencil5 arithmetic and the reference sweep and norms against hand-computed values, and the
// difference-form residual against a float64 evaluation.
#include <catch2/catch.hpp>

#include <relax/cpu/diffusion.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <cmath>
#include <limits>

using relax::HostGrid;
using relax::Stencil5;
namespace ref = relax::reference;

TEST_CASE("Stencil5 update and residual match hand-computed values", "[stencil]") {
  // r = 0.25 makes 1 + 4r = 2 and every intermediate exact in binary.
  const Stencil5<float> s(0.25);
  CHECK(s.inv_diag == 0.5f);
  // Neighbours {c, n, s, e, w}: (b + r (n + s + e + w)) / (1 + 4r) = (1 + 0.25 * 15) / 2
  CHECK(s.update(relax::Neighbours<float, 2>{2.0f, 2.0f, 3.0f, 4.0f, 6.0f}, {}, 1.0f) == 2.375f);
  // b - (1 + 4r) c + r (n + s + e + w) = 1 - 4 + 3.25
  CHECK(s.residual(relax::Neighbours<float, 2>{2.0f, 2.0f, 3.0f, 4.0f, 4.0f}, {}, 1.0f) == 0.25f);
  // The fixed point of the update has zero residual.
  const Stencil5<double> d(0.25);
  relax::Neighbours<double, 2> nb{0.0, 2.0, 3.0, 4.0, 6.0};
  nb.c = d.update(nb, {}, 1.0);
  CHECK(d.residual(nb, {}, 1.0) == 0.0);
}

TEST_CASE("neighbours by offset: north is dy = -1, east dx = +1, up dz = -1", "[stencil]") {
  const relax::Neighbours<int, 2> n2{0, 1, 2, 3, 4};
  CHECK(n2(0, 0) == 0);
  CHECK(n2(0, -1) == 1);
  CHECK(n2(0, 1) == 2);
  CHECK(n2(1, 0) == 3);
  CHECK(n2(-1, 0) == 4);
  const relax::Neighbours<int, 3> n3{0, 1, 2, 3, 4, 5, 6};
  CHECK(n3(0, -1, 0) == 1);
  CHECK(n3(-1, 0, 0) == 4);
  CHECK(n3(0, 0, -1) == 5);
  CHECK(n3(0, 0, 1) == 6);
}

TEST_CASE("Stencil7 update and residual match hand-computed values", "[stencil]") {
  // r = 0.5 makes 1 + 6r = 4: every intermediate is exact in binary.
  const relax::Stencil7<float> s(0.5);
  CHECK(s.inv_diag == 0.25f);
  const relax::Neighbours<float, 3> nb{1.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 7.0f};
  // (b + r (1 + 2 + 3 + 4 + 5 + 7)) / 4 = (2 + 11) / 4
  CHECK(s.update(nb, {}, 2.0f) == 3.25f);
  // (b - c) + r Σ (nbr - c) = 1 + 0.5 * 16
  CHECK(s.residual(nb, {}, 2.0f) == 9.0f);
  // Difference form: the residual at the update's fixed point is zero.
  const relax::Stencil7<double> d(0.5);
  relax::Neighbours<double, 3> m{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0};
  m.c = d.update(m, {}, 2.0);
  CHECK(d.residual(m, {}, 2.0) == 0.0);
}

TEST_CASE("couplings are validated in the stencil's own type", "[stencil][validation]") {
  CHECK_THROWS_WITH(Stencil5<float>(1e300), Catch::Contains("invalid r = 1e+300") && Catch::Contains("float"));
  CHECK_THROWS_AS(Stencil5<float>(1e38), relax::invalid_argument);  // 1 + 4r overflows in float
  CHECK_THROWS_AS(relax::Stencil7<float>(1e300), relax::invalid_argument);
  CHECK_THROWS_AS(Stencil5<float>(1e-50), relax::invalid_argument);  // rounds to 0 in float
  CHECK_THROWS_AS(Stencil5<double>(-1.0), relax::invalid_argument);
  CHECK_THROWS_AS(Stencil5<double>(std::nan("")), relax::invalid_argument);
  CHECK_NOTHROW(Stencil5<double>(1e300));
  CHECK_NOTHROW(Stencil5<float>(1e30));
  CHECK(std::isfinite(Stencil5<float>(1e30).inv_diag));
}

TEST_CASE("reference sweeps and norms match hand-computed values on a 3 x 3 grid", "[reference]") {
  const Stencil5<float> s(0.25);
  HostGrid<float> u(3), out(3), b(3);
  for (int j = 0; j <= 4; ++j) u(0, j) = 100.0f;  // top edge, as in the diffusion problem
  out = u;

  CHECK(ref::rhs_norm(s, u, b) == 25.0f);        // r * 100 next to the top edge
  CHECK(ref::residual_norm(s, u, b) == 25.0f);   // zero interior: the same thing

  ref::sweep(s, u, out, b);
  for (int j = 1; j <= 3; ++j) {
    CHECK(out(1, j) == 12.5f);  // 0.25 * 100 / 2
    CHECK(out(2, j) == 0.0f);
    CHECK(out(3, j) == 0.0f);
  }
  CHECK(out(0, 2) == 100.0f);  // the ring is not written

  ref::sweep(s, out, u, b);
  CHECK(u(1, 1) == 14.0625f);  // 0.25 * (100 + 12.5) / 2
  CHECK(u(1, 2) == 15.625f);   // 0.25 * (100 + 12.5 + 12.5) / 2
  CHECK(u(1, 3) == 14.0625f);
  CHECK(u(2, 2) == 1.5625f);   // 0.25 * 12.5 / 2
  CHECK(u(3, 2) == 0.0f);
  // Residuals of the second iterate: 1.171875 at (1, 1) and (1, 2), 0.78125 at (2, 1), 0.390625
  // on row 3, and the largest at (2, 2): -2 * 1.5625 + 0.25 * (15.625 + 2 * 1.5625).
  CHECK(ref::residual_norm(s, u, b) == 1.5625f);
}

namespace {
// The form the source study first used, kept here only to show what it gets wrong.
float naive_residual(float r, float b, float c, float n, float s, float e, float w) {
  return b - (1.0f + 4.0f * r) * c + r * ((n + s) + (e + w));
}
double exact_residual(double r, double b, double c, double n, double s, double e, double w) {
  return b - (1.0 + 4.0 * r) * c + r * ((n + s) + (e + w));
}
}  // namespace

namespace {
struct ResidualForms {
  double exact = 0, difference = 0, naive = 0;
};

// The three evaluations of ||b - A u||inf for one float32 step solved to `tol` (or the cap).
ResidualForms residual_forms(double r, double tol, std::int64_t cap) {
  relax::DiffusionParams p;
  p.n = 64;
  p.r = r;
  p.steps = 1;
  relax::SolveOptions opt;
  opt.tol = tol;
  opt.max_sweeps = cap;
  HostGrid<float> u;
  (void)ref::run_diffusion<float>(p, 8, opt, ref::Exec::openmp(), &u);
  HostGrid<float> b(p.n);
  ref::add(relax::initial_state<float>(p), relax::source_term<float>(p), b);
  const Stencil5<float> s(p.r);
  ResidualForms f;
  for (std::int64_t i = 1; i <= p.n; ++i)
    for (std::int64_t j = 1; j <= p.n; ++j) {
      f.exact = std::max(f.exact, std::abs(exact_residual(s.r, b(i, j), u(i, j), u(i - 1, j),
                                                          u(i + 1, j), u(i, j + 1), u(i, j - 1))));
      f.naive = std::max(f.naive, double(std::abs(naive_residual(s.r, b(i, j), u(i, j), u(i - 1, j),
                                                                 u(i + 1, j), u(i, j + 1), u(i, j - 1)))));
    }
  f.difference = ref::residual_norm(s, u, b);
  return f;
}
}  // namespace

TEST_CASE("difference-form residual agrees with float64; the naive float32 form does not",
          "[stencil]") {
  SECTION("converged to 1e-5 at r = 100: the naive form is an order of magnitude further off") {
    const auto f = residual_forms(100.0, 1e-5, 1'000'000);
    INFO("float64 " << f.exact << ", difference form " << f.difference << ", naive " << f.naive);
    CHECK(std::abs(f.difference - f.exact) <= 1e-4 * f.exact);
    CHECK(std::abs(f.naive - f.exact) > 10 * std::abs(f.difference - f.exact));
  }
  SECTION("at the float32 floor (r = 10, 20000 sweeps): the naive form underestimates") {
    const auto f = residual_forms(10.0, 1e-9, 20'000);
    INFO("float64 " << f.exact << ", difference form " << f.difference << ", naive " << f.naive);
    CHECK(std::abs(f.difference - f.exact) <= 1e-4 * f.exact);
    CHECK(f.naive < 0.8 * f.exact);
  }
}

TEST_CASE("max-norm bits: order-free, NaN wins, from_bits inverts abs_bits", "[stencil]") {
  using relax::arith::abs_bits;
  using relax::arith::from_bits;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(abs_bits(-2.0f) > abs_bits(1.5f));
  CHECK(abs_bits(inf) > abs_bits(std::numeric_limits<float>::max()));
  CHECK(abs_bits(nan) > abs_bits(inf));
  CHECK(abs_bits(-0.0f) == abs_bits(0.0f));
  CHECK(from_bits<float>(abs_bits(-3.25f)) == 3.25f);
  CHECK(from_bits<double>(abs_bits(-1e300)) == 1e300);
  CHECK(std::isnan(from_bits<double>(abs_bits(std::nan("")))));
}
