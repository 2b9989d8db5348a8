// The reference CG: converges to known exact solutions on the matrix-free Poisson operator at
// awkward sizes and on the shipped SPD files, agrees between matrix-free and CSR forms, and ends
// with the right status on bad input and breakdown; the reference pipelined CG matches standard
// CG's iterations on Poisson and its true residual on an ill-conditioned matrix.
#include <catch2/catch.hpp>

#include "../support/matrices.hpp"
#include "../support/vectors.hpp"

#include <relax/cpu/cg.hpp>
#include <relax/sparse/matrix_market.hpp>
#include <relax/stencil/stencil5.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace ref = relax::reference;

namespace {

using relax::testing::random_vector;
using relax::testing::relative_error;

}  // namespace

TEST_CASE("reference CG recovers a known solution of the Poisson problem", "[cg][reference]") {
  const std::int64_t n = GENERATE(1, 2, 70, 257);
  const ref::Poisson5<double> a(n);
  const auto exact = random_vector<double>(a.size(), 5 + n);
  std::vector<double> b(a.size()), x(a.size(), 0.0);
  a.apply(exact.data(), b.data());
  relax::CgOptions opt;
  opt.rel_tol = 1e-12;
  const auto rep = ref::cg(a, b, x, opt, ref::Exec::openmp());
  INFO("n = " << n << ": " << rep.iterations << " iterations, relative residual " << rep.relative_residual());
  CHECK(rep.converged());
  CHECK(rep.relative_residual() <= 1e-12);
  // cond(A) < (2n / pi)^2 bounds the error by cond * tol.
  CHECK(relative_error(x, exact) <= std::max(1e-12, 1e-12 * 4.0 * n * n));
  if (n == 1) CHECK(rep.iterations == 1);  // one unknown: exact after one step
}

TEST_CASE("reference CG solves the shipped SPD matrices", "[cg][reference][sparse]") {
  for (const char* name : {"poisson2d_10.mtx", "laplace1d_50_general.mtx", "spd_random_40.mtx"}) {
    INFO(name);
    const auto a = relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/") + name);
    const std::vector<double> ones(a.rows, 1.0);
    std::vector<double> b(a.rows), x(a.rows, 0.0);
    a.multiply(ones.data(), b.data());
    relax::CgOptions opt;
    opt.rel_tol = 1e-12;
    const auto rep = ref::cg(a, b, x, opt, ref::Exec::serial());
    CHECK(rep.converged());
    CHECK(rep.iterations <= a.rows);  // exact arithmetic would need at most n
    CHECK(relative_error(x, ones) <= 1e-9);
  }
}

TEST_CASE("matrix-free and CSR Poisson take the same iterations", "[cg][reference][sparse]") {
  const auto csr = relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/poisson2d_10.mtx"));
  const ref::Poisson5<double> matrix_free(10);
  const auto b = random_vector<double>(100, 3);
  std::vector<double> x1(100, 0.0), x2(100, 0.0);
  relax::CgOptions opt;
  opt.rel_tol = 1e-10;
  const auto r1 = ref::cg(csr, b, x1, opt);
  const auto r2 = ref::cg(matrix_free, b, x2, opt);
  CHECK(r1.iterations == r2.iterations);
  CHECK(relative_error(x1, x2) <= 1e-12);
  // OpenMP sums dot products in another order: same solution to rounding.
  std::vector<double> x3(100, 0.0);
  const auto r3 = ref::cg(matrix_free, b, x3, opt, ref::Exec::openmp(2));
  CHECK(std::abs(r3.iterations - r2.iterations) <= 1);
  CHECK(relative_error(x3, x2) <= 1e-9);
}

