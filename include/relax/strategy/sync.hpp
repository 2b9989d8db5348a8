#pragma once
//! \file
//! The synchronous strategy's tag: one kernel launch per sweep, ping-pong buffers. The kernel
//! boundary is the global barrier, so every sweep reads only the previous sweep's values: the
//! iterates are exactly those of textbook Jacobi (and of `relax::reference::sweep`). The kernel
//! is in `sync.cuh`.

#include <relax/config.hpp>
#include <relax/strategy/traits.hpp>

#include <type_traits>

namespace relax {

//! Synchronous sweeps with blocks of `BlockX × BlockY` threads, each thread updating 16 bytes of
//! consecutive points (4 floats or 2 doubles) in each of `RowsPerThread` consecutive rows
//! (`relax::dynamic`: chosen at each launch in 2D, see `relax::tuning::sync_deep_rows`; in 3D,
//! `relax::tuning::sync_planes_3d` planes).
template <int BlockX, int BlockY, int RowsPerThread = dynamic>
struct SyncTile {
  static_assert(BlockX > 0 && BlockX % 32 == 0,
                "relax::SyncTile: BlockX must be a positive multiple of 32 (a warp covers a row)");
  static_assert(BlockY >= 1 && BlockX * BlockY <= 1024,
                "relax::SyncTile: BlockY must be >= 1 and BlockX * BlockY <= 1024 threads");
  static_assert(RowsPerThread >= 1 || RowsPerThread == dynamic,
                "relax::SyncTile: RowsPerThread must be >= 1, or relax::dynamic");
  static constexpr int block_x = BlockX;
  static constexpr int block_y = BlockY;
  static constexpr int rows_per_thread = RowsPerThread;
  static constexpr bool exact = true;
};

//! The synchronous strategy with the default shape: 32 × 8 threads (the source study's block), the
//! rows per thread chosen at launch from the grid size and the SM count (`relax::tuning`).
using Sync = SyncTile<32, 8, dynamic>;

template <int X, int Y, int R>
struct is_strategy<SyncTile<X, Y, R>> : std::true_type {};

}  // namespace relax
