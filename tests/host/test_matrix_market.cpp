// The Matrix Market reader: what it accepts, what it builds, and the line and problem it names
// for malformed input; the shipped SPD files; the square-symmetric check CG relies on.
#include <catch2/catch.hpp>

#include <relax/sparse/distribute.hpp>
#include <relax/sparse/matrix_market.hpp>

#include <sstream>
#include <string>

namespace {

relax::Csr<double> parse(const std::string& text) {
  std::istringstream in(text);
  auto a = relax::read_matrix_market<double>(in, "test.mtx", relax::MatrixMarketLimits{1000});
  a.validate();
  return a;
}

// The line a parse error names, with its message checked for `problem`.
std::int64_t error_line(const std::string& text, const std::string& problem) {
  try {
    (void)parse(text);
  } catch (const relax::parse_error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(problem) != std::string::npos);
    CHECK(std::string(e.what()).find("test.mtx:" + std::to_string(e.line())) != std::string::npos);
    return e.line();
  }
  FAIL("no parse_error for:\n" << text);
  return -1;
}

const std::string general = "%%MatrixMarket matrix coordinate real general\n";

}  // namespace

TEST_CASE("reads general, symmetric, integer and pattern files", "[sparse][matrix_market]") {
  const auto a = parse(general + "% a comment\n\n3 4 4\n1 1 1.5\n3 4 -2e1\n\n% between entries\n2 2 3\n1 3 0.25\n");
  CHECK(a.rows == 3);
  CHECK(a.cols == 4);
  CHECK(a.nnz() == 4);
  CHECK(a.row_ptr == std::vector<std::int64_t>{0, 2, 3, 4});
  CHECK(a.at(0, 0) == 1.5);
  CHECK(a.at(0, 2) == 0.25);
  CHECK(a.at(1, 1) == 3.0);
  CHECK(a.at(2, 3) == -20.0);

  const auto s = parse("%%MatrixMarket MATRIX Coordinate Real SYMMETRIC\n3 3 3\n1 1 2\n3 1 -1\n3 3 5\n");
  CHECK(s.nnz() == 4);  // the off-diagonal entry is mirrored, the diagonal is not
  CHECK(s.at(0, 2) == -1.0);
  CHECK(s.at(2, 0) == -1.0);

  const auto i = parse("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 7\n2 1 -3\n");
  CHECK(i.at(0, 1) == 7.0);
  CHECK(i.at(1, 0) == -3.0);

  const auto p = parse("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n");
  CHECK(p.at(0, 2) == 1.0);
  CHECK(p.at(1, 0) == 1.0);

  const auto d = parse(general + "2 2 3\n1 1 1\n1 1 2.5\n2 2 1\n");  // duplicates are summed
  CHECK(d.nnz() == 2);
  CHECK(d.at(0, 0) == 3.5);
}

TEST_CASE("malformed input names the line and the problem", "[sparse][matrix_market][validation]") {
  CHECK(error_line("", "empty input") == 0);
  CHECK(error_line("MatrixMarket matrix coordinate real general\n1 1 0\n", "header") == 1);
  CHECK(error_line("%%MatrixMarket matrix array real general\n1 1\n1\n", "only coordinate") == 1);
  CHECK(error_line("%%MatrixMarket matrix coordinate complex general\n", "unsupported field") == 1);
  CHECK(error_line("%%MatrixMarket matrix coordinate real hermitian\n", "unsupported symmetry") == 1);
  CHECK(error_line(general + "% only comments\n", "size line") == 2);
  CHECK(error_line(general + "3 3\n", "3 integers") == 2);
  CHECK(error_line(general + "3 x 1\n", "not an integer") == 2);
  CHECK(error_line(general + "0 3 1\n", "at least 1") == 2);
  CHECK(error_line(general + "2000 3 1\n", "limit") == 2);
  CHECK(error_line(general + "2 2 -1\n", "must not be negative") == 2);
  CHECK(error_line(general + "2 2 5\n", "truncated: 0 of 5") == 2);
  CHECK(error_line("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", "square") == 2);
  CHECK(error_line(general + "2 2 2\n1 1 1\n2 3 1\n", "column index 3 outside 1..2") == 4);
  CHECK(error_line(general + "2 2 2\n1 1 1\n0 1 1\n", "row index 0 outside") == 4);
  CHECK(error_line(general + "2 2 2\n1 1 1\n2 2 abc\n", "not a number") == 4);
  CHECK(error_line(general + "2 2 2\n1 1 1\n2 2 nan\n", "not a finite number") == 4);
  CHECK(error_line(general + "2 2 2\n1 1 1\n2 2 1e400\n", "not a finite number in double") == 4);
  CHECK(error_line(general + "2 2 2\n1 1 1\n2 2\n", "expected 3 fields") == 4);
  CHECK(error_line(general + "2 2 2\n1 1 1\n2 2 1 9\n", "expected 3 fields") == 4);
  CHECK(error_line(general + "2 2 1\n1 1 1\n2 2 1\n", "more entries than the 1 declared") == 4);
  CHECK(error_line(general + "2 2 3\n1 1 1\n2 2 1\n", "truncated: 2 of 3") == 4);
  CHECK(error_line("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n1 2 1\n",
                   "above the diagonal") == 4);
  CHECK(error_line("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n",
                   "not an integer") == 3);
  CHECK_THROWS_AS(relax::read_matrix_market<double>(std::string("no/such/file.mtx")),
                  relax::invalid_argument);
}

