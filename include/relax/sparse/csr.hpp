#pragma once
//! \file
//! `Csr<T>`: a sparse matrix in compressed sparse row form, in host memory. Row offsets are 64-bit
//! (more than 2³¹ entries work); column indices are 32-bit, halving their traffic in SpMV.

#include <relax/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
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

  //! Checks every invariant of the form before anything indexes with it: rows + 1 offsets from 0
  //! to nnz(), non-decreasing; one column index per value; columns in [0, cols) and strictly
  //! increasing within a row; finite values. \throws relax::invalid_argument naming the first
  //! broken invariant, with its row and entry (0-based, as stored).
  void validate() const {
    detail::require(rows >= 0 && cols >= 0, "matrix shape", std::to_string(rows) + " x " + std::to_string(cols),
                    "non-negative dimensions");
    detail::require(row_ptr.size() == static_cast<std::size_t>(rows) + 1, "row_ptr.size()", row_ptr.size(),
                    ("rows + 1 = " + std::to_string(rows + 1) + " offsets").c_str());
    detail::require(col_idx.size() == values.size(), "col_idx.size()", col_idx.size(),
                    ("one column index per value (" + std::to_string(values.size()) + ")").c_str());
    detail::require(row_ptr.front() == 0, "row_ptr[0]", row_ptr.front(), "0");
    detail::require(row_ptr.back() == nnz(), ("row_ptr[" + std::to_string(rows) + "]").c_str(), row_ptr.back(),
                    ("the number of entries, " + std::to_string(nnz())).c_str());
    for (std::int64_t i = 0; i < rows; ++i) {
      if (row_ptr[i + 1] < row_ptr[i] || row_ptr[i + 1] > nnz())
        throw invalid_argument("row_ptr[" + std::to_string(i + 1) + "] (end of row " + std::to_string(i) + ")",
                               std::to_string(row_ptr[i + 1]),
                               "an offset in [row_ptr[" + std::to_string(i) + "] = " + std::to_string(row_ptr[i]) +
                                   ", " + std::to_string(nnz()) + "]");
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) validate_entry(i, k);
    }
  }

  //! The entry (i, j), 0 if it is not stored; a binary search of row i, so the matrix must hold
  //! its invariants (`validate`).
  T at(std::int64_t i, std::int64_t j) const {
    const auto first = col_idx.begin() + row_ptr[i], last = col_idx.begin() + row_ptr[i + 1];
    const auto it = std::lower_bound(first, last, j);
    return it != last && *it == j ? values[static_cast<std::size_t>(it - col_idx.begin())] : T(0);
  }

 private:
  void validate_entry(std::int64_t i, std::int64_t k) const {
    auto where = [&] { return "col_idx[" + std::to_string(k) + "] (row " + std::to_string(i) + ")"; };
    if (col_idx[k] < 0 || col_idx[k] >= cols)
      throw invalid_argument(where(), std::to_string(col_idx[k]),
                             "a column index in [0, " + std::to_string(cols) + ")");
    if (k > row_ptr[i] && col_idx[k - 1] >= col_idx[k])
      throw invalid_argument(where(), std::to_string(col_idx[k]),
                             "a column above the previous entry's " + std::to_string(col_idx[k - 1]) +
                                 " (strictly increasing within a row, no duplicates)");
    if (!std::isfinite(static_cast<double>(values[k])))
      throw invalid_argument("values[" + std::to_string(k) + "] (row " + std::to_string(i) + ", column " +
                                 std::to_string(col_idx[k]) + ")",
                             detail::to_text(values[k]), "a finite value");
  }
};

