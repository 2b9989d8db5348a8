#pragma once
//! \file
//! `Sweeper<Auto>`: dispatches each batch to the strategy `auto_select` picks for the grid, the
//! stencil and the current device; and `auto_device_loop`, whether a `Solver` with `Auto` runs
//! the whole solve as a device loop instead (on chip, or streamed where the tree says so).

#include <relax/core/device.hpp>
#include <relax/strategy/auto.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#include <limits>
#include <string>

namespace relax {

//! The device loop a `Solver<S, Auto>` runs a whole solve (and a run of steps) as, where
//! `auto_runs_on_chip` says so: the on-chip loop at D = 8, its tiles in registers
//! (`DeviceLoop<TemporalBlock<8, InRegisters>>`) where `auto_in_registers` says so, in shared
//! memory (`DeviceLoop<TemporalBlock<8, OnChip>>`) elsewhere. Both have Sync's iterates.
struct AutoOnChip {};

//! Whether `AutoOnChip` keeps the tiles of a grid of `e` in registers on the current device: a 2D
//! grid that the register frame holds, with at least `tuning::auto_registers_points_per_sm`
//! interior points an SM.
template <class S, class T = typename S::value_type>
bool auto_in_registers(const Extents& e) {
  if constexpr (S::rank != 2) {
    return false;
  } else {
    return e.points() >= tuning::auto_registers_points_per_sm * static_cast<std::int64_t>(current_sm_count()) &&
           Sweeper<DeviceLoop<TemporalBlock<8, InRegisters>>>::template fits<S, T>(e);
  }
}

//! `AutoOnChip`: the register-resident loop or the shared-memory one, chosen for the grid of each
//! call (`auto_in_registers`).
template <>
struct Sweeper<AutoOnChip> {
  using Shared = Sweeper<DeviceLoop<TemporalBlock<8, OnChip>>>;
  using Registers = Sweeper<DeviceLoop<TemporalBlock<8, InRegisters>>>;
  static constexpr bool rhs_norm_on_device = true;
  static constexpr bool fuses_steps = true;
  static constexpr bool takes_ladder = true;

