// The CSR checks where a CSR enters: invariants reported as what they are (row and entry), never
// a crash or "not symmetric"; the symmetry tolerance and the symmetric part; the reference CG
// checking its matrix first.
#include <catch2/catch.hpp>

#include <relax/cpu/cg.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/sparse/matrix_market.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace {

// The 1D Laplacian tridiag(-1, 2, -1) on n unknowns.
relax::Csr<double> laplace1d(int n) {
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  for (int i = 0; i < n; ++i) {
    for (int j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < n) {
        a.col_idx.push_back(j);
        a.values.push_back(i == j ? 2.0 : -1.0);
      }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

}  // namespace

TEST_CASE("a column index far out of range is an error naming the row and entry, not a crash",
          "[sparse][validation]") {
  auto a = laplace1d(5);
  a.col_idx[4] = 2000000000;  // row 1's third entry
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("col_idx[4] (row 1)") && Catch::Contains("2000000000") &&
                                      Catch::Contains("[0, 5)"));
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A"), Catch::Contains("col_idx[4] (row 1)"));
  a.col_idx[4] = -3;
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A"), Catch::Contains("col_idx[4] (row 1) = -3"));
}

TEST_CASE("bad row offsets and off-by-one columns are reported as what they are", "[sparse][validation]") {
  auto a = laplace1d(4);
  a.row_ptr[2] = a.row_ptr[1] - 1;  // row 1 ends before it starts
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A"), Catch::Contains("row_ptr[2] (end of row 1)"));
  a = laplace1d(4);
  a.row_ptr[2] = 1000;
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("row_ptr[2]") && Catch::Contains("1000"));
  a = laplace1d(4);
  a.row_ptr.back() = a.nnz() + 1;
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("row_ptr[4]"));
  a = laplace1d(4);
  a.row_ptr.pop_back();
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("row_ptr.size()"));
  a = laplace1d(4);
  a.col_idx[3] = a.col_idx[2];  // row 1: columns 0, 1, 1 — a duplicate from an off-by-one
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A"),
                    Catch::Contains("col_idx[3] (row 1)") && Catch::Contains("strictly increasing"));
  a = laplace1d(4);
  a.col_idx.back() = 4;  // the last column one past the end
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A"), Catch::Contains("col_idx[9] (row 3) = 4"));
  a = laplace1d(4);
  a.values.pop_back();
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("col_idx.size()"));
  a = laplace1d(4);
  a.values[5] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("values[5] (row 2, column 1)"));
}

TEST_CASE("the reference CG checks its CSR before it multiplies", "[sparse][validation][cg]") {
  auto a = laplace1d(6);
  a.col_idx[7] = 1 << 30;
  std::vector<double> b(6, 1.0), x(6, 0.0);
  CHECK_THROWS_WITH(relax::reference::cg(a, b, x, {}), Catch::Contains("col_idx[7]"));
  CHECK_THROWS_WITH(relax::reference::cg_pipelined(a, b, x, {}), Catch::Contains("col_idx[7]"));
}

TEST_CASE("a matrix symmetric to rounding passes with a tolerance, and the error says how",
          "[sparse][validation]") {
  auto a = laplace1d(5);
  a.values[1] *= 1.0 + 3e-15;  // A(0, 1) off A(1, 0) by about 3e-15 relative, as a 'general' file may be
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A"),
                    Catch::Contains("A(1, 2)") && Catch::Contains("relax::CsrSymmetry{1e-12}") &&
                        Catch::Contains("symmetrise"));
  CHECK_NOTHROW(relax::require_square_symmetric(a, "A", relax::CsrSymmetry{1e-12}));
  CHECK_THROWS_WITH(relax::require_square_symmetric(a, "A", relax::CsrSymmetry{1e-16}), Catch::Contains("A(1, 2)"));
  auto skew = laplace1d(5);
  skew.values[1] = 1.0;  // really nonsymmetric: no small tolerance accepts it
  CHECK_THROWS_WITH(relax::require_square_symmetric(skew, "A", relax::CsrSymmetry{1e-12}),
                    Catch::Contains("relative difference 2"));
  CHECK_THROWS_WITH(relax::CsrSymmetry{1.5}.validate(), Catch::Contains("CsrSymmetry::rel_tol"));

  std::vector<double> b(5, 1.0), x(5, 0.0), xs(5, 0.0);
  CHECK_THROWS_AS(relax::reference::cg(a, b, x, {}), relax::invalid_argument);
  const auto as_given = relax::reference::cg(a, b, x, {}, {}, relax::CsrSymmetry{1e-12});
  const auto symmetrised = relax::reference::cg(a, b, xs, {}, {}, relax::CsrSymmetry{1e-12, true});
  CHECK(as_given.converged());
  CHECK(symmetrised.converged());
}

TEST_CASE("the symmetric part is (A + A^T) / 2 on the union pattern, symmetric bit for bit", "[sparse]") {
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 4\n1 2 1\n2 1 3\n2 2 4\n3 1 2\n");
  const auto a = relax::read_matrix_market<double>(in);
  const auto s = relax::symmetric_part(a);
  CHECK_NOTHROW(relax::require_square_symmetric(s, "S"));
  CHECK(s.at(0, 1) == 2.0);
  CHECK(s.at(1, 0) == 2.0);
  CHECK(s.at(0, 2) == 1.0);  // stored only at (3, 1): the union pattern
  CHECK(s.at(2, 0) == 1.0);
  CHECK(s.at(0, 0) == 4.0);
  CHECK(s.nnz() == 6);
}
