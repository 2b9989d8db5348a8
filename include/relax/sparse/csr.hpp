#pragma once
//! \file
//! `Csr<T>`: a sparse matrix in compressed sparse row form, in host memory. Row offsets are 64-bit
//! (more than 2³¹ entries work); column indices are 32-bit, halving their traffic in SpMV.

#include <relax/core/error.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace relax {

template <class T>
struct Csr {
  using value_type = T;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> row_ptr;   //!< rows + 1 offsets into col_idx and values
  std::vector<std::int32_t> col_idx;   //!< sorted within each row, no duplicates
  std::vector<T> values;

  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }

  //! y = A x on the host (the reference backend's SpMV); `threads` > 1 runs it with OpenMP.
  void multiply(const T* x, T* y, int threads = 1) const {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (std::int64_t i = 0; i < rows; ++i) {
      T sum = T(0);
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += values[k] * x[col_idx[k]];
      y[i] = sum;
    }
  }

  //! Throws `relax::invalid_argument` naming the first broken invariant.
  void validate() const {
    detail::require(rows >= 0 && cols >= 0, "matrix shape", rows, "non-negative dimensions");
    detail::require(row_ptr.size() == static_cast<std::size_t>(rows) + 1, "row_ptr",
                    row_ptr.size(), "rows + 1 offsets");
    detail::require(row_ptr.front() == 0 && row_ptr.back() == nnz(), "row_ptr", row_ptr.back(),
                    "offsets from 0 to the number of entries");
    detail::require(col_idx.size() == values.size(), "col_idx", col_idx.size(),
                    "one column index per value");
    for (std::int64_t i = 0; i < rows; ++i) {
      detail::require(row_ptr[i] <= row_ptr[i + 1], "row_ptr", i, "non-decreasing offsets");
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        detail::require(col_idx[k] >= 0 && col_idx[k] < cols, "col_idx", col_idx[k],
                        "a column index below the column count");
        detail::require(k == row_ptr[i] || col_idx[k - 1] < col_idx[k], "col_idx", col_idx[k],
                        "strictly increasing columns within a row");
      }
    }
  }

  //! The entry (i, j), 0 if it is not stored.
  T at(std::int64_t i, std::int64_t j) const {
    for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (col_idx[k] == j) return values[k];
    return T(0);
  }
};

//! Throws `relax::invalid_argument` naming `what` unless the matrix is square and symmetric
//! (A(i, j) == A(j, i) for every stored entry), as CG requires.
template <class T>
void require_square_symmetric(const Csr<T>& a, const std::string& what) {
  if (a.rows != a.cols)
    throw invalid_argument(what, std::to_string(a.rows) + " x " + std::to_string(a.cols),
                           "a square matrix");
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.at(a.col_idx[k], i) != a.values[k])
        throw invalid_argument(what,
                               "a matrix with A(" + std::to_string(i + 1) + ", " +
                                   std::to_string(a.col_idx[k] + 1) + ") != A(" +
                                   std::to_string(a.col_idx[k] + 1) + ", " + std::to_string(i + 1) + ")",
                               "a symmetric matrix (1-based indices)");
}

}  // namespace relax
