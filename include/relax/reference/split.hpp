#pragma once
//! \file
//! The host emulation of a slab decomposition (`relax/domain/decomposition.hpp`): cut a global
//! grid into the slabs' local grids, exchange their halo rows as a Comm policy would, and put
//! the owned rows back. The multi-sub-domain solvers are checked against it and against the
//! single-domain reference.

#include <relax/domain/decomposition.hpp>
#include <relax/domain/grid.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace relax::reference {

namespace detail {
// Elements of one storage row (2D) or plane (3D) of layout `l`, ring and padding included.
inline std::int64_t line(const GridLayout& l) { return l.rank() == 3 ? l.plane : l.pitch; }

// Copies storage line `from_line` of `from` into storage line `to_line` of `to` (same nx, and
// ny in 3D, so lines have the same length and padding).
template <class T>
void copy_line(const HostGrid<T>& from, std::int64_t from_line, HostGrid<T>& to, std::int64_t to_line) {
  const std::int64_t n = line(from.layout());
  std::copy_n(from.storage().begin() + from_line * n, n, to.storage().begin() + to_line * n);
}
}  // namespace detail

//! The local grid of `slab`: its rows, halo rows and ring as they are in `global`.
template <class T>
HostGrid<T> scatter(const HostGrid<T>& global, const Slab& slab) {
  HostGrid<T> local(slab.template layout<T>());
  const std::int64_t lines = slab.extents.slowest() + 2;
  for (std::int64_t r = 0; r < lines; ++r) detail::copy_line(global, r + slab.origin_row, local, r);
  return local;
}

//! The local grids of every slab of `d`.
template <class T>
std::vector<HostGrid<T>> scatter(const HostGrid<T>& global, const Decomposition& d) {
  std::vector<HostGrid<T>> locals;
  for (int s = 0; s < d.size(); ++s) locals.push_back(scatter(global, d[s]));
  return locals;
}

//! Puts the owned rows of every local grid back into `global`.
template <class T>
void gather(const std::vector<HostGrid<T>>& locals, const Decomposition& d, HostGrid<T>& global) {
  for (int s = 0; s < d.size(); ++s)
    for (std::int64_t g = d[s].owned.first; g < d[s].owned.first + d[s].owned.count; ++g)
      detail::copy_line(locals[static_cast<std::size_t>(s)], d[s].storage_row(g), global, g + 1);
}

//! The halo exchange: every slab's receive rows from its neighbours' current owned rows.
template <class T>
void exchange(std::vector<HostGrid<T>>& locals, const Decomposition& d) {
  for (int s = 0; s < d.size(); ++s) {
    const Slab& me = d[s];
    auto take = [&](const RowRange& rows, int from) {
      for (std::int64_t g = rows.first; g < rows.first + rows.count; ++g)
        detail::copy_line(locals[static_cast<std::size_t>(from)], d[from].storage_row(g),
                          locals[static_cast<std::size_t>(s)], me.storage_row(g));
    };
    if (me.has_prev) take(me.receive_from_prev(), s - 1);
    if (me.has_next) take(me.receive_from_next(), s + 1);
  }
}

}  // namespace relax::reference
