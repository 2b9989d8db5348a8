// A square CSR split by rows: balanced boundaries (by rows or by non-zeros), each part's halo
// (every off-part column its rows read, once), exchange lists that mirror each other, and the
// host emulation of a partitioned SpMV (owned x, halo gathered through the send lists) equal to
// the global SpMV bit for bit, on the real SPD matrices of tests/data/suitesparse and on
// generated ones with empty rows and one-row parts.
#include <catch2/catch.hpp>

#include "../support/matrices.hpp"
#include "../support/real_matrices.hpp"

#include <relax/sparse/distribute.hpp>
#include <relax/sparse/partition.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

// A random sparse square matrix: a diagonal, a band and a few far entries per row; every
// `empty_every`-th row has no entry at all.
relax::Csr<double> random_csr(std::int64_t n, std::uint64_t seed, std::int64_t empty_every = 0) {
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    std::set<std::int64_t> cols;
    if (empty_every == 0 || i % empty_every != 0) {
      cols.insert(i);
      for (std::int64_t d : {-2, -1, 1, 3})
        if (i + d >= 0 && i + d < n) cols.insert(i + d);
      for (int k = 0; k < 3; ++k) cols.insert(static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)));
    }
    for (std::int64_t c : cols) {
      a.col_idx.push_back(static_cast<std::int32_t>(c));
      a.values.push_back(static_cast<double>(next() % 1000) / 7.0 - 60.0);
    }
    a.row_ptr.push_back(a.nnz());
  }
  return a;
}

// The partitioned SpMV on the host: each part's x is its owned entries and the halo its
// neighbours send; y gathered from the parts.
std::vector<double> partitioned_multiply(const std::vector<relax::CsrPart<double>>& parts, const std::vector<double>& x) {
  std::vector<std::vector<double>> local(parts.size());
  for (const auto& p : parts) {
    local[static_cast<std::size_t>(p.index)].assign(static_cast<std::size_t>(p.columns()), 0.0);
    std::copy_n(x.begin() + p.first_row, p.rows, local[static_cast<std::size_t>(p.index)].begin());
  }
  for (const auto& p : parts)
    for (const relax::HaloList& r : p.receives) {
      const auto& sender = parts[static_cast<std::size_t>(r.part)];
      const auto s = std::find_if(sender.sends.begin(), sender.sends.end(),
                                  [&](const relax::HaloList& l) { return l.part == p.index; });
      REQUIRE(s != sender.sends.end());
      REQUIRE(s->indices.size() == r.indices.size());
      for (std::size_t k = 0; k < r.indices.size(); ++k)
        local[static_cast<std::size_t>(p.index)][static_cast<std::size_t>(r.indices[k])] =
            local[static_cast<std::size_t>(r.part)][static_cast<std::size_t>(s->indices[k])];
    }
  std::vector<double> y(x.size(), 0.0);
  for (const auto& p : parts) p.multiply(local[static_cast<std::size_t>(p.index)].data(), y.data() + p.first_row);
  return y;
}

void check_partition(const relax::Csr<double>& a, int k, relax::Balance balance, const std::string& what) {
  const auto parts = relax::partition(a, k, balance);
  INFO(what << ", " << k << " parts, balanced by " << (balance == relax::Balance::rows ? "rows" : "non-zeros"));
  REQUIRE(static_cast<int>(parts.size()) == k);
  std::int64_t next = 0, nnz = 0;
  for (const auto& p : parts) {
    CHECK(p.first_row == next);
    CHECK(p.rows >= 1);
    next += p.rows;
    nnz += p.nnz();
    // The halo: distinct, ascending, outside the owned rows, and each column read at least once.
    std::vector<int> used(p.halo.size(), 0);
    const auto outside = std::count_if(p.col_idx.begin(), p.col_idx.end(),
                                       [&](std::int64_t c) { return c < 0 || c >= p.columns(); });
    REQUIRE(outside == 0);
    for (std::int64_t c : p.col_idx)
      if (c >= p.rows) used[static_cast<std::size_t>(c - p.rows)] = 1;
    CHECK(std::count(used.begin(), used.end(), 0) == 0);
    CHECK(std::is_sorted(p.halo.begin(), p.halo.end()));
    CHECK(std::adjacent_find(p.halo.begin(), p.halo.end()) == p.halo.end());
    std::size_t received = 0;
    for (const relax::HaloList& r : p.receives) {
      CHECK(r.part != p.index);
      received += r.indices.size();
    }
    CHECK(received == p.halo.size());
    for (const relax::HaloList& s : p.sends)
      CHECK(std::count_if(s.indices.begin(), s.indices.end(),
                          [&](std::int64_t i) { return i < 0 || i >= p.rows; }) == 0);
  }
  CHECK(next == a.rows);
  CHECK(nnz == a.nnz());
  if (balance == relax::Balance::rows) {
    const auto [lo, hi] = std::minmax_element(parts.begin(), parts.end(),
                                              [](const auto& x, const auto& y) { return x.rows < y.rows; });
    CHECK(hi->rows - lo->rows <= 1);
  }
  std::vector<double> x(static_cast<std::size_t>(a.rows));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * static_cast<double>(i)) + 1e-3 * static_cast<double>(i);
  std::vector<double> want(x.size());
  a.multiply(x.data(), want.data());
  const std::vector<double> got = partitioned_multiply(parts, x);
  CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(double)) == 0);
}

}  // namespace