TEST_CASE("values: duplicates past rows x cols, underflow, and what is not finite in T",
          "[sparse][matrix_market][validation]") {
  // More entries than places, the duplicates summed (the count is not bounded by rows · cols).
  const auto d = parse(general + "1 1 3\n1 1 1\n1 1 2\n1 1 0.5\n");
  CHECK(d.nnz() == 1);
  CHECK(d.at(0, 0) == 3.5);
  // strtod flags underflow as a range error; a subnormal value is read as it rounds, a smaller
  // one as 0.
  const auto tiny = parse(general + "2 2 2\n1 1 1e-310\n2 2 1e-400\n");
  CHECK(tiny.at(0, 0) == 1e-310);
  CHECK(tiny.at(1, 1) == 0.0);
  // A value finite in double but not in float, and duplicates that sum beyond the type.
  std::istringstream big("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e39\n");
  CHECK_THROWS_WITH(relax::read_matrix_market<float>(big, "big.mtx"), Catch::Contains("big.mtx:3") &&
                                                                          Catch::Contains("not finite in float"));
  CHECK_THROWS_WITH(parse(general + "1 1 2\n1 1 1e308\n1 1 1e308\n"),
                    Catch::Contains("(1, 1) sum to a value not finite in double"));
  std::istringstream sum("%%MatrixMarket matrix coordinate real general\n2 2 3\n2 1 3e38\n1 1 1\n2 1 3e38\n");
  CHECK_THROWS_WITH(relax::read_matrix_market<float>(sum, "sum.mtx"),
                    Catch::Contains("(2, 1) sum to a value not finite in float"));
  // A part read from its rows is held to the same (it returned inf before).
  std::istringstream part("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1e39\n2 2 1\n");
  CHECK_THROWS_WITH(relax::read_matrix_market_part<float>(part, 2, 1, "part.mtx"),
                    Catch::Contains("not finite in float"));
}

TEST_CASE("the reader's limits are checked", "[sparse][matrix_market][validation]") {
  for (std::int64_t bad : {std::int64_t{0}, std::int64_t{-5}, std::int64_t{2147483648}, std::int64_t{1} << 40}) {
    INFO(bad);
    std::istringstream in(general + "1 1 1\n1 1 1\n");
    CHECK_THROWS_WITH(relax::read_matrix_market<double>(in, "t.mtx", relax::MatrixMarketLimits{bad}),
                      Catch::Contains("max_dimension"));
  }
  std::istringstream in(general + "1 1 1\n1 1 1\n");
  CHECK(relax::read_matrix_market<double>(in, "t.mtx", relax::MatrixMarketLimits{2147483647}).at(0, 0) == 1.0);
}

TEST_CASE("the shipped SPD files read as square symmetric matrices", "[sparse][matrix_market]") {
  for (const char* name : {"poisson2d_10.mtx", "laplace1d_50_general.mtx", "spd_random_40.mtx"}) {
    INFO(name);
    const auto a = relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/") + name);
    a.validate();
    CHECK_NOTHROW(relax::require_square_symmetric(a, "A"));
    for (std::int64_t i = 0; i < a.rows; ++i) {  // positive diagonal, diagonally dominant
      double off = 0;
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        if (a.col_idx[k] != i) off += std::abs(a.values[k]);
      CHECK(a.at(i, i) >= off);
      CHECK(a.at(i, i) > 0);
    }
  }
  const auto p = relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/poisson2d_10.mtx"));
  CHECK(p.rows == 100);
  CHECK(p.nnz() == 100 + 4 * 90);  // 100 diagonal entries, 2 * 180 neighbour couplings
}

TEST_CASE("CG's square-symmetric check names what is wrong", "[sparse][validation]") {
  const auto rect = parse(general + "2 3 1\n1 1 1\n");
  CHECK_THROWS_WITH(relax::require_square_symmetric(rect, "A"), Catch::Contains("square"));
  const auto skew = parse(general + "2 2 2\n1 2 1\n2 1 -1\n");
  CHECK_THROWS_WITH(relax::require_square_symmetric(skew, "A"), Catch::Contains("A(1, 2) = 1 != A(2, 1) = -1"));
}

TEST_CASE("write and read back give the same matrix", "[sparse][matrix_market]") {
  const auto a = relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/spd_random_40.mtx"));
  for (bool symmetric : {false, true}) {
    std::stringstream io;
    relax::write_matrix_market(io, a, symmetric, "round trip");
    const auto b = relax::read_matrix_market<double>(io, "round trip");
    CHECK(b.row_ptr == a.row_ptr);
    CHECK(b.col_idx == a.col_idx);
    CHECK(b.values == a.values);
  }
}