  template <class S, class T>
  static void preload() {
    Shared::template preload<S, T>();
    if constexpr (S::rank == 2) Registers::template preload<S, T>();
  }
  //! Whether a grid of `e` fits on chip (in shared memory; the register frame holds fewer).
  template <class S, class T>
  static bool fits(const Extents& e) {
    return Shared::template fits<S, T>(e);
  }
  template <class S, class T>
  static detail::DeviceLoopResult solve(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                                        const detail::DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace,
                                        bool with_history, cudaStream_t stream) {
    if constexpr (S::rank == 2)
      if (auto_in_registers<S, T>(u.extents()))
        return Registers::solve(s, u, scratch, b, plan, workspace, with_history, stream);
    return Shared::solve(s, u, scratch, b, plan, workspace, with_history, stream);
  }
  template <class S, class T>
  static detail::DeviceLoopResult solve_steps(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch,
                                              const DeviceGrid<T>& source, const detail::DeviceLoopPlan& plan,
                                              DeviceLoopWorkspace<T>& workspace, bool with_history,
                                              cudaStream_t stream) {
    if constexpr (S::rank == 2)
      if (auto_in_registers<S, T>(u.extents()))
        return Registers::solve_steps(s, u, scratch, source, plan, workspace, with_history, stream);
    return Shared::solve_steps(s, u, scratch, source, plan, workspace, with_history, stream);
  }
};

//! Whether `Solver<S, Auto>` runs its solves as `AutoOnChip` for grids of `e` on the current
//! device: 2D grids that fit on chip, on a device with cooperative launch. Measured on the H200
//! (float32, 2026-12-01, docs/results/h200/bench_on_chip_fused.json): ten steps took 2.3 to 7.6
//! times less with it than with the fastest launch-based strategy of the same run (N = 256 at
//! r = 10; N = 512 and 1024 at r = 1, 10 and 100), and the fastest run of the experiment matrix
//! at N = 512 and 1024 (any strategy, docs/results/h200/experiment.csv) is slower still; so
//! wherever it fits, nothing launch-based is chosen. Its iterates are Sync's (exact). In 3D
//! `Auto` runs Sync (the tree is 2D-trained, and the on-chip loop is not measured in 3D).
template <class S, class T = typename S::value_type>
bool auto_runs_on_chip(const Extents& e) {
  if constexpr (S::rank != 2) {
    return false;
  } else {
    return e.rank == 2 && detail::cached_device_attribute<cudaDevAttrCooperativeLaunch>() != 0 &&
           Sweeper<AutoOnChip>::template fits<S, T>(e);
  }
}

//! The streamed device loop `Auto` runs where its tree chooses it (`FamilyChoice::device_loop`):
//! the column stream in one cooperative kernel a solve, at the tree's D (4 or 8).
template <int D>
using AutoStreamed = DeviceLoop<TemporalBlock<D, ColumnStream>>;

//! Where a `Solver` with `Auto` runs each solve as one cooperative kernel (`auto_device_loop`):
//! nowhere (`none`: the launch-based strategy of `auto_select`, a batch a launch), on chip
//! (`AutoOnChip`), or as the streamed loop at D = 4 or 8 (`AutoStreamed<D>`). All of them have
//! Sync's iterates. `Adaptive` with `Feedback` is offered one as a candidate
//! (`adaptive_device_loop`).
enum class AutoLoop { none, on_chip, streamed4, streamed8 };

//! The loop's name: `AutoOnChip` (which keeps its tiles in registers or shared memory,
//! `auto_in_registers`), the streamed loop's type, or "none".
inline const char* to_string(AutoLoop l) {
  switch (l) {
    case AutoLoop::none: return "none";
    case AutoLoop::on_chip: return "AutoOnChip";
    case AutoLoop::streamed4: return "DeviceLoop<TemporalBlock<4, ColumnStream>>";
    case AutoLoop::streamed8: return "DeviceLoop<TemporalBlock<8, ColumnStream>>";
  }
  return "unknown";
}

namespace detail {
// The device loop for a 2D grid of `e` at coupling `r` on the current device: on chip where it
// fits (`auto_runs_on_chip`); beyond, the streamed loop where the tree picks one for (e, r), on a
// device with cooperative launch; else none.
template <class S, class T>
AutoLoop device_loop_for(const Extents& e, double r) {
  if constexpr (S::rank != 2) {
    return AutoLoop::none;
  } else {
    if (auto_runs_on_chip<S, T>(e)) return AutoLoop::on_chip;
    if (e.rank != 2 || cached_device_attribute<cudaDevAttrCooperativeLaunch>() == 0) return AutoLoop::none;
    const FamilyChoice c = auto_select(e, r, sizeof(T), current_l2_bytes());
    if (!c.device_loop) return AutoLoop::none;
    require(c.family == Family::temporal && (c.depth == 4 || c.depth == 8), "Auto's tree choice", to_string(c),
            "a streamed device loop at D = 4 or 8 (AutoStreamed<D>)");
    return c.depth == 4 ? AutoLoop::streamed4 : AutoLoop::streamed8;
  }
}
}  // namespace detail

//! The device loop `Solver<S, Auto>` runs a grid of `e` as on the current device: on chip where
//! `auto_runs_on_chip` says so; beyond the chip, the streamed loop where the tree's choice
//! (`auto_select` for `s`'s coupling) is one (2D, on a device with cooperative launch); else
//! `AutoLoop::none`. Measured on the H200 (float32, docs/results/h200/experiment.csv, the rows of
//! `stream4` and `stream8`; ten steps against the fastest launch-based strategy): the streamed
//! loop at D = 4 takes 0.64–0.79 of its time at N = 2048 and 4096 for r = 10 and 100 and
//! 0.76–0.93 at r = 1; at D = 8, 0.93–0.99 from N = 8192 to 32768 for r = 10 and 100. At r = 1
//! from N = 8192 it took 1.06–1.13, and the tree runs the launched stream there.
//! \throws relax::invalid_argument when the tree chose a streamed loop at a depth Auto does not
//!         run (4 and 8 are instantiated; retrain the tree with those labels only).
template <class S, class T = typename S::value_type>
AutoLoop auto_device_loop(const S& s, const Extents& e) {
  if constexpr (S::rank != 2) return AutoLoop::none;  // not evaluating the stencil (auto_select_for)
  else return detail::device_loop_for<S, T>(e, equivalent_coupling(s));
}

//! The device loop `Solver<S, Adaptive, Feedback>` offers its controller on a grid of `e`: the
//! on-chip loop where the grid fits; beyond, the streamed loop at the depth Auto's tree picks for
//! that working set where it picks the loop for a strong coupling (r → ∞). The stencil is not
//! evaluated (Adaptive takes stencils without a host-side coupling): Feedback measures whether
//! the loop pays at the stencil's own r.
template <class S, class T = typename S::value_type>
AutoLoop adaptive_device_loop(const Extents& e) {
  return detail::device_loop_for<S, T>(e, std::numeric_limits<double>::infinity());
}

//! The name of the strategy `Solver<S, Auto>` runs on a grid of `e` on the current device: the
//! device loop of `auto_device_loop` (the on-chip one with where it keeps its tiles), or the
//! launch-based strategy `auto_select` picks for `s`'s coupling (the launched
//! `TemporalBlock<D, ColumnStream>` where the tree chose the streamed loop and the device has no
//! cooperative launch).
template <class S, class T = typename S::value_type>
std::string auto_strategy_name(const S& s, const Extents& e) {
  const AutoLoop loop = auto_device_loop<S, T>(s, e);
  if (loop == AutoLoop::on_chip)
    return auto_in_registers<S, T>(e) ? "DeviceLoop<TemporalBlock<8, InRegisters>>" : "DeviceLoop<TemporalBlock<8, OnChip>>";
  if (loop != AutoLoop::none) return to_string(loop);
  FamilyChoice c = auto_select_for<S, T>(s, e, current_l2_bytes());
  c.device_loop = false;  // what Sweeper<Auto>::run runs
  return to_string(c);
}

namespace detail {
//! Calls `f` with the tag of the device loop `l` names (`AutoOnChip` or `AutoStreamed<D>`) and
//! returns what it returns; `l` is not `AutoLoop::none`.
template <class F>
decltype(auto) visit_auto_loop(AutoLoop l, F&& f) {
  switch (l) {
    case AutoLoop::on_chip: return f(AutoOnChip{});
    case AutoLoop::streamed4: return f(AutoStreamed<4>{});
    case AutoLoop::streamed8: return f(AutoStreamed<8>{});
    case AutoLoop::none: break;
  }
  require(false, "the device loop", to_string(l), "on chip or streamed (not none)");
  return f(AutoOnChip{});  // not reached: require throws
}
}  // namespace detail

template <>
struct Sweeper<Auto> {
  //! What `run` picks for `u`'s grid and `s` on the current device (`auto_select_for`: in 3D
  //! `Sync`, without evaluating `s` on the host).
  template <class S, class T>
  static FamilyChoice choice(const S& s, const DeviceGrid<T>& u) {
    return auto_select_for<S, T>(s, u.extents(), current_l2_bytes());
  }

  //! `batch.sweeps` sweeps with the strategy of `choice(s, u)` (the launched
  //! `TemporalBlock<D, ColumnStream>` where the choice is its device loop: the same iterates).
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    const FamilyChoice c = choice(s, u);
    const Batch chosen{batch.sweeps, c.depth, c.family};
    switch (c.family) {
      case Family::sync: return Sweeper<Sync>::run(s, u, scratch, b, chosen, stream);
      case Family::temporal:
        if constexpr (S::rank == 2)
          return Sweeper<TemporalBlock<dynamic, ColumnStream>>::run(s, u, scratch, b, chosen, stream);
        else
          detail::require(false, "Auto's choice", to_string(c), "Sync in 3D (auto_select)");
        return;
      case Family::blockasync: return Sweeper<BlockAsync<dynamic>>::run(s, u, scratch, b, chosen, stream);
    }
  }
};

}  // namespace relax