TEST_CASE("a partitioned SpMV gathers its halo and equals the global SpMV bit for bit", "[partition][sparse]") {
  for (const auto balance : {relax::Balance::rows, relax::Balance::nonzeros}) {
    for (const auto& name : relax::testing::real_spd_matrices()) {
      const auto a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name);
      for (int k : {1, 2, 3, 4, 7}) check_partition(a, k, balance, name);
    }
    for (std::int64_t n : {1, 2, 5, 97, 1000}) {
      const auto a = random_csr(n, 11 + n, n > 5 ? 7 : 0);
      for (int k : {1, 2, 3, 5})
        if (k <= n) check_partition(a, k, balance, "random " + std::to_string(n));
      check_partition(a, static_cast<int>(n), balance, "random " + std::to_string(n) + ", one row per part");
    }
  }
}

TEST_CASE("balancing by non-zeros evens out the entries of a skewed matrix", "[partition][sparse]") {
  // Rows 0..99 hold 50 entries each, rows 100..999 one each: by rows the first part takes most
  // entries, by non-zeros the parts hold about nnz / k each.
  relax::Csr<double> a;
  a.rows = a.cols = 1000;
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int64_t width = i < 100 ? 50 : 1;
    for (std::int64_t c = 0; c < width; ++c) {
      a.col_idx.push_back(static_cast<std::int32_t>(i < 100 ? c * 20 : i));
      a.values.push_back(1.0);
    }
    a.row_ptr.push_back(a.nnz());
  }
  const auto by_rows = relax::partition(a, 4, relax::Balance::rows);
  const auto by_nnz = relax::partition(a, 4, relax::Balance::nonzeros);
  CHECK(by_rows[0].nnz() == 100 * 50 + 150);
  for (const auto& p : by_nnz) {
    CHECK(p.nnz() >= a.nnz() / 4 - 50);
    CHECK(p.nnz() <= a.nnz() / 4 + 50);
  }
  check_partition(a, 4, relax::Balance::nonzeros, "skewed");
}

TEST_CASE("partitions that cannot be made are refused with a clear message", "[partition][validation]") {
  const auto a = random_csr(10, 3);
  CHECK_THROWS_WITH(relax::partition(a, 0), Catch::Contains("parts = 0"));
  CHECK_THROWS_WITH(relax::partition(a, 11), Catch::Contains("parts = 11") && Catch::Contains("1 to 10 parts"));
  relax::Csr<double> rect = a;
  rect.cols = 12;
  CHECK_THROWS_WITH(relax::partition(rect, 2), Catch::Contains("10 x 12") && Catch::Contains("square"));
  relax::Csr<double> broken = a;
  broken.row_ptr[3] = 1000;
  CHECK_THROWS_AS(relax::partition(broken, 2), relax::invalid_argument);
}

// A part read from the file on its own (rows only) against the part of the whole matrix.
namespace {
void check_same_part(const relax::CsrPart<double>& got, const relax::CsrPart<double>& want) {
  CHECK(got.index == want.index);
  CHECK(got.first_row == want.first_row);
  CHECK(got.rows == want.rows);
  CHECK(got.row_ptr == want.row_ptr);
  CHECK(got.col_idx == want.col_idx);
  CHECK((got.values.size() == want.values.size() &&
         std::memcmp(got.values.data(), want.values.data(), want.values.size() * sizeof(double)) == 0));
  CHECK(got.halo == want.halo);
  auto same_lists = [](const std::vector<relax::HaloList>& x, const std::vector<relax::HaloList>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].part != y[i].part || x[i].indices != y[i].indices) return false;
    return true;
  };
  CHECK(same_lists(got.receives, want.receives));
  CHECK(same_lists(got.sends, want.sends));
}
}  // namespace

TEST_CASE("a part read from the file on its own equals the part of the whole matrix", "[partition][sparse]") {
  std::vector<std::string> files;
  for (const auto& name : relax::testing::real_spd_matrices())
    files.push_back(std::string(RELAX_TEST_DATA_DIR) + "/suitesparse/" + name + ".mtx");
  files.push_back(std::string(RELAX_TEST_DATA_DIR) + "/poisson2d_10.mtx");
  files.push_back(std::string(RELAX_TEST_DATA_DIR) + "/spd_random_40.mtx");
  for (const std::string& path : files) {
    const auto a = relax::read_matrix_market<double>(path);
    for (int k : {1, 2, 3, 4, 7}) {
      const auto whole = relax::partition(a, k, relax::Balance::rows);
      for (int p = 0; p < k; ++p) {
        INFO(path << ", part " << p << " of " << k);
        check_same_part(relax::read_matrix_market_part<double>(path, k, p), whole[static_cast<std::size_t>(p)]);
      }
    }
  }
}

TEST_CASE("reading a part refuses a general file, a part out of range and more parts than rows",
          "[partition][validation]") {
  const std::string general = std::string(RELAX_TEST_DATA_DIR) + "/laplace1d_50_general.mtx";
  CHECK_THROWS_WITH(relax::read_matrix_market_part<double>(general, 2, 0),
                    Catch::Contains("symmetric") && Catch::Contains("partition it"));
  const std::string spd = std::string(RELAX_TEST_DATA_DIR) + "/spd_random_40.mtx";
  CHECK_THROWS_WITH(relax::read_matrix_market_part<double>(spd, 2, 2), Catch::Contains("index = 2"));
  CHECK_THROWS_WITH(relax::read_matrix_market_part<double>(spd, 0, 0), Catch::Contains("parts = 0"));
  CHECK_THROWS_WITH(relax::read_matrix_market_part<double>(spd, 41, 0), Catch::Contains("1 to 40 parts"));
  CHECK_THROWS_WITH(relax::read_matrix_market_part<double>(spd + ".missing", 2, 0), Catch::Contains("path"));
}
