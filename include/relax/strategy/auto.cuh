#pragma once
//! \file
//! `Sweeper<Auto>`: dispatches each batch to the strategy `auto_select` picks for the grid, the
//! stencil and the current device; and `auto_runs_on_chip`, whether a `Solver` with `Auto` runs
//! the whole solve as the on-chip device loop instead.

#include <relax/core/device.hpp>
#include <relax/strategy/auto.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

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

template <>
struct Sweeper<Auto> {
  //! What `run` picks for `u`'s grid and `s` on the current device.
  template <class S, class T>
  static FamilyChoice choice(const S& s, const DeviceGrid<T>& u) {
    return auto_select(u.extents(), equivalent_coupling(s), sizeof(T), current_l2_bytes());
  }

  //! `batch.sweeps` sweeps with the strategy of `choice(s, u)`.
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
