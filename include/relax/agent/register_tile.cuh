#pragma once
//! \file
//! The block-level worker of `DeviceLoop<TemporalBlock<D, InRegisters>>` (2D): the on-chip
//! loop's tile, its D-cell halo and its right-hand side kept in the threads' registers for the
//! whole solve (PERKS' residency), with the protocol of `ResidentTile` (the same calls, the same
//! cells loaded, updated and stored, so the iterates are Sync's bit for bit).
//!
//! The frame. A block of `Threads` threads is a column of warps; thread (warp w, lane l) holds
//! the `Rows` × `Cols` cells of rows w · Rows .. w · Rows + Rows − 1 and columns
//! l · Cols .. l · Cols + Cols − 1 of the region (Cols = one 16-byte vector of T: 4 floats, 2
//! doubles), so a region of at most 32 · Cols × (Threads / 32) · Rows cells fits (128 × 96 float
//! cells at 512 threads and 6 rows). In a sweep the north and south neighbours inside a thread's
//! rows and the east and west neighbours inside its vector are its own registers; the cells
//! beside the vector come from the neighbouring lanes (a shuffle each way a row); only the rows at
//! a warp's top and bottom go through shared memory, once a sweep (double-buffered, so one block
//! barrier a sweep). b stays in shared memory, read as one vector a row (with b in registers as
//! well ptxas spilled 648 bytes at 128 registers, 414 without it while the cells' addresses were
//! still hoisted: see `for_cells`). Where the shared-memory tile moves about 21 bytes of shared
//! memory a cell and sweep, this moves 4 bytes a cell (b) and 64 a thread (its first and last
//! rows out, its neighbours' in).
//!
//! The classes of `ResidentTile` (outside the grid or the region, the ring, or interior with its
//! distance to the region's faces) are kept per row and per column: a cell's class is the smaller
//! of its row's and its column's (outside < ring < any distance), which is what the byte per cell
//! holds there. Every cell's update is computed and blended with its old value where the class
//! falls short (see `blend`); a stencil is then called at an interior point for every cell (the
//! cell's own, or the nearest interior one where its result is discarded).

#include <relax/agent/vector_walk.cuh>
#include <relax/core/arith.hpp>
#include <relax/domain/shape.hpp>
#include <relax/domain/tile.hpp>
#include <relax/stencil/traits.hpp>

#include <cstddef>
#include <cstdint>

namespace relax::detail {

//! `a` where `mask` is all ones, `b` where it is zero, by bit operations: the update of every cell
//! is then computed and blended, not predicated. (Predicated, each cell's chain of dependent
//! adds waited for the one before: ptxas reused one predicate register a cell, and ncu counted
//! under two issued instructions a cycle an SM, most stalls on fixed-latency dependencies.)
__device__ __forceinline__ float blend(int mask, float a, float b) {
  return __int_as_float((__float_as_int(a) & mask) | (__float_as_int(b) & ~mask));
}
__device__ __forceinline__ double blend(int mask, double a, double b) {
  const long long m = mask;  // sign-extended: all ones or zero
  return __longlong_as_double((__double_as_longlong(a) & m) | (__double_as_longlong(b) & ~m));
}

template <int Threads, int Rows, class T>
class RegisterTile {
 public:
  static constexpr int Cols = Vec16<T>::width;
  static constexpr int warps = Threads / 32;
  static constexpr int frame_x = 32 * Cols;     //!< the widest region a block holds
  static constexpr int frame_y = warps * Rows;  //!< the tallest
  //! Shared memory of a block: b over the frame, and the rows at the warps' edges twice (one
  //! sweep's, the next's).
  static constexpr std::size_t shared_bytes = (std::size_t{frame_y} + 2 * 2 * warps) * frame_x * sizeof(T);
  static_assert(Threads % 32 == 0 && Threads >= 64, "relax::detail::RegisterTile: whole warps, at least two");
  static_assert(Rows >= 1, "relax::detail::RegisterTile: at least one row a thread");

  static constexpr bool folds_residual = true;  //!< `sweeps<true>` folds a check's residual into its first sweep
  static constexpr int outside = -2;  //!< not a grid point of the region: never loaded, read or stored
  static constexpr int ring = -1;     //!< boundary ring: loaded once, never updated