TEST_CASE("reference CG statuses: cap, breakdown, non-finite, zero right-hand side", "[cg][reference]") {
  const ref::Poisson5<double> a(30);
  auto b = random_vector<double>(a.size(), 9);
  std::vector<double> x(a.size(), 0.0);
  relax::CgOptions opt;
  opt.max_iterations = 5;
  opt.record_history = true;
  auto rep = ref::cg(a, b, x, opt);
  CHECK(rep.status == relax::CgStatus::iteration_cap);
  CHECK(rep.iterations == 5);
  CHECK(rep.history.size() == 5);

  // An indefinite operator: diag(1, -1) with b along both axes gives p'Ap = 0 at the first step.
  const auto indefinite = [](const double* p, double* q) { q[0] = p[0]; q[1] = -p[1]; };
  const double bb[2] = {1.0, 1.0};
  double xx[2] = {0.0, 0.0};
  rep = ref::cg<double>(indefinite, 2, bb, xx, relax::CgOptions{});
  CHECK(rep.status == relax::CgStatus::breakdown);

  b[17] = std::numeric_limits<double>::quiet_NaN();
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(ref::cg(a, b, x, relax::CgOptions{}).status == relax::CgStatus::non_finite);

  std::vector<double> zero(a.size(), 0.0);
  std::fill(x.begin(), x.end(), 0.0);
  rep = ref::cg(a, zero, x, relax::CgOptions{});
  CHECK(rep.status == relax::CgStatus::converged);
  CHECK(rep.iterations == 0);

  // ‖b‖₂ beyond double (each entry finite): a breakdown, not ρ = 0 read as converged at once.
  const auto identity = [](const double* p, double* q) {
    for (int k = 0; k < 4; ++k) q[k] = p[k];
  };
  const double huge[4] = {1e154, 1e154, 1e154, 1e154};
  double xh[4] = {1e154, 1e154, 1e154, 0.0};
  rep = ref::cg<double>(identity, 4, huge, xh, relax::CgOptions{});
  CHECK(rep.status == relax::CgStatus::non_finite);
  CHECK(rep.iterations == 0);
  // A nonzero b whose 2-norm underflows to 0 is refused (ρ would be the absolute residual).
  const auto twice = [](const double* p, double* q) { q[0] = 2 * p[0]; };
  const double tiny = 1e-170;
  double xt = 0.0;
  CHECK_THROWS_WITH(ref::cg<double>(twice, 1, &tiny, &xt, relax::CgOptions{}),
                    Catch::Contains("2-norm does not underflow"));
}

TEST_CASE("reference CG rejects bad options and operands", "[cg][validation]") {
  relax::CgOptions o;
  o.rel_tol = -1;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("rel_tol"));
  o = {};
  o.max_iterations = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("max_iterations"));
  o = {};
  o.rel_tol = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("rel_tol"));
  o = {};
  o.replace_until = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("replace_until"));
  o = {};
  o.switch_gap = -1.0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("switch_gap"));
  o.switch_gap = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("switch_gap"));
  CHECK(relax::CgOptions{}.replace_until_for(sizeof(double)) == 1e4);
  CHECK(relax::CgOptions{}.replace_until_for(sizeof(float)) == 0.0);

  std::istringstream in("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 1 2\n");
  const auto nonsym = relax::read_matrix_market<double>(in);
  std::vector<double> b(2, 1.0), x(2, 0.0), short_x(1, 0.0);
  CHECK_THROWS_WITH(ref::cg(nonsym, b, x, {}), Catch::Contains("invalid A"));
  const auto spd = relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/poisson2d_10.mtx"));
  CHECK_THROWS_WITH(ref::cg(spd, b, x, {}), Catch::Contains("invalid b"));
  std::vector<double> b100(100, 1.0);
  CHECK_THROWS_WITH(ref::cg(spd, b100, short_x, {}), Catch::Contains("invalid x"));
}

TEST_CASE("reference pipelined CG: Poisson like standard CG, and standard CG's true residual when ill-conditioned",
          "[cg][reference][pipelined]") {
  for (std::int64_t n : {1, 2, 70}) {
    INFO("n = " << n);
    const ref::Poisson5<double> a(n);
    const auto exact = random_vector<double>(a.size(), 7 + n);
    std::vector<double> b(exact.size()), x(exact.size(), 0.0), x_cg(exact.size(), 0.0);
    a.apply(exact.data(), b.data());
    relax::CgOptions opt;
    opt.rel_tol = 1e-11;
    const auto pipelined = ref::cg_pipelined<double>([&](const double* p, double* q) { a.apply(p, q); },
                                                     a.size(), b.data(), x.data(), opt);
    const auto standard = ref::cg(a, b, x_cg, opt);
    REQUIRE(pipelined.converged());
    CHECK(pipelined.switched_at == -1);  // well conditioned: the gap stays within switch_gap's bound
    CHECK(std::abs(pipelined.iterations - standard.iterations) <= 2 + standard.iterations / 50);
    CHECK(relative_error(x, exact) <= 1e-8);
  }
  // D P D with D spanning 1.5 decades: about 10^3 times P's condition number.
  const auto a = relax::testing::scaled_poisson(40, 1.5);
  const auto exact = random_vector<double>(a.rows, 23);
  std::vector<double> b(exact.size()), x_cg(b.size(), 0.0), x_pipe(b.size(), 0.0), x_plain(b.size(), 0.0);
  a.multiply(exact.data(), b.data());
  relax::CgOptions opt;
  opt.rel_tol = 1e-11;
  opt.max_iterations = 50000;
  const auto standard = ref::cg(a, b, x_cg, opt);
  const auto pipelined = ref::cg_pipelined(a, b, x_pipe, opt);
  REQUIRE(standard.converged());
  REQUIRE(pipelined.converged());
  const double want = relax::testing::true_residual(a, b, x_cg);
  const double got = relax::testing::true_residual(a, b, x_pipe);
  INFO("true residual: standard " << want << " (" << standard.iterations << " iterations), pipelined "
                                  << got << " (" << pipelined.iterations << ")");
  CHECK(got <= std::max(10.0 * want, 1e-10));
  // Without replacement the recurrence drifts away from the true residual.
  relax::CgOptions never = opt;
  never.replace_interval = opt.max_iterations;
  const auto plain = ref::cg_pipelined(a, b, x_plain, never);
  const double drift = relax::testing::true_residual(a, b, x_plain);
  INFO("without replacement: " << relax::to_string(plain.status) << ", true residual " << drift);
  CHECK((!plain.converged() || drift > got));
}

