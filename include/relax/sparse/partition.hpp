#pragma once
//! \file
//! A square CSR matrix split by rows into k parts, for several sub-domains: host code, no CUDA.
//!
//! Part p owns the contiguous rows [first_row, first_row + rows) and the same entries of x. Its
//! local matrix has the same entries in the same order as those rows of the global matrix, with
//! columns renumbered into its local x: owned columns first (global column first_row + c is
//! local c), then its halo, the other parts' x entries that its rows read, each once, in
//! increasing global order (so grouped by the part that owns them). The exchange lists are
//! computed once: `receives` says which local halo positions come from which part, and the
//! sending part's `sends` entry for p lists its owned local indices in the same order. An SpMV
//! then gathers exactly the x entries it needs from each neighbour, and y equals the global
//! SpMV bit for bit (each row sums the same products in the same order).

#include <relax/core/error.hpp>
#include <relax/sparse/csr.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace relax {

//! How `partition` places the part boundaries.
enum class Balance {
  rows,      //!< part sizes differ by at most one row
  nonzeros,  //!< each part holds about nnz / k entries (every part at least one row)
};

//! One part's exchange with another part: local indices of x, in the order both sides agree on.
struct HaloList {
  int part = 0;                        //!< the other part
  std::vector<std::int64_t> indices;   //!< receive: local halo positions; send: owned local indices
};

template <class T>
struct CsrPart {
  int index = 0;
  std::int64_t first_row = 0;  //!< first global row (and x entry) it owns
  std::int64_t rows = 0;       //!< rows it owns
  // The local matrix: `rows` rows over rows + halo.size() local columns, entries in the global
  // rows' order (local columns are therefore not sorted within a row).
  std::vector<std::int64_t> row_ptr;
  std::vector<std::int64_t> col_idx;
  std::vector<T> values;
  std::vector<std::int64_t> halo;   //!< global column of local column rows + h
  std::vector<HaloList> receives;   //!< per part it reads from, ascending part
  std::vector<HaloList> sends;      //!< per part that reads from it, ascending part

  std::int64_t columns() const { return rows + static_cast<std::int64_t>(halo.size()); }
  //! Its receive list from part `sender` (null if it reads nothing of that part).
  const HaloList* receive_from(int sender) const {
    for (const HaloList& r : receives)
      if (r.part == sender) return &r;
    return nullptr;
  }
  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
  //! y = A_local x on the host, `x` the local vector (owned entries, then the halo); the same
  //! products in the same order as `Csr<T>::multiply`.
  void multiply(const T* x, T* y) const {
    for (std::int64_t i = 0; i < rows; ++i) {
      T sum = T(0);
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += values[k] * x[col_idx[k]];
      y[i] = sum;
    }
  }
};

