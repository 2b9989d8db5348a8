#pragma once
//! \file
//! A Matrix Market reader: coordinate format, fields real, integer and pattern, symmetry general
//! and symmetric, 1-based indices, comment and blank lines. Duplicate entries are summed.
//! Malformed input raises `relax::parse_error` naming the line and the problem; the reader never
//! reads past what it was given (tests/host/fuzz_matrix_market.cpp mutates valid files at random
//! under AddressSanitizer).

#include <relax/core/error.hpp>
#include <relax/sparse/csr.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace relax {

//! Malformed input: `line()` is the 1-based line of the problem (the last line for a truncated
//! file).
class parse_error : public std::runtime_error {
 public:
  parse_error(const std::string& source, std::int64_t line, const std::string& problem)
      : std::runtime_error("relax: " + source + ":" + std::to_string(line) + ": " + problem),
        line_(line) {}
  std::int64_t line() const noexcept { return line_; }

 private:
  std::int64_t line_;
};

//! Bounds on what a file may declare, checked before anything is allocated for it.
struct MatrixMarketLimits {
  std::int64_t max_dimension = 2147483647;  //!< rows and columns, 1 .. 2^31 − 1 (column indices are 32-bit)
};

namespace detail {

inline std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string field;
  while (in >> field) out.push_back(field);
  return out;
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

inline bool is_skippable(const std::string& line) {
  const auto first = line.find_first_not_of(" \t\r");
  return first == std::string::npos || line[first] == '%';
}

class MatrixMarketParser {
 public:
  MatrixMarketParser(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw parse_error(source_, line_, problem); }

  //! The next line; false at the end of the input.
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++line_;
    return true;
  }
  //! The next line that is not blank or a comment; false at the end of the input.
  bool next_content(std::string& line) {
    while (next(line))
      if (!is_skippable(line)) return true;
    return false;
  }

  std::int64_t integer(const std::string& field, const char* what) const {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(field.c_str(), &end, 10);
    if (end == field.c_str() || *end != '\0') fail(std::string(what) + " '" + field + "' is not an integer");
    if (errno == ERANGE) fail(std::string(what) + " '" + field + "' is out of range");
    return v;
  }

  double real(const std::string& field) const {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(field.c_str(), &end);
    if (end == field.c_str() || *end != '\0') fail("value '" + field + "' is not a number");
    // strtod also sets ERANGE where the value underflows (a subnormal, or 0): those are read as
    // rounded; only what is not finite (written so, or beyond the range of double) is refused.
    if (!std::isfinite(v)) fail("value '" + field + "' is not a finite number in double");
    return v;
  }

  std::int64_t line() const { return line_; }

 private:
  std::istream& in_;
  std::string source_;
  std::int64_t line_ = 0;
};

}  // namespace detail