TEST_CASE("Pipelined CG stops replacing the residual near the tolerance, where replacing breaks it down",
          "[cg][reference]") {
  // b = 1 on a 256² Poisson grid to 1e-13: replaced every 100 iterations to the end, the
  // recurrences break down near ‖r‖/‖b‖ = 2e-10 (the same failure as on a 4096² grid to 1e-8 on
  // the H200); stopping replacement at replace_until × the threshold lets it converge.
  const auto a = relax::testing::scaled_poisson(256, 0.0);  // D = I: the plain Laplacian
  const std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0);
  relax::CgOptions opt;
  opt.rel_tol = 1e-13;
  opt.max_iterations = 5000;
  std::vector<double> x_cg(b.size(), 0.0), x_pipe(b.size(), 0.0), x_always(b.size(), 0.0);
  const auto standard = ref::cg(a, b, x_cg, opt);
  const auto stopped = ref::cg_pipelined(a, b, x_pipe, opt);
  INFO("standard: " << relax::to_string(standard.status) << ", true residual " << standard.relative_true_residual()
                    << "; pipelined: " << relax::to_string(stopped.status) << ", true residual "
                    << stopped.relative_true_residual() << ", switched at " << stopped.switched_at);
  // 1e-13 is below what the true residual attains here: the recurrences converge, the true
  // residual stops near 1e-12, and the status says so.
  REQUIRE(standard.status == relax::CgStatus::residual_gap);
  CHECK(stopped.status == relax::CgStatus::residual_gap);
  // Four decades without replacement cost it some iterations (about a fifth more than standard CG).
  CHECK(std::abs(stopped.iterations - standard.iterations) <= standard.iterations / 4);
  const double want = relax::testing::true_residual(a, b, x_cg);
  CHECK(relax::testing::true_residual(a, b, x_pipe) <= 10.0 * std::max(want, 1e-12));
  // Replaced to the end, the recurrences drift until their pᵀAp is ≤ 0; pᵀAp computed directly
  // is > 0 (the matrix is SPD), so this is no breakdown: Pipelined switches to standard CG.
  relax::CgOptions always = opt;
  always.replace_until = 0.0;
  const auto drifted = ref::cg_pipelined(a, b, x_always, always);
  INFO("replaced to the end: " << relax::to_string(drifted.status) << " after " << drifted.iterations
                               << " iterations, switched at " << drifted.switched_at);
  CHECK(drifted.status != relax::CgStatus::breakdown);
  CHECK(drifted.switched_at > 0);
  CHECK(drifted.relative_true_residual() <= 10.0 * std::max(want, 1e-12));
}

TEST_CASE("a recurrence that converged with the true residual above the tolerance is a residual gap, "
          "and restarts close it",
          "[cg][reference]") {
  // Pipelined without residual replacement on D P D: its recurrence residual drifts below the
  // true one, so meeting 1e-11 on the recurrence is not meeting it on b − A x.
  const auto a = relax::testing::scaled_poisson(40, 1.5);
  const auto exact = random_vector<double>(a.rows, 23);
  std::vector<double> b(exact.size());
  a.multiply(exact.data(), b.data());
  relax::CgOptions opt;
  opt.rel_tol = 1e-11;
  opt.max_iterations = 50000;
  opt.replace_interval = opt.max_iterations;
  std::vector<double> x(b.size(), 0.0), y(b.size(), 0.0);
  const auto gap = ref::cg_pipelined(a, b, x, opt);
  INFO(relax::to_string(gap.status) << ": recurrence " << gap.relative_residual() << ", true "
                                    << gap.relative_true_residual());
  REQUIRE(gap.status == relax::CgStatus::residual_gap);
  CHECK(gap.relative_residual() < 1e-11);
  CHECK(gap.relative_true_residual() >= 1e-11);
  CHECK(gap.relative_true_residual() == Approx(relax::testing::true_residual(a, b, x)).epsilon(1e-6));
  opt.restarts = 3;
  const auto closed = ref::cg_pipelined(a, b, y, opt);
  INFO("with restarts: " << relax::to_string(closed.status) << " after " << closed.restarts << " restarts, "
                         << closed.iterations << " iterations");
  CHECK(closed.converged());
  CHECK(closed.restarts >= 1);
  CHECK(closed.iterations > gap.iterations);
  CHECK(relax::testing::true_residual(a, b, y) < 1e-11);
}

