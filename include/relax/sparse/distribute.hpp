#pragma once
//! \file
//! How a process gets its part of a Matrix Market matrix split by rows (host code, no CUDA):
//! read the whole file and `partition` it (every process, or one that sends the parts out), or
//! read only its own rows (`read_matrix_market_part`), which needs memory for those rows alone.
//!
//! A part read on its own equals `partition(read_matrix_market(path), parts, Balance::rows)[index]`
//! entry for entry, exchange lists included: its receive lists come from its own rows' columns,
//! and its send lists too, by symmetry (part q reads my x entry c exactly when my row c has a
//! column in q), so the file must be `symmetric` (every file CG reads as SPD can be written so).

#include <relax/core/error.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/sparse/matrix_market.hpp>
#include <relax/sparse/partition.hpp>

#include <cstdint>
#include <fstream>
#include <istream>
#include <string>
#include <utility>
#include <vector>

namespace relax {

//! Part `index` of `parts` (balanced by rows) of the symmetric Matrix Market matrix in `in`,
//! reading only its rows (the whole file is still checked).
//! \throws relax::parse_error for malformed content; relax::invalid_argument naming `parts` or
//!         `index` (out of range, more parts than rows) or the file's symmetry (not symmetric).
template <class T>
CsrPart<T> read_matrix_market_part(std::istream& in, int parts, int index, const std::string& source = "<stream>",
                                   const MatrixMarketLimits& limits = {}) {
  detail::require(parts >= 1, "parts", parts, "at least 1");
  detail::require(index >= 0 && index < parts, "index", index, "a part from 0 to parts - 1");
  std::vector<std::int64_t> first;
  bool symmetric = false;
  const Csr<T> rows = detail::read_matrix_market_rows<T>(
      in, source, limits,
      [&](std::int64_t n) {
        detail::require(parts <= n, "parts", parts, ("1 to " + std::to_string(n) + " parts (one row each at most)").c_str());
        first = detail::part_boundaries<T>(n, nullptr, parts, Balance::rows);
        return std::pair<std::int64_t, std::int64_t>(first[static_cast<std::size_t>(index)],
                                                     first[static_cast<std::size_t>(index) + 1]);
      },
      symmetric);
  if (!symmetric)
    throw invalid_argument("Matrix Market symmetry of " + source, "general",
                           "symmetric (a part derives what it sends from its own rows); read the whole matrix "
                           "and partition it instead");
  CsrPart<T> part = detail::part_from_rows(index, first, rows);
  // Sends: part q reads owned entry c when row c has a column in q's rows; ascending c per q is
  // q's receive order (its halo is ascending).
  for (std::int64_t i = 0; i < part.rows; ++i)
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      const std::int64_t c = rows.col_idx[k];
      if (c >= part.first_row && c < part.first_row + part.rows) continue;
      const int q = detail::owner_of(first, c);
      auto at = std::lower_bound(part.sends.begin(), part.sends.end(), q,
                                 [](const HaloList& h, int p) { return h.part < p; });
      if (at == part.sends.end() || at->part != q) at = part.sends.insert(at, HaloList{q, {}});
      if (at->indices.empty() || at->indices.back() != i) at->indices.push_back(i);
    }
  return part;
}

//! Part `index` of `parts` of the symmetric Matrix Market file at `path`, its rows only.
//! \throws relax::invalid_argument naming `path` if it cannot be opened; as above otherwise.
template <class T>
CsrPart<T> read_matrix_market_part(const std::string& path, int parts, int index, const MatrixMarketLimits& limits = {}) {
  std::ifstream in(path);
  if (!in) throw invalid_argument("path", path, "a readable Matrix Market file");
  return read_matrix_market_part<T>(in, parts, index, path, limits);
}

}  // namespace relax
