#pragma once
//! \file
//! Tags of the two strategies that sweep a tile several times per pass through memory, and the
//! tile shape they share. Kernels are in `tiled.cuh`; the host emulation of both schedules is
//! `relax::reference::tiled_sweeps`.
//!
//! A launch of depth D loads a tile of `TileX × TileY` points plus a halo into shared memory,
//! sweeps it D times there and writes the tile back; it counts as D sweeps. A batch of `count`
//! sweeps is split into launches of D and one launch of the remainder, so a convergence check
//! every M sweeps always falls on a launch boundary, whatever M and D are (see docs/design.md).
//!
//! - `BlockAsync<D>`: a one-cell halo, frozen at load time. Values read across a tile edge can be
//!   up to D − 1 sweeps old; `BlockAsync<1>` is exactly `Sync`.
//! - `TemporalBlock<D>`: the ghost-zone method, a halo D cells wide. In local sweep s (0-based) a
//!   block updates the points at least s + 1 cells from the edge of what it loaded, so after D
//!   sweeps its tile holds exactly what D synchronous sweeps produce: bit-identical to `Sync`,
//!   paid for with redundant loads and updates of the halo.

#include <relax/config.hpp>
#include <relax/core/family.hpp>
#include <relax/strategy/traits.hpp>

#include <type_traits>

