#pragma once
// Test matrices of the CG tests: an ill-conditioned SPD matrix, and the true residual of a
// solution.

#include <relax/sparse/csr.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace relax::testing {

// The 5-point Laplacian on m × m unknowns scaled as D P D, D = diag(10^(spread · k / (n − 1))):
// symmetric positive definite with a condition number about 10^(2 spread) times P's.
inline relax::Csr<double> scaled_poisson(std::int64_t m, double spread) {
  const std::int64_t n = m * m;
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  auto d = [&](std::int64_t k) { return std::pow(10.0, spread * double(k) / double(n - 1)); };
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t k = i * m + j;
      auto put = [&](std::int64_t c, double v) {
        a.col_idx.push_back(static_cast<std::int32_t>(c));
        a.values.push_back(v * (d(k) * d(c)));  // symmetric bit for bit
      };
      if (i > 0) put(k - m, -1.0);
      if (j > 0) put(k - 1, -1.0);
      put(k, 4.0);
      if (j + 1 < m) put(k + 1, -1.0);
      if (i + 1 < m) put(k + m, -1.0);
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
    }
  return a;
}

// ‖b − A x‖₂ / ‖b‖₂ computed on the host in double.
inline double true_residual(const relax::Csr<double>& a, const std::vector<double>& b, const std::vector<double>& x) {
  std::vector<double> ax(b.size());
  a.multiply(x.data(), ax.data());
  double r = 0, s = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    r += (b[k] - ax[k]) * (b[k] - ax[k]);
    s += b[k] * b[k];
  }
  return std::sqrt(r / s);
}

// A banded SPD matrix with 2 · band + 1 entries per row (most rows): A_ij = 1 / (1 + |i − j|)
// within the band, and n on the diagonal (strictly diagonally dominant). Long rows: the SpMV
// takes a warp per row.
inline relax::Csr<double> dense_spd(std::int64_t n, std::int64_t band = 20) {
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = std::max<std::int64_t>(0, i - band); j <= std::min<std::int64_t>(n - 1, i + band); ++j) {
      a.col_idx.push_back(static_cast<std::int32_t>(j));
      a.values.push_back(i == j ? static_cast<double>(n) : 1.0 / static_cast<double>(1 + (i > j ? i - j : j - i)));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

// The iteration counts of CG on k parts may differ from one part's by rounding (the dot products
// add the parts' partials in part order): at most this many (5%, or 3). Measured on the real
// matrices at k = 2, 3 (reference backend): at most 3.2% (nos7, condition 2.4e9: 4557 and 4725
// against 4706), most within 1%.
inline std::int64_t split_iteration_bound(std::int64_t single) { return std::max<std::int64_t>(3, single / 20); }

}  // namespace relax::testing
