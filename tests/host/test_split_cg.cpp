// Standard CG on a matrix split by rows into k parts (reference::cg_split), the host model of
// the multi-GPU CG: with one part it is the single-domain solver bit for bit; with two and three
// parts it converges to the same tolerance, repeats bit for bit, and needs about as many
// iterations (the dot products add the parts' partials in part order, so they round
// differently); bad input is refused.
#include <catch2/catch.hpp>

#include "../support/matrices.hpp"
#include "../support/real_matrices.hpp"

#include <relax/cpu/cg.hpp>
#include <relax/cpu/split_cg.hpp>
#include <relax/sparse/partition.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

// One part against the single-domain solver with one thread: every field of the report and x.
template <class Single, class Split>
void check_one_part(Single single, Split split) {
  const relax::Csr<double> a = relax::testing::scaled_poisson(20, 1.0);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  relax::CgOptions options;
  options.rel_tol = 1e-10;
  std::vector<double> x_single(b.size(), 0.0), x_split(b.size(), 0.0);
  const relax::CgReport want = single(a, b, x_single, options);
  const relax::CgReport got = split(a, b, x_split, options);
  CHECK(got.status == want.status);
  CHECK(got.iterations == want.iterations);
  CHECK(got.switched_at == want.switched_at);
  CHECK(got.residual_norm == want.residual_norm);
  CHECK(got.true_residual_norm == want.true_residual_norm);
  CHECK(got.rhs_norm == want.rhs_norm);
  CHECK(same_bits(x_split, x_single));
}

TEST_CASE("split CG with one part is the single-domain CG bit for bit, standard and pipelined", "[split_cg]") {
  using relax::Csr;
  using V = std::vector<double>;
  check_one_part(
      [](const Csr<double>& a, const V& b, V& x, const relax::CgOptions& o) {
        return relax::reference::cg(a, b, x, o, relax::reference::Exec{1});
      },
      [](const Csr<double>& a, const V& b, V& x, const relax::CgOptions& o) {
        return relax::reference::cg_split(a, 1, b, x, o);
      });
  check_one_part(
      [](const Csr<double>& a, const V& b, V& x, const relax::CgOptions& o) {
        return relax::reference::cg_pipelined(a, b, x, o, relax::reference::Exec{1});
      },
      [](const Csr<double>& a, const V& b, V& x, const relax::CgOptions& o) {
        return relax::reference::cg_pipelined_split(a, 1, b, x, o);
      });
}

TEST_CASE("split pipelined CG on 2 and 3 parts converges and repeats bit for bit", "[split_cg]") {
  for (const std::string& name : {std::string("bcsstk03"), std::string("662_bus"), std::string("nos7")}) {
    const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name);
    const std::vector<double> b = relax::testing::ones_rhs(a);
    const relax::CgOptions options = relax::testing::real_matrix_options();
    std::vector<double> x1(b.size(), 0.0);
    const relax::CgReport one = relax::reference::cg_pipelined_split(a, 1, b, x1, options);
    for (int k : {2, 3}) {
      std::vector<double> x(b.size(), 0.0), again(b.size(), 0.0);
      const relax::CgReport r = relax::reference::cg_pipelined_split(a, k, b, x, options);
      const relax::CgReport repeat = relax::reference::cg_pipelined_split(a, k, b, again, options);
      INFO(name << ", k = " << k << ", iterations " << r.iterations << " (one part: " << one.iterations
                << "), true residual " << r.relative_true_residual());
      CHECK(relax::testing::converged_or_honest_gap(r));
      CHECK(repeat.iterations == r.iterations);
      CHECK(same_bits(again, x));
    }
  }
}

TEST_CASE("split CG on 2 and 3 parts converges, repeats bit for bit, and counts about the same iterations",
          "[split_cg]") {
  const relax::Csr<double> a = relax::testing::scaled_poisson(30, 2.0);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  std::vector<double> x1(b.size(), 0.0);
  const relax::CgReport one = relax::reference::cg_split(a, 1, b, x1, options);
  REQUIRE(one.converged());
  for (const relax::Balance balance : {relax::Balance::rows, relax::Balance::nonzeros})
    for (int k : {2, 3}) {
      std::vector<double> x(b.size(), 0.0), again(b.size(), 0.0);
      const relax::CgReport r = relax::reference::cg_split(a, k, b, x, options, balance);
      const relax::CgReport repeat = relax::reference::cg_split(a, k, b, again, options, balance);
      INFO("k = " << k << ", iterations " << r.iterations << " (one part: " << one.iterations << ")");
      CHECK(r.converged());
      CHECK(relax::testing::true_residual(a, b, x) < 1e-8);
      CHECK(std::abs(r.iterations - one.iterations) <= relax::testing::split_iteration_bound(one.iterations));
      CHECK(repeat.iterations == r.iterations);
      CHECK(repeat.residual_norm == r.residual_norm);
      CHECK(same_bits(again, x));
    }
}

TEST_CASE("split CG on the real SPD matrices", "[split_cg][real]") {
  for (const std::string& name : relax::testing::real_spd_matrices()) {
    const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name);
    const std::vector<double> b = relax::testing::ones_rhs(a);
    const relax::CgOptions options = relax::testing::real_matrix_options();
    std::vector<double> x1(b.size(), 0.0);
    const relax::CgReport one = relax::reference::cg_split(a, 1, b, x1, options);
    for (int k : {2, 3}) {
      std::vector<double> x(b.size(), 0.0), again(b.size(), 0.0);
      const relax::CgReport r = relax::reference::cg_split(a, k, b, x, options, relax::Balance::nonzeros);
      (void)relax::reference::cg_split(a, k, b, again, options, relax::Balance::nonzeros);
      INFO(name << ", k = " << k << ", iterations " << r.iterations << " (one part: " << one.iterations
                << "), true residual " << r.relative_true_residual());
      CHECK(relax::testing::converged_or_honest_gap(r));
      CHECK(std::abs(r.iterations - one.iterations) <= relax::testing::split_iteration_bound(one.iterations));
      CHECK(same_bits(again, x));
    }
  }
}

TEST_CASE("split CG refuses what CG refuses, and more parts than rows", "[split_cg][validation]") {
  const relax::Csr<double> a = relax::testing::scaled_poisson(3, 0.0);  // 9 rows
  const std::vector<double> b = relax::testing::ones_rhs(a);
  std::vector<double> x(b.size(), 0.0);
  const relax::CgOptions options;
  CHECK_THROWS_WITH(relax::reference::cg_split(a, 10, b, x, options), Catch::Contains("parts"));
  CHECK_THROWS_WITH(relax::reference::cg_split(a, 0, b, x, options), Catch::Contains("parts"));
  relax::Csr<double> skew = a;
  skew.values[1] += 1.0;  // A(1, 2) no longer equals A(2, 1)
  CHECK_THROWS_WITH(relax::reference::cg_split(skew, 2, b, x, options), Catch::Contains("symmetric"));
  std::vector<double> short_x(b.size() - 1, 0.0);
  CHECK_THROWS_WITH(relax::reference::cg_split(a, 2, b, short_x, options), Catch::Contains("x"));
  relax::Csr<double> wide = a;
  wide.cols = 10;
  CHECK_THROWS_AS(relax::reference::cg_split(wide, 2, b, x, options), relax::invalid_argument);
}