  //! Tile `tile` of `tiles` (2D) for thread `thread`; `smem` (16-byte aligned) holds
  //! `shared_bytes`. Its region must fit the frame (the host's tiling sees to it).
  __device__ RegisterTile(const ResidentTiles& tiles, int tile, const Shape& g, T* smem, int thread)
      : halo_(tiles.halo), warp_(thread / 32), lane_(thread % 32), b_(smem + (thread / 32 * Rows) * frame_x + thread % 32 * Cols),
        edges_(smem + frame_y * frame_x) {
    const TileRegion r = tiles.region<2>();
    if (r.rx > frame_x || r.ry > frame_y) __trap();  // the host tiles for this frame
    const TileOrigin o = tile_origin<2>(0, tile / tiles.count_x, tile % tiles.count_x, tiles.tile_x, tiles.tile_y, 1, halo_);
    const int ci = warp_ * Rows, cj = lane_ * Cols;
    i0_ = o.i0 + ci;
    j0_ = o.j0 + cj;
    base_ = g.at(0, i0_, j0_);
    pitch_ = static_cast<int>(g.pitch);  // a region row apart: the grids that fit have pitches far below 2³¹
    top_ = outside;
#pragma unroll
    for (int q = 0; q < Rows; ++q) {
      row_[q] = axis_class(ci + q, r.ry, i0_ + q, g.ny);
      top_ = top_ > row_[q] ? top_ : row_[q];
    }
#pragma unroll
    for (int c = 0; c < Cols; ++c) col_[c] = axis_class(cj + c, r.rx, j0_ + c, g.nx);
  }

  //! Loads the thread's cells of `u` and the right-hand side: b, or u + source (`arith::add`, the
  //! fused right-hand side of the diffusion run) when `source` is given. Registers only.
  __device__ void load_all(const T* u, const T* __restrict__ b, const T* __restrict__ source, const Shape&) {
    for_cells(u, [&](int q, int c, int row, int col, const T* at) {
      const T v = row >= ring && col >= ring ? *at : T(0);
      x_[q][c] = v;
      b_[q * frame_x + c] = row < 0 || col < 0 ? T(0) : source != nullptr ? arith::add(v, source[at - u]) : b[at - u];
    });
  }

  //! Refreshes the interior halo cells from `src` (the adjacent tiles' frames).
  __device__ void load_halo(const T* src, const Shape&) {
    for_cells(src, [&](int q, int c, int row, int col, const T* at) {
      if (row >= 0 && col >= 0 && (row < halo_ || col < halo_)) x_[q][c] = *at;
    });
  }

  //! `depth` (≤ halo) sweeps. Sweep p updates the cells at distance ≥ halo − depth + 1 + p from
  //! the faces (`ResidentTile::sweeps`); the others keep their value. With `Fold` the first sweep
  //! also folds |s.residual| of its input over the owned cells (the halo must be fresh) and hands
  //! the bits to `posted` before the second. Block-level.
  template <bool Fold, class S, class Posted>
  __device__ void sweeps(const S& s, const Shape& g, int depth, Posted posted) {
    if (depth > halo_) __trap();  // the host pairs the kernel's D with the tiling's halo
    int p = 0;
    if constexpr (Fold) {
      const int reach = halo_ - depth + 1;  // ≤ halo: every warp with an owned cell is busy
      arith::bits_t<T> best = 0;
      walk(
          top_ >= reach, [&](int q, int c) { return x_[q][c]; },
          [&](int q, int c, const Neighbours<T, 2>& nb, T rhs) {
            if (row_[q] >= halo_ && col_[c] >= halo_) {
              const auto bits = arith::abs_bits(s.residual(nb, point(g, q, c), rhs));
              best = best > bits ? best : bits;
            }
            x_[q][c] = blend(-(row_[q] >= reach) & -(col_[c] >= reach), s.update(nb, interior_point(g, q, c), rhs), nb.c);
          });
      posted(best);
      p = 1;
    }
    for (; p < depth; ++p) {
      const int reach = halo_ - depth + 1 + p;
      walk(
          top_ >= reach, [&](int q, int c) { return x_[q][c]; },
          [&](int q, int c, const Neighbours<T, 2>& nb, T rhs) {
            x_[q][c] = blend(-(row_[q] >= reach) & -(col_[c] >= reach), s.update(nb, interior_point(g, q, c), rhs), nb.c);
          });
    }
  }