TEST_CASE("the Poisson stencils' rows: 4c minus the neighbours inside the box, zero outside", "[cg][reference][stencil_operator]") {
  // p = 1 at every unknown of a 3 x 2 box: A p = 4 − (neighbours inside).
  const ref::StencilMatrix<relax::Poisson5<double>> a(relax::Poisson5<double>{}, relax::Extents(3, 2));
  const std::vector<double> p(6, 1.0);
  std::vector<double> q(6);
  a.apply(p.data(), q.data());
  CHECK(q == std::vector<double>{2, 1, 2, 2, 1, 2});
  // 3D: a corner of a 2 x 2 x 2 cube has three neighbours inside.
  const ref::StencilMatrix<relax::Poisson7<double>> c(relax::Poisson7<double>{}, relax::Extents(2, 2, 2));
  const std::vector<double> ones(8, 1.0);
  std::vector<double> out(8);
  c.apply(ones.data(), out.data());
  for (double v : out) CHECK(v == 3.0);
  CHECK_THROWS_AS(relax::stencil_rows(relax::Poisson7<double>{}, relax::Extents(4, 4)), relax::invalid_argument);
}

TEST_CASE("StencilRows::row splits an unknown's index as row_at expects, in 32 bits and beyond",
          "[cg][reference][stencil_operator]") {
  // row(k) divides in 32 bits where the box has fewer than 2³² unknowns and in 64 beyond; both
  // must give the point row_at(x, y, z) gives with a 64-bit division. No vector is allocated: the
  // load reads a value made from the index, so boxes of billions of unknowns cost nothing.
  auto load = [](std::int64_t j) { return static_cast<double>(j % 1000003) - 500000.0; };
  auto check = [&](const auto& rows, std::int64_t k) {
    const std::int64_t plane = rows.nx * rows.ny, z = k / plane, y = (k - z * plane) / rows.nx;
    const std::int64_t x = k - z * plane - y * rows.nx;
    INFO("box " << rows.nx << " x " << rows.ny << " x " << rows.nz << ", k = " << k);
    CHECK(rows.row(k, load) == rows.row_at(x, y, z, load));
  };
  const std::int64_t two32 = std::int64_t{1} << 32;
  for (const relax::Extents& e : {relax::Extents(70, 1000), relax::Extents(1, 57), relax::Extents(57, 1),
                                  relax::Extents(65536, 65535), relax::Extents(100000, 50000)}) {
    const auto rows = relax::stencil_rows(relax::Poisson5<double>{}, e);
    for (std::int64_t k : {std::int64_t{0}, std::int64_t{1}, e.nx - 1, e.nx, rows.size() / 2, rows.size() - 1,
                           two32 - 1, two32, two32 + 1})
      if (k < rows.size()) check(rows, k);
  }
  for (const relax::Extents& e : {relax::Extents(33, 17, 5), relax::Extents(1, 1, 64), relax::Extents(2048, 2048, 1023),
                                  relax::Extents(3000, 2000, 1000)}) {
    const auto rows = relax::stencil_rows(relax::Poisson7<double>{}, e);
    for (std::int64_t k : {std::int64_t{0}, e.nx * e.ny - 1, e.nx * e.ny, rows.size() / 3, rows.size() - 1,
                           two32 - 1, two32, two32 + 7})
      if (k < rows.size()) check(rows, k);
  }
}

TEST_CASE("a Jacobi stencil serves as CG's operator on the host", "[cg][reference][stencil_operator]") {
  // Stencil5's A = (1 + 4r) I − r (N + S + E + W) is SPD: CG solves it, and the solution's Jacobi
  // residual (the stencil's own) is small.
  const relax::Stencil5<double> s(10.0);
  const relax::Extents box(40, 30);
  const ref::StencilMatrix<relax::Stencil5<double>> a(s, box);
  std::vector<double> b(a.size(), 1.0), x(a.size(), 0.0);
  relax::CgOptions opt;
  opt.rel_tol = 1e-12;
  const auto rep = ref::cg(a, b, x, opt);
  CHECK(rep.converged());
  std::vector<double> ax(a.size());
  a.apply(x.data(), ax.data());
  double worst = 0;
  for (std::size_t k = 0; k < ax.size(); ++k) worst = std::max(worst, std::abs(ax[k] - b[k]));
  CHECK(worst <= 1e-10);
}
