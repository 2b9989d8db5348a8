#pragma once
//! \file
//! The reference: host implementations, serial and OpenMP, of the Jacobi sweep, the residual
//! norm and the right-hand side's norm. The reference backend's solves drive them (cpu/jacobi.hpp:
//! one linear solve; cpu/diffusion.hpp: a run of implicit diffusion steps).
//!
//! They compute in the stencil's own `RELAX_HOST_DEVICE` functions, so a GPU strategy and this
//! backend produce the same bits for the same schedule; every point of a sweep and of a max-norm
//! is independent of the order of evaluation, so the OpenMP versions equal the serial ones too.

#include <relax/core/arith.hpp>
#include <relax/domain/grid.hpp>
#include <relax/domain/shape.hpp>
#include <relax/stencil/traits.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace relax::reference {

//! How the reference backend runs: `threads == 1` is serial, `threads == 0` uses every OpenMP
//! thread, `threads > 1` that many. Without OpenMP every setting runs serially.
struct Exec {
  int threads = 1;
  static Exec serial() { return {1}; }
  static Exec openmp(int threads = 0) { return {threads}; }
  //! \throws relax::invalid_argument naming `threads` if it is negative.
  int resolved_threads() const {
    relax::detail::require(threads >= 0, "threads", threads, "0 (every OpenMP thread), 1 (serial) or more");
#if defined(_OPENMP)
    return threads > 0 ? threads : omp_get_max_threads();
#else
    return 1;
#endif
  }
};

namespace detail {
//! Calls `row(k, i)` for every interior row (k = 0 in 2D), in parallel over rows.
template <int Rank, class Row>
void for_each_row(const relax::detail::Shape& g, Exec exec, Row&& row) {
  const std::int64_t rows = g.ny * (Rank == 3 ? g.nz : 1);
  const int threads = exec.resolved_threads();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::int64_t r = 0; r < rows; ++r)
    row(Rank == 3 ? r / g.ny + 1 : 0, r % g.ny + 1);
}

//! Throws unless the grids of a system have the layout of `u` (and its global origin, where a
//! stencil reads coefficients by global index), a one-cell ring (what `Shape` addresses: a wider
//! ring would put the sweep on ring cells), and the stencil's rank.
template <class S, class T>
void require_system(const HostGrid<T>& u, const HostGrid<T>& b, const char* what_b) {
  relax::detail::require_layout(b.layout(), u.layout(), what_b);
  relax::detail::require_swept_grid(u.layout(), S::rank, "u");
  const Point a = u.layout().origin, o = b.layout().origin;
  if (a.x != o.x || a.y != o.y || a.z != o.z)
    throw invalid_argument(what_b, "a grid at another global origin", "the global origin of u");
}

//! Throws naming `what` if `a` and `b` are the same grid: a sweep reading the grid it writes
//! would run Gauss–Seidel, not Jacobi.
template <class T>
void require_distinct(const HostGrid<T>& a, const HostGrid<T>& b, const char* what, const char* other) {
  if (&a == &b) throw invalid_argument(what, std::string("the same grid as ") + other, "a grid of its own");
}

//! The address of point (0, 0[, 0]) of a host grid, what `Shape` offsets count from.
template <class T>
T* origin(HostGrid<T>& g) { return g.storage().data() + g.layout().lead; }
template <class T>
const T* origin(const HostGrid<T>& g) { return g.storage().data() + g.layout().lead; }
}  // namespace detail

//! One Jacobi sweep of the interior: out = update(u). The ring of `out` is not touched.
template <class S, class T = typename S::value_type>
void sweep(const S& s, const HostGrid<T>& u, HostGrid<T>& out, const HostGrid<T>& b, Exec exec = {}) {
  static_assert(is_stencil_v<S>, "relax::reference::sweep: S is not a stencil (see is_stencil_v)");
  relax::detail::require_layout(out.layout(), u.layout(), "out");
  detail::require_system<S>(u, b, "b");
  detail::require_distinct(out, u, "out", "u");
  detail::require_distinct(out, b, "out", "b");
  const relax::detail::Shape g = relax::detail::shape_of(u.layout());
  const T* pu = detail::origin(u);
  const T* pb = detail::origin(b);
  T* po = detail::origin(out);
  detail::for_each_row<S::rank>(g, exec, [&](std::int64_t k, std::int64_t i) {
    for (std::int64_t j = 1; j <= g.nx; ++j) {
      const std::int64_t at = g.at(k, i, j);
      po[at] = s.update(relax::detail::gather<S::rank>(pu, at, g), g.point<S::rank>(k, i, j), pb[at]);
    }
  });
}

