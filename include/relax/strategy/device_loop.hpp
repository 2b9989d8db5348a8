#pragma once
//! \file
//! `DeviceLoop<Inner>`: the device loop (CPU-free). One cooperative kernel runs a whole solve:
//! every sweep of the inner schedule, a grid-wide barrier between sweeps, the residual every M
//! sweeps from block partials, and the stop decision on the device (`StopCriterion::decide`,
//! the same function the host loop calls). The host launches once per solve and reads a report,
//! so a convergence check costs a grid barrier instead of a round trip to the host. Every wait is
//! bounded (`relax/primitives/grid_barrier.cuh`); the kernel is in `device_loop.cuh`.
//!
//! Inner schedules built so far, each with the iterates, sweeps, checks and ρ of its launched
//! schedule's host loop with blocking checks, bit for bit (Sync's for the exact ones):
//! - `Sync` and `SyncTile<X, Y, Rows>`: one sweep per grid barrier, the grid streamed from
//!   global memory (L2 or DRAM) every sweep; any grid.
//! - `TemporalBlock<D, OnChip>`: each block keeps one tile and a D-cell halo in shared memory for
//!   the whole solve and runs batches of up to D exact sweeps there; between batches it stores
//!   only its tile's frame and reloads only its halo, after waiting for the adjacent tiles'
//!   flags (no grid barrier), and the grid barrier is met only at checks. The grid must fit on
//!   chip: one tile per SM, its region (tile and halo: three arrays of T and a byte per cell)
//!   in the shared memory of a block (about 1400² float points on an H200 at D = 4); a larger
//!   grid is refused with a message.
//! - `TemporalBlock<D, InRegisters>` (2D): the same loop with each block's tile and halo (and
//!   its b) in its threads' registers instead of shared memory (PERKS' residency): a sweep reads
//!   no shared memory but the rows at its warps' edges. The region is at most 128 × 96 float
//!   cells a block (64 × 96 double), so the grid must fit in fewer cells than `OnChip` allows
//!   (about 1040² float at D = 8 on an H200).
//! - `TemporalBlock<D, ColumnStream>`: the column stream of the launch-based strategy (2D: a warp
//!   streams a strip of columns down a segment of rows; 3D: a block streams an (x, y) tile down a
//!   segment of planes) run by every resident block over the work items, D exact sweeps per
//!   pass and a grid barrier between passes; any grid (the one beyond the chip). In 3D the plane
//!   queue of depth D must fit in a block's shared memory (D ≤ 4 on an H200, float32 and
//!   float64 alike).
//! - `BlockAsync<D, Tile<X, Y, Z>>`: the launched block-asynchronous tiles (D local sweeps on a
//!   tile with a one-cell halo frozen at its load) swept by every resident block in turn, a grid
//!   barrier after every pass; the iterates of the launched `BlockAsync<D, Tile>` with the same
//!   checks, bit for bit (and so of its host emulation), not Sync's.
//! The controller must be one that decides on the device: `Fixed`, or `Ladder` for the inner
//! schedules with a depth (on chip, streamed): the kernel steps the batch depth through the
//! ladder's levels as ρ falls (`LadderRule`, the host Ladder's own rule), which changes only the
//! speed, since the sweeps are exact. The host `Ladder` object is not advanced by such a solve;
//! the level reached is in the loop's report (`DeviceLoopResult::level`).

#include <relax/config.hpp>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/tiled.hpp>
#include <relax/strategy/traits.hpp>

#include <type_traits>

namespace relax {

namespace detail {
template <class S>
struct is_sync_tile : std::false_type {};
template <int X, int Y, int R>
struct is_sync_tile<SyncTile<X, Y, R>> : std::true_type {};
template <class S>
struct is_on_chip : std::false_type {};
template <int D, class TileShape>
struct is_on_chip<TemporalBlock<D, TileShape>> : std::bool_constant<is_resident_shape<TileShape>> {};
template <class S>
struct is_block_async : std::false_type {};
template <int D, class T>
struct is_block_async<BlockAsync<D, T>> : std::bool_constant<D != dynamic> {};
template <class S>
struct is_streamed : std::false_type {};
template <int D>
struct is_streamed<TemporalBlock<D, ColumnStream>> : std::bool_constant<D != dynamic> {};
}  // namespace detail

template <class Inner = Sync>
struct DeviceLoop {
  static_assert(detail::is_sync_tile<Inner>::value || detail::is_on_chip<Inner>::value ||
                    detail::is_streamed<Inner>::value || detail::is_block_async<Inner>::value,
                "relax::DeviceLoop<Inner>: the inner schedule must be Sync, SyncTile<X, Y, Rows>, "
                "TemporalBlock<D, OnChip>, TemporalBlock<D, InRegisters>, TemporalBlock<D, ColumnStream> or "
                "BlockAsync<D, Tile> with a "
                "fixed D (TemporalBlock on shared-memory tiles inside the device loop is not built)");
  // Instantiates the inner tag, so its own checks (TemporalBlock<D, OnChip>: D from 1 to 8) run
  // (a static member's initializer alone would not).
  static_assert(sizeof(Inner) > 0, "relax::DeviceLoop<Inner>: the inner schedule is incomplete");
  static constexpr bool exact = Inner::exact;  //!< BlockAsync inside the loop is as inexact as launched
  static constexpr bool device_loop = true;  //!< the solve's loop runs in the kernel
  using inner = Inner;
};

template <class I>
struct is_strategy<DeviceLoop<I>> : std::true_type {};

namespace detail {
//! Whether a strategy is the device loop on register-resident tiles (2D stencils only).
template <class Strategy>
inline constexpr bool in_registers_v = false;
template <int D>
inline constexpr bool in_registers_v<DeviceLoop<TemporalBlock<D, InRegisters>>> = true;
}  // namespace detail

}  // namespace relax