namespace relax {

//! A tile of `X × Y` points in 2D, `X × Y × Z` in 3D; one thread per point of an `X × Y` layer
//! (in 3D each thread takes Z points). Z = 4 was not tuned: it keeps the shared memory of a
//! TemporalBlock<4> tile of the default shape under 100 KiB in float32.
template <int X, int Y, int Z = 4>
struct Tile {
  static_assert(X > 0 && X % 32 == 0, "relax::Tile<X, Y, Z>: X must be a positive multiple of 32");
  static_assert(Y >= 1 && X * Y <= 1024, "relax::Tile<X, Y, Z>: Y must be >= 1 and X * Y <= 1024");
  static_assert(Z >= 1, "relax::Tile<X, Y, Z>: Z must be >= 1");
  static constexpr int x = X;
  static constexpr int y = Y;
  static constexpr int z = Z;
};

//! The streaming layout of `TemporalBlock`: a warp owns a strip of 128 float columns (64 double)
//! and marches down a segment of rows, keeping D time levels of a three-row window in registers.
//! Redundant work is the halo of D columns on each side of the strip and D rows per segment,
//! instead of a halo on all four sides of a small tile. In 3D the plane stream
//! (`agent/plane_stream.cuh`): a block of eight warps streams a tile of 128 float columns (64
//! double) by 32 rows down its planes (a segment of them, or a stream-K share:
//! `strategy/plane_schedule.hpp`), with a queue of D time levels.
struct ColumnStream {
  static constexpr int x = 0;  //!< no fixed tile: strips and segments are sized at launch
  static constexpr int y = 0;
  static constexpr int z = 0;
};

//! Tiles sized at launch so that each block of a device loop keeps one tile and its halo in
//! shared memory for the whole solve: `DeviceLoop<TemporalBlock<D, OnChip>>` (and only there; a
//! grid that does not fit on chip is refused with a message).
struct OnChip {
  static constexpr int x = 0;  //!< no fixed tile: one per block, sized at launch
  static constexpr int y = 0;
  static constexpr int z = 0;
};

//! Tiles sized at launch so that each block of a device loop keeps one tile and its halo in its
//! threads' registers for the whole solve (each thread a few rows of one 16-byte vector of
//! columns; only the rows at its warp's edges go through shared memory, once a sweep):
//! `DeviceLoop<TemporalBlock<D, InRegisters>>`, 2D only. A block's region is at most 128 × 96
//! float cells (64 × 96 double), so fewer grids fit than with `OnChip` (about 1040² float on
//! 132 SMs at D = 8); a grid that does not fit is refused with a message.
struct InRegisters {
  static constexpr int x = 0;  //!< no fixed tile: one per block, sized at launch
  static constexpr int y = 0;
  static constexpr int z = 0;
};

namespace detail {
//! Whether a tile shape is one of the device loop's resident ones (a tile per block for the whole solve).
template <class TileShape>
inline constexpr bool is_resident_shape = std::is_same_v<TileShape, OnChip> || std::is_same_v<TileShape, InRegisters>;
}  // namespace detail

//! Block-asynchronous Jacobi: D local sweeps of a tile with stale halos. `D = relax::dynamic`
//! takes the depth at run time (a controller may change it between launches).
//!
//! Default tile 32 × 8, the source study's block. Measured on the H200 (bench_tiles.json,
//! BlockAsync<8>, N = 16384): 32 × 8, 32 × 16 and 64 × 8 sweep at 317–319 G updates/s, within 1%
//! of each other and of Sync; 64 × 16 at 192. Larger tiles have fewer stale edges and may need
//! fewer sweeps; that (s against tile shape) is not measured, so the default stays the study's.
template <int D, class TileShape = Tile<32, 8>>
struct BlockAsync {
  static_assert(!detail::is_resident_shape<TileShape>,
                "relax::BlockAsync<D, Tile>: OnChip and InRegisters tiles are TemporalBlock's inside DeviceLoop");
  static_assert(!std::is_same_v<TileShape, ColumnStream>,
                "relax::BlockAsync<D, Tile>: block-asynchronous sweeps run on tiles; ColumnStream is "
                "TemporalBlock's streaming layout");
  static_assert(D >= 1 || D == dynamic,
                "relax::BlockAsync<D>: the depth D must be >= 1, or relax::dynamic");
  static constexpr int depth = D;
  static constexpr bool exact = false;
  static constexpr int max_depth = 0;  //!< no limit: the halo stays one cell wide
  static constexpr Family family = Family::blockasync;
  using tile = TileShape;
};

//! Exact temporal blocking (ghost zones): D synchronous sweeps per pass through memory.
//!
//! Default tile 32 × 16, measured on the H200 (bench_tiles.json, TemporalBlock<4>, N = 16384):
//! 32 × 16 sweeps at 137 G updates/s, 64 × 16 at 130, 64 × 8 at 123, 32 × 8 at 111. The shared-
//! memory tile is the textbook version; `TemporalBlock<D, ColumnStream>` is the fast one.
template <int D, class TileShape = Tile<32, 16>>
struct TemporalBlock {
  static_assert(D >= 1 || D == dynamic,
                "relax::TemporalBlock<D>: the depth D must be >= 1, or relax::dynamic");
  static_assert(std::is_same_v<TileShape, ColumnStream> || detail::is_resident_shape<TileShape> || D == dynamic ||
                    (D <= TileShape::x && D <= TileShape::y),
                "relax::TemporalBlock<D, Tile>: D must not exceed the tile's width or height "
                "(the halo would be wider than the tile)");
  static_assert(!std::is_same_v<TileShape, ColumnStream> || D == dynamic || (D >= 1 && D <= 8),
                "relax::TemporalBlock<D, ColumnStream>: D must be from 1 to 8, or relax::dynamic");
  static_assert(!detail::is_resident_shape<TileShape> || (D >= 1 && D <= 8),
                "relax::TemporalBlock<D, OnChip>, TemporalBlock<D, InRegisters>: D must be from 1 to 8 (a fixed depth)");
  static constexpr int depth = D;
  static constexpr bool exact = true;
  static constexpr Family family = Family::temporal;
  //! The deepest D the kernels run (for a controller that chooses D). In 3D shared memory may
  //! allow less: the solver asks the sweeper (`deepest_depth`) and tells the controller.
  static constexpr int max_depth = std::is_same_v<TileShape, ColumnStream> || detail::is_resident_shape<TileShape> ? 8
                                   : TileShape::x < TileShape::y            ? TileShape::x
                                                                            : TileShape::y;
  using tile = TileShape;
};

template <int D, class T>
struct is_strategy<BlockAsync<D, T>> : std::true_type {};
template <int D, class T>
struct is_strategy<TemporalBlock<D, T>> : std::true_type {};

}  // namespace relax