namespace detail {

//! Reads a Matrix Market coordinate matrix, keeping the rows [lo, hi) that `choose(rows)` returns
//! (as a std::pair, once the size line is read; the whole file is still checked): a Csr of those
//! rows, row 0 being lo, with the matrix's columns (`cols`) and its entries as
//! `read_matrix_market` has them. `symmetric_file` says whether the header says symmetric.
template <class T, class Choose>
Csr<T> read_matrix_market_rows(std::istream& in, const std::string& source, const MatrixMarketLimits& limits,
                               Choose&& choose, bool& symmetric_file) {
  detail::require(limits.max_dimension >= 1 && limits.max_dimension <= 2147483647, "max_dimension",
                  limits.max_dimension, "1 to 2^31 - 1 (column indices are 32-bit)");
  constexpr const char* type = sizeof(T) == sizeof(float) ? "float" : "double";
  MatrixMarketParser p(in, source);
  std::string line;
  if (!p.next(line)) p.fail("empty input: expected a %%MatrixMarket header");
  const auto header = detail::split_fields(line);
  if (header.empty() || detail::lower(header[0]) != "%%matrixmarket")
    p.fail("expected the header '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  if (header.size() != 5) p.fail("the header needs 4 words after %%MatrixMarket");
  const std::string object = detail::lower(header[1]), format = detail::lower(header[2]),
                    field = detail::lower(header[3]), symmetry = detail::lower(header[4]);
  if (object != "matrix") p.fail("unsupported object '" + header[1] + "' (only matrix)");
  if (format != "coordinate") p.fail("unsupported format '" + header[2] + "' (only coordinate)");
  if (field != "real" && field != "double" && field != "integer" && field != "pattern")
    p.fail("unsupported field '" + header[3] + "' (real, integer or pattern)");
  if (symmetry != "general" && symmetry != "symmetric")
    p.fail("unsupported symmetry '" + header[4] + "' (general or symmetric)");
  const bool pattern = field == "pattern", integer = field == "integer";
  const bool symmetric = symmetry == "symmetric";

  if (!p.next_content(line)) p.fail("truncated: expected the size line 'rows cols entries'");
  const auto size = detail::split_fields(line);
  if (size.size() != 3) p.fail("the size line needs 3 integers: rows cols entries");
  Csr<T> a;
  a.rows = p.integer(size[0], "rows");
  a.cols = p.integer(size[1], "columns");
  const std::int64_t declared = p.integer(size[2], "entries");
  if (a.rows < 1 || a.cols < 1) p.fail("rows and columns must be at least 1");
  if (a.rows > limits.max_dimension || a.cols > limits.max_dimension)
    p.fail("dimensions exceed the limit of " + std::to_string(limits.max_dimension));
  if (declared < 0) p.fail("the entry count must not be negative");
  // (No bound of rows · cols on the count: duplicate entries are allowed, and summed.)
  if (symmetric && a.rows != a.cols) p.fail("a symmetric matrix must be square");
  symmetric_file = symmetric;
  const std::pair<std::int64_t, std::int64_t> range = choose(a.rows);
  const std::int64_t lo = std::clamp<std::int64_t>(range.first, 0, a.rows);
  const std::int64_t hi = std::clamp<std::int64_t>(range.second, lo, a.rows);
  const auto keep = [&](std::int64_t row) { return row >= lo && row < hi; };

  struct Entry {
    std::int64_t i, j;
    T v;
  };
  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(std::min<std::int64_t>(declared, 1 << 20)));
  const std::size_t fields = pattern ? 2 : 3;
  std::int64_t seen = 0;
  while (p.next_content(line)) {
    if (seen == declared) p.fail("more entries than the " + std::to_string(declared) + " declared");
    const auto f = detail::split_fields(line);
    if (f.size() != fields)
      p.fail("expected " + std::to_string(fields) + " fields per entry, found " + std::to_string(f.size()));
    const std::int64_t i = p.integer(f[0], "row index"), j = p.integer(f[1], "column index");
    if (i < 1 || i > a.rows) p.fail("row index " + f[0] + " outside 1.." + std::to_string(a.rows));
    if (j < 1 || j > a.cols) p.fail("column index " + f[1] + " outside 1.." + std::to_string(a.cols));
    if (symmetric && i < j)
      p.fail("entry (" + f[0] + ", " + f[1] + ") above the diagonal in a symmetric file");
    const T v = pattern ? T(1) : integer ? static_cast<T>(p.integer(f[2], "value")) : static_cast<T>(p.real(f[2]));
    if (!std::isfinite(static_cast<double>(v))) p.fail("value '" + f[2] + "' is not finite in " + type);
    if (keep(i - 1)) entries.push_back({i - 1 - lo, j - 1, v});
    if (symmetric && i != j && keep(j - 1)) entries.push_back({j - 1 - lo, i - 1, v});
    ++seen;
  }
  if (seen < declared)
    p.fail("truncated: " + std::to_string(seen) + " of " + std::to_string(declared) + " entries");

  a.rows = hi - lo;
  // Rows in order, columns in order within a row, duplicates summed.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& x, const Entry& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; });
  a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  std::int64_t prev_i = -1, prev_j = -1;
  for (const Entry& e : entries) {
    if (e.i == prev_i && e.j == prev_j) {
      a.values.back() += e.v;
      if (!std::isfinite(static_cast<double>(a.values.back())))
        p.fail("the duplicate entries of (" + std::to_string(e.i + lo + 1) + ", " + std::to_string(e.j + 1) +
               ") sum to a value not finite in " + type);
      continue;
    }
    a.col_idx.push_back(static_cast<std::int32_t>(e.j));
    a.values.push_back(e.v);
    ++a.row_ptr[e.i + 1];
    prev_i = e.i;
    prev_j = e.j;
  }
  std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
  return a;
}

}  // namespace detail

//! Reads a Matrix Market coordinate matrix. `source` names the input in error messages.
//! \throws relax::parse_error for malformed input.
template <class T>
Csr<T> read_matrix_market(std::istream& in, const std::string& source = "<stream>",
                          const MatrixMarketLimits& limits = {}) {
  bool symmetric = false;
  return detail::read_matrix_market_rows<T>(
      in, source, limits, [](std::int64_t rows) { return std::pair<std::int64_t, std::int64_t>(0, rows); }, symmetric);
}

//! Reads a Matrix Market file. \throws relax::invalid_argument naming `path` if it cannot be
//! opened, relax::parse_error for malformed content.
template <class T>
Csr<T> read_matrix_market(const std::string& path, const MatrixMarketLimits& limits = {}) {
  std::ifstream in(path);
  if (!in) throw invalid_argument("path", path, "a readable Matrix Market file");
  return read_matrix_market<T>(in, path, limits);
}

//! Writes `a` in coordinate real format; with `symmetric`, only the lower triangle (the caller
//! vouches that `a` is symmetric).
template <class T>
void write_matrix_market(std::ostream& out, const Csr<T>& a, bool symmetric,
                         const std::string& comment = "") {
  out << "%%MatrixMarket matrix coordinate real " << (symmetric ? "symmetric" : "general") << "\n";
  if (!comment.empty()) out << "% " << comment << "\n";
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (!symmetric || a.col_idx[k] <= i) ++count;
  out << a.rows << " " << a.cols << " " << count << "\n";
  out.precision(17);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (!symmetric || a.col_idx[k] <= i)
        out << i + 1 << " " << a.col_idx[k] + 1 << " " << a.values[k] << "\n";
}

}  // namespace relax