namespace detail {
//! max over interior points of |s.residual(u, at, b)|, where `nbrs(k, i, j, at)` supplies the
//! neighbourhood of point (k, i, j) at offset `at`.
template <class S, class T, class Nbrs>
T residual_max(const S& s, const HostGrid<T>& b, Nbrs nbrs, Exec exec) {
  const relax::detail::Shape g = relax::detail::shape_of(b.layout());
  const T* pb = origin(b);
  const std::int64_t rows = g.ny * (S::rank == 3 ? g.nz : 1);
  const int threads = exec.resolved_threads();
  arith::bits_t<T> best = 0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) reduction(max : best)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t k = S::rank == 3 ? r / g.ny + 1 : 0, i = r % g.ny + 1;
    for (std::int64_t j = 1; j <= g.nx; ++j) {
      const std::int64_t at = g.at(k, i, j);
      const T res = s.residual(nbrs(k, i, j, at), g.point<S::rank>(k, i, j), pb[at]);
      best = std::max(best, arith::abs_bits(res));
    }
  }
  return arith::from_bits<T>(best);
}
}  // namespace detail

//! ‖b − A u‖∞ over the interior, in the stencil's difference form.
template <class S, class T = typename S::value_type>
T residual_norm(const S& s, const HostGrid<T>& u, const HostGrid<T>& b, Exec exec = {}) {
  detail::require_system<S>(u, b, "b");
  const relax::detail::Shape g = relax::detail::shape_of(u.layout());
  const T* pu = detail::origin(u);
  return detail::residual_max(
      s, b, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t at) {
        return relax::detail::gather<S::rank>(pu, at, g);
      }, exec);
}

//! ‖b‖∞ of the interior system: b plus the boundary values that A couples in from the ring of
//! `u`, i.e. the residual of a zero interior.
template <class S, class T = typename S::value_type>
T rhs_norm(const S& s, const HostGrid<T>& u, const HostGrid<T>& b, Exec exec = {}) {
  detail::require_system<S>(u, b, "b");
  const relax::detail::Shape g = relax::detail::shape_of(u.layout());
  const T* pu = detail::origin(u);
  auto ring = [&](std::int64_t k, std::int64_t i, std::int64_t j) {
    const bool edge = i == 0 || j == 0 || i == g.ny + 1 || j == g.nx + 1 ||
                      (S::rank == 3 && (k == 0 || k == g.nz + 1));
    return edge ? pu[g.at(k, i, j)] : T(0);
  };
  return detail::residual_max(
      s, b,
      [&](std::int64_t k, std::int64_t i, std::int64_t j, std::int64_t) {
        if constexpr (S::rank == 2) {
          return Neighbours<T, 2>{T(0), ring(k, i - 1, j), ring(k, i + 1, j), ring(k, i, j + 1), ring(k, i, j - 1)};
        } else {
          return Neighbours<T, 3>{T(0), ring(k, i - 1, j), ring(k, i + 1, j), ring(k, i, j + 1),
                                  ring(k, i, j - 1), ring(k - 1, i, j), ring(k + 1, i, j)};
        }
      },
      exec);
}

//! out = x + y over the whole allocation (the fused right-hand side b = uⁿ + Δt f).
template <class T>
void add(const HostGrid<T>& x, const HostGrid<T>& y, HostGrid<T>& out) {
  relax::detail::require_layout(y.layout(), x.layout(), "y");
  relax::detail::require_layout(out.layout(), x.layout(), "out");
  const auto& xs = x.storage();
  const auto& ys = y.storage();
  auto& os = out.storage();
  for (std::size_t k = 0; k < xs.size(); ++k) os[k] = arith::add(xs[k], ys[k]);
}

//! The schedule of `relax::Sync`: plain synchronous sweeps.
struct SyncSchedule {
  static constexpr bool exact = true;
};

//! `count` synchronous sweeps; the iterate ends in `u`, `scratch` is the second buffer.
template <class S, class T>
void sweeps(const S& s, HostGrid<T>& u, HostGrid<T>& scratch, const HostGrid<T>& b,
            const SyncSchedule&, std::int64_t count, Exec exec = {}) {
  for (std::int64_t k = 0; k < count; ++k) {
    sweep(s, u, scratch, b, exec);
    std::swap(u, scratch);
  }
}

}  // namespace relax::reference