namespace detail {
// The first row of each part, and the end: parts + 1 boundaries (Balance::rows needs only the
// row count; `a` may then be null).
template <class T>
std::vector<std::int64_t> part_boundaries(std::int64_t rows, const Csr<T>* a, int parts, Balance balance) {
  std::vector<std::int64_t> first(static_cast<std::size_t>(parts) + 1, rows);
  first[0] = 0;
  for (int p = 1; p < parts; ++p) {
    std::int64_t b = 0;
    if (balance == Balance::rows) {
      b = p * (rows / parts) + std::min<std::int64_t>(p, rows % parts);
    } else {
      const Csr<T>& m = *a;  // the first row whose entries start at or past p · nnz / k
      const std::int64_t target = m.nnz() * p / parts;
      b = std::lower_bound(m.row_ptr.begin(), m.row_ptr.end(), target) - m.row_ptr.begin();
    }
    // Every part keeps at least one row: after the previous part's first, and room for the rest.
    first[static_cast<std::size_t>(p)] =
        std::clamp<std::int64_t>(b, first[static_cast<std::size_t>(p) - 1] + 1, rows - (parts - p));
  }
  return first;
}

// The part that owns global column (and row) `column`.
inline int owner_of(const std::vector<std::int64_t>& first, std::int64_t column) {
  return static_cast<int>(std::upper_bound(first.begin(), first.end() - 1, column) - first.begin()) - 1;
}

// Part `index` from its own rows (`rows`: row 0 is global row first[index], global columns): the
// local matrix, the halo and the receive lists; the send lists are left to the caller.
template <class T>
CsrPart<T> part_from_rows(int index, const std::vector<std::int64_t>& first, const Csr<T>& rows) {
  CsrPart<T> part;
  part.index = index;
  part.first_row = first[static_cast<std::size_t>(index)];
  part.rows = first[static_cast<std::size_t>(index) + 1] - part.first_row;
  const std::int64_t lo = part.first_row, hi = part.first_row + part.rows;
  // The halo: every column outside [lo, hi) that the owned rows read, once, ascending.
  for (const std::int64_t c : rows.col_idx)
    if (c < lo || c >= hi) part.halo.push_back(c);
  std::sort(part.halo.begin(), part.halo.end());
  part.halo.erase(std::unique(part.halo.begin(), part.halo.end()), part.halo.end());
  // The local matrix, entries in the global order.
  part.row_ptr.assign(static_cast<std::size_t>(part.rows) + 1, 0);
  for (std::int64_t i = 0; i < part.rows; ++i) {
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      const std::int64_t c = rows.col_idx[k];
      const std::int64_t local =
          c >= lo && c < hi ? c - lo
                            : part.rows + (std::lower_bound(part.halo.begin(), part.halo.end(), c) - part.halo.begin());
      part.col_idx.push_back(local);
      part.values.push_back(rows.values[k]);
    }
    part.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(part.values.size());
  }
  // Receives, grouped by owner (the halo is ascending, so each owner's columns are one run).
  for (std::size_t h = 0; h < part.halo.size(); ++h) {
    const int q = owner_of(first, part.halo[h]);
    if (part.receives.empty() || part.receives.back().part != q) part.receives.push_back({q, {}});
    part.receives.back().indices.push_back(part.rows + static_cast<std::int64_t>(h));
  }
  return part;
}

// Rows lo .. hi − 1 of `a` as a Csr of their own (row 0 is lo, global columns).
template <class T>
Csr<T> rows_of(const Csr<T>& a, std::int64_t lo, std::int64_t hi) {
  Csr<T> r;
  r.rows = hi - lo;
  r.cols = a.cols;
  r.row_ptr.reserve(static_cast<std::size_t>(r.rows) + 1);
  for (std::int64_t i = lo; i <= hi; ++i) r.row_ptr.push_back(a.row_ptr[i] - a.row_ptr[lo]);
  r.col_idx.assign(a.col_idx.begin() + a.row_ptr[lo], a.col_idx.begin() + a.row_ptr[hi]);
  r.values.assign(a.values.begin() + a.row_ptr[lo], a.values.begin() + a.row_ptr[hi]);
  return r;
}
}  // namespace detail

//! Splits the square matrix `a` into `parts` parts by rows.
//! \throws relax::invalid_argument naming `matrix shape` (not square) or `parts` (< 1, or more
//!         parts than rows); the matrix itself is checked first (`Csr::validate`).
template <class T>
std::vector<CsrPart<T>> partition(const Csr<T>& a, int parts, Balance balance = Balance::rows) {
  a.validate();
  detail::require(a.rows == a.cols, "matrix shape", std::to_string(a.rows) + " x " + std::to_string(a.cols),
                  "a square matrix (x and y are split alike)");
  detail::require(parts >= 1 && parts <= std::max<std::int64_t>(a.rows, 1), "parts", parts,
                  ("1 to " + std::to_string(std::max<std::int64_t>(a.rows, 1)) + " parts (one row each at most)").c_str());
  const std::vector<std::int64_t> first = detail::part_boundaries(a.rows, &a, parts, balance);
  std::vector<CsrPart<T>> out;
  for (int p = 0; p < parts; ++p)
    out.push_back(detail::part_from_rows(p, first, detail::rows_of(a, first[static_cast<std::size_t>(p)],
                                                                    first[static_cast<std::size_t>(p) + 1])));
  // Sends mirror the receives: part q sends p the owned entries p's halo lists, in p's order.
  for (int p = 0; p < parts; ++p) {
    const CsrPart<T>& reader = out[static_cast<std::size_t>(p)];
    for (const HaloList& r : reader.receives) {
      CsrPart<T>& sender = out[static_cast<std::size_t>(r.part)];
      HaloList s{p, {}};
      for (const std::int64_t position : r.indices)
        s.indices.push_back(reader.halo[static_cast<std::size_t>(position - reader.rows)] - sender.first_row);
      sender.sends.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace relax
