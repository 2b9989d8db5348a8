#pragma once
//! \file
//! The warp-level worker of `TemporalBlock<D, ColumnStream>` in 2D (3D: `plane_stream.cuh`): exact
//! temporal blocking that
//! streams a strip of columns down a segment of rows through registers.
//!
//! A warp owns a strip of 32·W columns (W = 16 bytes of points per lane) loaded with a halo of D
//! columns on each side, and a segment of rows. It walks down the segment one row at a time: at
//! step k it loads row k of u and b, then for levels t = 1..D computes level t of row k − t from
//! level t − 1 of rows k − t − 1, k − t, k − t + 1, and stores level D of row k − D. Each level
//! keeps two rows per lane in registers; east and west neighbours across lanes come by warp
//! shuffles. Values near the loaded edges are wrong at the levels where their neighbours were
//! never loaded, but no stored point depends on them: a stored point is at least D columns and,
//! its segment warmed up, D rows from those edges. Every interior update is the stencil's
//! `update` on the same neighbours as in `Sync`, so the result equals D synchronous sweeps bit
//! for bit.

#include <relax/core/arith.hpp>
#include <relax/domain/shape.hpp>
#include <relax/stencil/traits.hpp>

#include <cstdint>

namespace relax::detail {

//! A lane's points of one row at one level (16-byte aligned: the 3D stream keeps them in shared
//! memory too).
template <class T>
struct alignas(16) Lane {
  static constexpr int width = 16 / static_cast<int>(sizeof(T));
  T v[width];
};

//! Columns a strip of depth D stores (its loaded width less the halo on both sides).
template <int D, class T>
inline constexpr int strip_kept = 32 * Lane<T>::width - 2 * D;

//! Where the stream keeps b of the D + 1 rows its levels update: in registers (the launched
//! kernel), read again from global memory at each level (an L1 hit), or in a ring in shared
//! memory that each lane writes and reads for itself (no barrier, since no lane reads another's).
//! The ring holds each row twice, at its slot and D + 1 slots on, so level t reads the row t steps
//! back at a fixed offset from the current slot (one 16-byte load a level, no wrap-around
//! arithmetic); with it the stream loads the next row's u and b a step ahead, into registers, so
//! a step's loads have the whole step to arrive. Measured on the H200 (2026-12-04, a pass of
//! D = 8 at 16384², launched alone): 270.7 µs a sweep with the single ring and loads of the
//! step's own row, 246.5 with both changes (the launched kernel: 234.2); with the residual folded,
//! 318.8 and 286.7 (docs/performance-notes.md). (A ring of D + 2 rows with the next row of u and b
//! copied in by `cp.async` a step ahead measured the same as the single ring, and was dropped.)
enum class RhsIn { registers, global, shared };

//! Lanes of the shared ring of b (`RhsIn::shared`) that one warp's strip of depth D needs: D + 1
//! rows, each held twice.
template <int D>
inline constexpr int rhs_ring_lanes = 2 * 32 * (D + 1);

//! Level 0 of a row at `offset` from the lane's columns `u_col` and (unless b is read at each
//! level, `RhsIn::global`) b of that row: zeros outside the grid (u) or the interior (b).
template <RhsIn Rhs, class T>
__device__ __forceinline__ void load_row(const T* __restrict__ u_col, const T* __restrict__ b_col, std::int64_t offset,
                                         bool row_in_grid, bool row_interior, unsigned in_grid, unsigned interior,
                                         Lane<T>& level0, Lane<T>& rhs_row) {
#pragma unroll
  for (int q = 0; q < Lane<T>::width; ++q) {
    level0.v[q] = row_in_grid && (in_grid >> q & 1u) ? u_col[offset + q] : T(0);
    if constexpr (Rhs != RhsIn::global)
      rhs_row.v[q] = row_interior && (interior >> q & 1u) ? b_col[offset + q] : T(0);
  }
}

//! Streams the strip whose first loaded column is `x0` down rows [y0, y1) of the 2D box `g`:
//! level D of those rows is stored in `out`. Called by all 32 lanes of a warp (`lane` = 0..31).
//! `Rhs`: where b of the rows being updated waits (see `RhsIn`); keeping the last D + 1 rows in
//! registers takes a third of them at D = 8, which callers whose own state stays live (the
//! device loops) cannot spare. With `RhsIn::shared`, `ring` holds `rhs_ring_lanes<D>` lanes for
//! this warp (16-byte aligned, in shared memory). With
//! `residual`, the stream also folds |s.residual| of the strip's stored points at level 0, the
//! iterate it reads, into `*residual` (the bits of `arith::abs_bits`), from the neighbours level
//! 1 reads: a check of u then costs no pass of its own.
template <int D, RhsIn Rhs = RhsIn::registers, class S, class T>
__device__ __forceinline__ void stream_strip(const S& s, const T* __restrict__ u, T* __restrict__ out,
                                             const T* __restrict__ b, const Shape& g, std::int64_t x0,
                                             std::int64_t y0, std::int64_t y1, int lane,
                                             Lane<T>* ring = nullptr, arith::bits_t<T>* residual = nullptr) {
  constexpr int W = Lane<T>::width;
  constexpr int strip = 32 * W;
  constexpr bool ahead = Rhs == RhsIn::shared;  // the next row's u and b loaded a step ahead
  // Columns of this lane: which exist in the grid, which are interior, which are stored.
  unsigned in_grid = 0, interior = 0, stored = 0;
#pragma unroll
  for (int q = 0; q < W; ++q) {
    const std::int64_t c = x0 + lane * W + q;
    const int local = lane * W + q;
    if (c >= 0 && c <= g.nx + 1) in_grid |= 1u << q;
    if (c >= 1 && c <= g.nx) interior |= 1u << q;
    if (c >= 1 && c <= g.nx && local >= D && local < strip - D) stored |= 1u << q;
  }

  Lane<T> up[D], mid[D], rhs[D + 1];
#pragma unroll
  for (int t = 0; t <= D; ++t) {
#pragma unroll
    for (int q = 0; q < W; ++q) {
      rhs[t].v[q] = T(0);
      if (t < D) up[t].v[q] = mid[t].v[q] = T(0);
    }
  }
  const T* u_col = u + x0 + lane * W;
  const T* b_col = b + x0 + lane * W;
  int slot = 0;  // RhsIn::shared: the ring's row of row k, k mod (D + 1)
  if constexpr (Rhs == RhsIn::shared) {
    // The first rows' levels read ring rows not yet written (their values are never stored);
    // zeros, as in the register ring.
#pragma unroll
    for (int t = 0; t < 2 * (D + 1); ++t) ring[t * 32 + lane] = rhs[0];
  }
  // Rows counted from the first loaded one in 32 bits (a segment and its 2D + 1 rows of halo fit
  // in an int on any grid that fits in memory): row k = base + i; the bounds of the rows in the
  // grid and in the interior, as such counts, clamped to the loop's range.
  const std::int64_t base = y0 - D - 1;
  const int steps = static_cast<int>(y1 + D - base);
  const auto relative = [&](std::int64_t row) {
    return static_cast<int>(row - base < -2 * D - 2 ? -2 * D - 2 : row - base > steps + 1 ? steps + 1 : row - base);
  };
  const int grid_first = relative(0), grid_last = relative(g.ny + 1);
  const int interior_first = relative(1), interior_last = relative(g.ny);
  const int stored_first = relative(y0), stored_end = relative(y1);
  Lane<T> ahead_u, ahead_b;
  if constexpr (ahead)
    load_row<Rhs>(u_col, b_col, base * g.pitch, 0 >= grid_first && 0 <= grid_last,
                  0 >= interior_first && 0 <= interior_last, in_grid, interior, ahead_u, ahead_b);
  arith::bits_t<T> worst = 0;  // the residual's fold
  for (int i = 0; i < steps; ++i) {
    const std::int64_t k = base + i;
    Lane<T> next;
    if constexpr (ahead) {
      next = ahead_u;
      rhs[0] = ahead_b;
      load_row<Rhs>(u_col, b_col, (k + 1) * g.pitch, i + 1 >= grid_first && i + 1 <= grid_last,
                    i + 1 >= interior_first && i + 1 <= interior_last, in_grid, interior, ahead_u, ahead_b);
    } else {
      load_row<Rhs>(u_col, b_col, k * g.pitch, i >= grid_first && i <= grid_last,
                    i >= interior_first && i <= interior_last, in_grid, interior, next, rhs[0]);
    }
    // RhsIn::shared: row k's two places (no arithmetic on the null ring of the other modes)
    Lane<T>* const ring_at = Rhs == RhsIn::shared ? ring + slot * 32 + lane : ring;
    if constexpr (Rhs == RhsIn::shared) {
      ring_at[0] = rhs[0];
      ring_at[(D + 1) * 32] = rhs[0];
    }
    // The residual of row k − 1 at level 0 (level 1 reads its neighbours), where the strip stores it.
    const bool fold_row = residual != nullptr && i - 1 >= stored_first && i - 1 < stored_end;
#pragma unroll
    for (int t = 1; t <= D; ++t) {
      // Level t of row r = k − t from level t − 1 of rows r − 1 (up), r (mid), r + 1 (next).
      const std::int64_t r = k - t;
      const bool update_row = i - t >= interior_first && i - t <= interior_last;
      const T west = __shfl_up_sync(0xffffffffu, mid[t - 1].v[W - 1], 1);
      const T east = __shfl_down_sync(0xffffffffu, mid[t - 1].v[0], 1);
      Lane<T> level, ring_row;
      if constexpr (Rhs == RhsIn::shared) ring_row = ring_at[(D + 1 - t) * 32];
      const auto rhs_of = [&](int q) {
        if constexpr (Rhs == RhsIn::global) return b_col[r * g.pitch + q];
        else if constexpr (Rhs == RhsIn::shared) return ring_row.v[q];
        else return rhs[t].v[q];
      };
      const auto neighbours = [&](int q) {
        return Neighbours<T, 2>{mid[t - 1].v[q], up[t - 1].v[q], next.v[q],
                                q + 1 < W ? mid[t - 1].v[q + 1] : east, q > 0 ? mid[t - 1].v[q - 1] : west};
      };
#pragma unroll
      for (int q = 0; q < W; ++q) {
        if (update_row && (interior >> q & 1u))
          level.v[q] = s.update(neighbours(q), g.point<2>(0, r, x0 + lane * W + q), rhs_of(q));
        else
          level.v[q] = mid[t - 1].v[q];
      }
      if (t == 1 && fold_row) {
        // Every column's residual, the ones not stored discarded (no branch a column): at the
        // column moved into the interior, so a stencil that reads a field by the point stays in it.
#pragma unroll
        for (int q = 0; q < W; ++q) {
          const std::int64_t c = x0 + lane * W + q, inside = c < 1 ? 1 : c > g.nx ? g.nx : c;
          // b read from global memory at the column moved inside too: at its own column a lane past
          // the grid's last column would read past the box's storage (found by the host tests'
          // emulation under AddressSanitizer; with the tuning's defaults no kernel folds the
          // residual with b read from global memory).
          T rhs;
          if constexpr (Rhs == RhsIn::global) rhs = b[r * g.pitch + inside];
          else rhs = rhs_of(q);
          const auto bits = arith::abs_bits(s.residual(neighbours(q), g.point<2>(0, r, inside), rhs));
          const auto kept = (stored >> q & 1u) ? bits : arith::bits_t<T>(0);
          worst = worst > kept ? worst : kept;
        }
      }
      up[t - 1] = mid[t - 1];
      mid[t - 1] = next;
      next = level;
    }
    // Level D of row k − D.
    const std::int64_t r = k - D;
    if (i - D >= stored_first && i - D < stored_end) {
#pragma unroll
      for (int q = 0; q < W; ++q)
        if (stored >> q & 1u) out[r * g.pitch + x0 + lane * W + q] = next.v[q];
    }
    if constexpr (Rhs == RhsIn::registers) {
#pragma unroll
      for (int t = D; t > 0; --t) rhs[t] = rhs[t - 1];
    }
    slot = slot == D ? 0 : slot + 1;
  }
  if (residual != nullptr) *residual = *residual > worst ? *residual : worst;
}

}  // namespace relax::detail