  //! Stores the owned cells within `halo` of the faces (what the adjacent tiles' halos read).
  __device__ void store_frame(T* dst, const Shape&) const {
    for_cells(dst, [&](int q, int c, int row, int col, T* at) {
      if (row >= halo_ && col >= halo_ && (row < 2 * halo_ || col < 2 * halo_)) *at = x_[q][c];
    });
  }

  //! Stores the inner cells (owned, not in the frame), so `dst` holding the frame holds every owned cell.
  __device__ void store_inner(T* dst, const Shape&) const {
    for_cells(dst, [&](int q, int c, int row, int col, T* at) {
      if (row >= 2 * halo_ && col >= 2 * halo_) *at = x_[q][c];
    });
  }

  //! Folds ‖b‖'s part of the thread's owned cells into `best` (`ResidentTile::fold_rhs_norm`):
  //! |s.residual| with the interior at 0 and the ring as loaded. Block-level.
  template <class S>
  __device__ void fold_rhs_norm(arith::bits_t<T>& best, const S& s, const Shape& g) {
    // Ring: neither class outside, one of them the ring.
    fold_owned_residual(best, s, g, [&](int q, int c) {
      return row_[q] >= ring && col_[c] >= ring && (row_[q] == ring || col_[c] == ring) ? x_[q][c] : T(0);
    });
  }

  //! Folds |s.residual| of the thread's owned cells into `best`. The halo must be fresh. Block-level.
  template <class S>
  __device__ void fold_residual(arith::bits_t<T>& best, const S& s, const Shape& g) {
    fold_owned_residual(best, s, g, [&](int q, int c) { return x_[q][c]; });
  }

 private:
  // The class of coordinate `cr` of a region `extent` long along an axis, at grid index `i` of
  // an axis with `n` interior points: outside, ring, or the distance to the region's faces.
  static __device__ int axis_class(int cr, int extent, std::int64_t i, std::int64_t n) {
    if (cr >= extent || i < 0 || i > n + 1) return outside;
    if (i == 0 || i == n + 1) return ring;
    const int far = extent - 1 - cr;
    return cr < far ? cr : far;
  }
  __device__ __forceinline__ Point point(const Shape& g, int q, int c) const { return g.point<2>(0, i0_ + q, j0_ + c); }
  // The point a blended update is computed at: the cell's, moved into the interior. Every cell's
  // update is computed, and a stencil that reads a coefficient field by global index must not
  // read outside the grid for the ring or the cells beyond it, whose result is discarded. (The
  // clamp is dead code for stencils that ignore the point.)
  __device__ __forceinline__ Point interior_point(const Shape& g, int q, int c) const {
    const std::int64_t i = i0_ + q, j = j0_ + c;
    return g.point<2>(0, i < 1 ? 1 : i > g.ny ? g.ny : i, j < 1 ? 1 : j > g.nx ? g.nx : j);
  }

  // Calls f(q, c, row class, column class, the cell's address in `grid`) for each of the
  // thread's cells. (A cell's class is the smaller of the two; the callers test them apart. The
  // addresses are formed a row at a time from a 32-bit row offset: formed once for all cells,
  // ptxas held 24 64-bit offsets across the kernel's loop and spilled them.)
  template <class P, class F>
  __device__ __forceinline__ void for_cells(P* grid, F f) const {
    P* const first = grid + base_;
#pragma unroll
    for (int q = 0; q < Rows; ++q) {
      P* const row = first + q * pitch_;
#pragma unroll
      for (int c = 0; c < Cols; ++c) f(q, c, row_[q], col_[c], row + c);
    }
  }

