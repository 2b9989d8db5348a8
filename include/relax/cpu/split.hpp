#pragma once
//! \file
//! The host emulation of a slab decomposition (`relax/domain/decomposition.hpp`): cut a global
//! grid into the slabs' local grids, exchange their halo rows as a Comm policy would, put the
//! owned rows back, and a whole solve on the slabs (`solve_split`) with the contract the
//! multi-sub-domain solvers keep: rounds of sweeps between exchanges (H synchronous sweeps, H
//! the halo; or one launch of a tiled schedule), an exchange before every check, ρ from the
//! owned rows of every slab (a max, so the order of the slabs does not matter), the
//! single-domain stop decision. With synchronous sweeps, or an exact tiled schedule of depth at
//! most H, it equals the single-domain reference solve; with a block-asynchronous schedule (its
//! halos stale within a launch, and the slabs' tiles cut at the slabs' edges) it is what the
//! multi-sub-domain solver computes with `BlockAsync<D>`, not the single-domain solve.

#include <relax/control/report.hpp>
#include <relax/control/stop.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/domain/decomposition.hpp>
#include <relax/domain/grid.hpp>
#include <relax/reference/tiled.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
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

//! Puts the owned rows of `slab`'s local grid back into `global`.
template <class T>
void gather(const HostGrid<T>& local, const Slab& slab, HostGrid<T>& global) {
  for (std::int64_t g = slab.owned.first; g < slab.owned.first + slab.owned.count; ++g)
    detail::copy_line(local, slab.storage_row(g), global, g + 1);
}

//! Puts the owned rows of every local grid back into `global`.
template <class T>
void gather(const std::vector<HostGrid<T>>& locals, const Decomposition& d, HostGrid<T>& global) {
  for (int s = 0; s < d.size(); ++s) gather(locals[static_cast<std::size_t>(s)], d[s], global);
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

//! Solves A u = b on the slabs of `d`, a check every `check_interval` sweeps, `u` the global grid
//! (its ring the boundary values). With `SyncSchedule`, rounds of H sweeps: the same report and
//! final `u` as `solve(s, u, scratch, b, check_interval, options)` on the whole box. With a
//! `TiledSchedule`, each round is one launch of the schedule's depth D (the batch's last one
//! shorter) on every slab: exact, with H ≥ D, it equals the whole box's solve under that
//! schedule; block-asynchronous (H ≥ 1), it is the split `BlockAsync<D>` solve.
//! \throws relax::invalid_argument for grids of another box, or a halo thinner than the schedule
//!         needs.
template <class S, class T = typename S::value_type, class Schedule = SyncSchedule>
SolveReport solve_split(const S& s, const Decomposition& d, HostGrid<T>& u, const HostGrid<T>& b,
                        int check_interval, const SolveOptions& options, Exec exec = {}, const Schedule& schedule = {}) {
  constexpr bool tiled = !std::is_same_v<Schedule, SyncSchedule>;
  options.validate();
  relax::detail::require(check_interval >= 1, "check_interval", check_interval, "at least 1 sweep between checks");
  relax::detail::require(u.layout().extents == d.global() && b.layout().extents == d.global(), "u",
                         u.layout().extents.to_text(), ("the decomposition's box " + d.global().to_text()).c_str());
  if constexpr (tiled) {
    schedule.validate();
    relax::detail::require(d.size() == 1 || d[0].halo >= (schedule.exact ? schedule.depth : 1), "halo", d[0].halo,
                           "at least D rows for an exact tiled schedule (its ghost zone), 1 for a block-asynchronous one");
  }
  SolveReport report;
  report.rhs_norm = static_cast<double>(rhs_norm(s, u, b, exec));  // the global system's ‖b‖
  std::vector<HostGrid<T>> us = scatter(u, d), bs = scatter(b, d), scratch = us;
  const StopCriterion stop = criterion(options);
  for (;;) {
    const std::int64_t batch = std::min<std::int64_t>(check_interval, options.max_sweeps - report.sweeps);
    for (std::int64_t done = 0; done < batch;) {
      std::int64_t round = 0;
      if constexpr (tiled) round = std::min<std::int64_t>(schedule.depth, batch - done);
      else round = std::min<std::int64_t>(d[0].halo, batch - done);
      for (int p = 0; p < d.size(); ++p) {
        const auto k = static_cast<std::size_t>(p);
        if constexpr (tiled) {
          detail::tiled_launch(s, us[k], scratch[k], bs[k], schedule, static_cast<int>(round), exec);
          std::swap(us[k], scratch[k]);
        } else {
          sweeps(s, us[k], scratch[k], bs[k], SyncSchedule{}, round, exec);
        }
      }
      exchange(us, d);
      done += round;
    }
    report.sweeps += batch;
    gather(us, d, u);
    const double norm = static_cast<double>(residual_norm(s, u, b, exec));
    report.rho = StopCriterion::relative(norm, report.rhs_norm);
    ++report.checks;
    if (options.record_history) report.history.push_back({report.sweeps, report.rho});
    const StopReason decision = stop.decide(norm, report.rhs_norm, report.sweeps);
    if (decision != StopReason::go_on) {
      report.status = to_solve_status(decision);
      break;
    }
  }
  return report;
}

}  // namespace relax::reference