//! How closely CG's symmetry check wants A(i, j) and A(j, i) to agree. A file written as
//! `general` by a program that computed both triangles may differ in the last bits:
//!
//!     |A(i, j) − A(j, i)| ≤ rel_tol · max(|A(i, j)|, |A(j, i)|)   for every stored entry,
//!
//! with an entry that is not stored counting as 0 (so a one-sided entry fails for rel_tol < 1).
//! With `symmetrise`, an accepted matrix is replaced by its symmetric part (A + Aᵀ) / 2, the
//! operator CG then solves with; otherwise it is used as given.
struct CsrSymmetry {
  double rel_tol = 0.0;     //!< 0: exact symmetry, bit for bit
  bool symmetrise = false;  //!< solve with (A + Aᵀ) / 2 instead of A

  //! \throws relax::invalid_argument unless 0 <= rel_tol < 1 (finite).
  void validate() const {
    detail::require(std::isfinite(rel_tol) && rel_tol >= 0.0 && rel_tol < 1.0, "CsrSymmetry::rel_tol", rel_tol,
                    "a relative tolerance in [0, 1)");
  }
};

//! Checks the CSR invariants (`Csr::validate`), then that the matrix is square and symmetric
//! within `symmetry.rel_tol`, as CG requires. \throws relax::invalid_argument naming `what`, the
//! first pair of entries that differ, and how to accept a matrix symmetric to rounding.
template <class T>
void require_square_symmetric(const Csr<T>& a, const std::string& what, const CsrSymmetry& symmetry = {}) {
  symmetry.validate();
  a.validate();
  if (a.rows != a.cols)
    throw invalid_argument(what, std::to_string(a.rows) + " x " + std::to_string(a.cols), "a square matrix");
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t j = a.col_idx[k];
      const double aij = static_cast<double>(a.values[k]), aji = static_cast<double>(a.at(j, i));
      const double gap = std::abs(aij - aji);
      if (gap == 0.0 || gap <= symmetry.rel_tol * std::max(std::abs(aij), std::abs(aji))) continue;
      std::ostringstream value;
      value.precision(17);
      value << "a matrix with A(" << i + 1 << ", " << j + 1 << ") = " << aij << " != A(" << j + 1 << ", "
            << i + 1 << ") = " << aji << " (relative difference "
            << gap / std::max(std::abs(aij), std::abs(aji)) << ")";
      throw invalid_argument(what, value.str(),
                             "a symmetric matrix (1-based indices) within CsrSymmetry::rel_tol = " +
                                 detail::to_text(symmetry.rel_tol) +
                                 "; for a matrix symmetric to rounding pass relax::CsrSymmetry{1e-12} (or a "
                                 "tolerance above the relative difference), and symmetrise = true to solve "
                                 "with (A + A^T) / 2");
    }
}

//! The symmetric part (A + Aᵀ) / 2 of a square matrix with valid invariants, on the union of the
//! patterns of A and Aᵀ; exactly symmetric bit for bit.
template <class T>
Csr<T> symmetric_part(const Csr<T>& a) {
  a.validate();
  detail::require(a.rows == a.cols, "A", std::to_string(a.rows) + " x " + std::to_string(a.cols), "a square matrix");
  // Every stored a_ij puts a_ij / 2 at (i, j) and at (j, i), so (i, j) and (j, i) each sum the
  // same two halves and get the same bits. (Halving is exact but for subnormal values, which it
  // rounds: there the part differs from (A + Aᵀ) / 2 by a subnormal.)
  std::vector<std::vector<std::pair<std::int32_t, T>>> rows(static_cast<std::size_t>(a.rows));
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const T half = a.values[k] / T(2);
      rows[i].emplace_back(a.col_idx[k], half);
      rows[a.col_idx[k]].emplace_back(static_cast<std::int32_t>(i), half);
    }
  Csr<T> s;
  s.rows = s.cols = a.rows;
  s.row_ptr.push_back(0);
  for (auto& row : rows) {
    std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (k > 0 && row[k].first == row[k - 1].first) {
        s.values.back() += row[k].second;
        continue;
      }
      s.col_idx.push_back(row[k].first);
      s.values.push_back(row[k].second);
    }
    s.row_ptr.push_back(static_cast<std::int64_t>(s.col_idx.size()));
  }
  return s;
}

}  // namespace relax