  // Folds |s.residual| of the owned cells (class ≥ halo), the cells' values given by value(q, c).
  template <class S, class Value>
  __device__ __forceinline__ void fold_owned_residual(arith::bits_t<T>& best, const S& s, const Shape& g, Value value) {
    walk(top_ >= halo_, value, [&](int q, int c, const Neighbours<T, 2>& nb, T rhs) {
      if (row_[q] < halo_ || col_[c] < halo_) return;
      const auto bits = arith::abs_bits(s.residual(nb, point(g, q, c), rhs));
      best = best > bits ? best : bits;
    });
  }

  // Visits every cell of the thread with its neighbourhood of values value(q, c) and its b:
  // visit(q, c, nb, b).
  // The rows at the warp's edges pass through shared memory (every warp, and a block barrier);
  // a warp with nothing to do (`busy` false: no row of it reaches what the visit needs) then
  // leaves. A visit may overwrite x_[q][c]: row q's values are taken before it runs, row q + 1's
  // after the visits of row q − 1, and no row is read again.
  template <class Value, class Visit>
  __device__ __forceinline__ void walk(bool busy, Value value, Visit visit) {
    T* const tops = edges_ + (parity_ & 1) * 2 * warps * frame_x;  // [warp][column]: each warp's first row
    T* const bottoms = tops + warps * frame_x;                      // and its last
    ++parity_;
    const int at = warp_ * frame_x + lane_ * Cols;
    Vec16<T> first, last;
#pragma unroll
    for (int c = 0; c < Cols; ++c) {
      first.v[c] = value(0, c);
      last.v[c] = value(Rows - 1, c);
    }
    *reinterpret_cast<Vec16<T>*>(tops + at) = first;
    *reinterpret_cast<Vec16<T>*>(bottoms + at) = last;
    __syncthreads();
    if (!busy) return;
    // The row above the warp's first (warp 0: region row −1, read by no cell that is updated)
    // and the row below its last.
    Vec16<T> above{}, below{};
    if (warp_ > 0) above = *reinterpret_cast<const Vec16<T>*>(bottoms + at - frame_x);
    if (warp_ + 1 < warps) below = *reinterpret_cast<const Vec16<T>*>(tops + at + frame_x);
    T prev[Cols], cur[Cols], next[Cols];
#pragma unroll
    for (int c = 0; c < Cols; ++c) {
      prev[c] = above.v[c];
      cur[c] = first.v[c];
    }
#pragma unroll
    for (int q = 0; q < Rows; ++q) {
#pragma unroll
      for (int c = 0; c < Cols; ++c) next[c] = q + 1 < Rows ? value(q + 1, c) : below.v[c];
      // The cells beside the vector: lane l + 1's first and lane l − 1's last (the frame's own
      // first and last columns are on the region's faces: no cell there is updated).
      const T east = __shfl_down_sync(0xffffffffu, cur[0], 1);
      const T west = __shfl_up_sync(0xffffffffu, cur[Cols - 1], 1);
      const Vec16<T> rhs = *reinterpret_cast<const Vec16<T>*>(b_ + q * frame_x);
#pragma unroll
      for (int c = 0; c < Cols; ++c) {
        const Neighbours<T, 2> nb{cur[c], prev[c], next[c], c + 1 < Cols ? cur[c + 1] : east, c > 0 ? cur[c - 1] : west};
        visit(q, c, nb, rhs.v[c]);
      }
#pragma unroll
      for (int c = 0; c < Cols; ++c) {
        prev[c] = cur[c];
        cur[c] = next[c];
      }
    }
  }

  T x_[Rows][Cols];  //!< the iterate
  int row_[Rows];    //!< the class of each of the thread's rows
  int col_[Cols];    //!< and of each of its columns
  int top_;          //!< the largest row class of the thread (a warp whose lanes all fall short skips a sweep)
  int halo_;
  int warp_, lane_;
  unsigned parity_ = 0;  //!< which half of `edges_` the next walk writes
  std::int64_t i0_, j0_;  //!< grid row and column of the thread's first cell
  std::int64_t base_;     //!< its offset in the grid
  int pitch_;
  T* b_;      //!< the thread's first cell of b (shared memory, rows `frame_x` apart)
  T* edges_;  //!< the rows at the warps' edges
};

}  // namespace relax::detail
