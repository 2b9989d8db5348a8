#pragma once
//! \file
//! Standard and pipelined CG on a matrix split by rows into parts (`relax::partition`): the host
//! model of the CG on several sub-domains (GPUs), host code, no CUDA.
//!
//! Each part multiplies its own rows after gathering its halo from the other parts through the
//! exchange lists: every sender packs the entries its `sends` list names for a reader, and the
//! reader unpacks them into the positions its `receives` list names (the lists a GPU exchange
//! uses). Every dot product is the parts' partial sums, each over the part's rows in order,
//! added in part order: the fixed order that makes a solve repeat bit for bit and gives every
//! part the same scalars, with no floating-point atomics. With one part the solve is
//! `reference::cg` with one thread, bit for bit; with more parts the sums round differently, so
//! the iterates differ in the last bits and the iteration count by a few.

#include <relax/control/cg_report.hpp>
#include <relax/core/error.hpp>
#include <relax/cpu/cg.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/sparse/partition.hpp>

#include <cstdint>
#include <vector>

namespace relax::reference {

namespace detail {

//! Σ over parts in part order of (Σ over the part's rows in order of x·y), in double.
template <class T>
struct PartOrderedDot {
  const std::vector<CsrPart<T>>* parts;
  double operator()(const T* x, const T* y, std::int64_t) const {
    double total = 0.0;
    for (const CsrPart<T>& p : *parts) {
      double partial = 0.0;
      for (std::int64_t k = p.first_row; k < p.first_row + p.rows; ++k)
        partial += static_cast<double>(x[k]) * static_cast<double>(y[k]);
      total += partial;
    }
    return total;
  }
};

//! q = A p part by part: each part's local vector is its owned slice of p and its halo, gathered
//! from the senders' packed lists.
template <class T>
struct SplitMultiply {
  const std::vector<CsrPart<T>>* parts;
  std::vector<std::vector<T>> local;  //!< per part: owned entries, then the halo

  explicit SplitMultiply(const std::vector<CsrPart<T>>& p) : parts(&p), local(p.size()) {
    for (std::size_t i = 0; i < p.size(); ++i) local[i].resize(static_cast<std::size_t>(p[i].columns()));
  }

  void operator()(const T* x, T* y) {
    const std::vector<CsrPart<T>>& ps = *parts;
    for (std::size_t i = 0; i < ps.size(); ++i)
      for (std::int64_t k = 0; k < ps[i].rows; ++k) local[i][static_cast<std::size_t>(k)] = x[ps[i].first_row + k];
    // The exchange: sender q packs, reader p unpacks into the positions of its list from q.
    for (const CsrPart<T>& sender : ps)
      for (const HaloList& send : sender.sends) {
        const CsrPart<T>& reader = ps[static_cast<std::size_t>(send.part)];
        const HaloList* receive = reader.receive_from(sender.index);
        relax::detail::require(receive != nullptr && receive->indices.size() == send.indices.size(),
                               "partition exchange lists", send.part, "a receive list matching every send list");
        for (std::size_t e = 0; e < send.indices.size(); ++e)
          local[static_cast<std::size_t>(reader.index)][static_cast<std::size_t>(receive->indices[e])] =
              x[sender.first_row + send.indices[e]];
      }
    for (std::size_t i = 0; i < ps.size(); ++i) ps[i].multiply(local[i].data(), y + ps[i].first_row);
  }
};

//! Checks the options and the vectors of a split solve; returns the global size.
template <class T>
std::int64_t split_system_size(const std::vector<CsrPart<T>>& parts, const std::vector<T>& b, const std::vector<T>& x,
                               const CgOptions& options) {
  options.validate();
  relax::detail::require(!parts.empty(), "parts", parts.size(), "at least one part");
  const std::int64_t n = parts.back().first_row + parts.back().rows;
  relax::detail::require(static_cast<std::int64_t>(b.size()) == n, "b", b.size(), "one value per row of A");
  relax::detail::require(static_cast<std::int64_t>(x.size()) == n, "x", x.size(), "one value per row of A");
  return n;
}

}  // namespace detail

//! Standard CG on the parts of a split matrix (`relax::partition` of a square symmetric matrix)
//! from the initial guess in `x`: `b` and `x` are global vectors, part p owning its rows' entries.
//! Stops as `CgOptions` says; the report carries the true residual of the returned x.
//! \throws relax::invalid_argument for bad options, no parts, or vectors not one value per row.
template <class T>
CgReport cg_split(const std::vector<CsrPart<T>>& parts, const std::vector<T>& b, std::vector<T>& x,
                  const CgOptions& options) {
  const std::int64_t n = detail::split_system_size(parts, b, x, options);
  detail::SplitMultiply<T> apply(parts);
  const detail::PartOrderedDot<T> dot{&parts};
  detail::CgVectors<T> v(n);
  return detail::solve_checked(
      apply, n, b.data(), x.data(), options,
      [&](const StopCriterion& stop, CgReport& report) {
        return detail::cg_run(apply, n, b.data(), x.data(), options, stop, report, v, 1, dot);
      },
      dot);
}

//! Pipelined CG (the rules of `reference::cg_pipelined`: checkpoints, replacement, the switch to
//! standard CG) on the parts of a split matrix, every dot product in part order. The checkpoint's
//! gap ‖(b − A x) − r‖ is one serial sum, as in `cg_pipelined` (a decision, not a scalar of the
//! recurrences). With one part it is `reference::cg_pipelined` with one thread, bit for bit.
template <class T>
CgReport cg_pipelined_split(const std::vector<CsrPart<T>>& parts, const std::vector<T>& b, std::vector<T>& x,
                            const CgOptions& options) {
  const std::int64_t n = detail::split_system_size(parts, b, x, options);
  detail::SplitMultiply<T> apply(parts);
  const detail::PartOrderedDot<T> dot{&parts};
  detail::CgVectors<T> v(n);
  detail::PipelinedVectors<T> u(n);
  return detail::solve_checked(
      apply, n, b.data(), x.data(), options,
      [&](const StopCriterion& stop, CgReport& report) {
        if (report.restarts > 0 || report.switched_at >= 0)
          return detail::cg_run(apply, n, b.data(), x.data(), options, stop, report, v, 1, dot);
        return detail::cg_pipelined_run(apply, n, b.data(), x.data(), options, stop, report, v, u, 1, dot);
      },
      dot);
}

//! CG on `a` split into `parts` parts: `a` checked as `reference::cg` checks it (square,
//! symmetric within `symmetry`), then `relax::partition(a, parts, balance)` (which refuses more
//! parts than rows).
template <class T>
CgReport cg_split(const Csr<T>& a, int parts, const std::vector<T>& b, std::vector<T>& x, const CgOptions& options,
                  Balance balance = Balance::rows, const CsrSymmetry& symmetry = {}) {
  require_square_symmetric(a, "A", symmetry);
  return cg_split(partition(a, parts, balance), b, x, options);
}

}  // namespace relax::reference

namespace relax::reference {
//! Pipelined CG on `a` split into `parts` parts, `a` checked as for `cg_split`.
template <class T>
CgReport cg_pipelined_split(const Csr<T>& a, int parts, const std::vector<T>& b, std::vector<T>& x,
                            const CgOptions& options, Balance balance = Balance::rows,
                            const CsrSymmetry& symmetry = {}) {
  require_square_symmetric(a, "A", symmetry);
  return cg_pipelined_split(partition(a, parts, balance), b, x, options);
}
}  // namespace relax::reference
