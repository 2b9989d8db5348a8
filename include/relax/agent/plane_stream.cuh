#pragma once
//! \file
//! The block-level worker of `TemporalBlock<D, ColumnStream>` in 3D: exact temporal blocking that
//! streams an (x, y) tile down a segment of planes, a queue of D time levels per lane.
//!
//! A block of `plane_stream_rows` warps owns a tile of 32·W columns (W = 16 bytes of points per
//! lane) by `plane_stream_rows` rows, loaded with a ghost zone of D columns and D rows on each
//! side, and a segment of planes; warp w owns row w of the tile. The block walks down z one plane
//! at a time: at step k it loads plane k of u and b, then for levels t = 1..D computes level t of
//! plane k − t from level t − 1 of planes k − t − 1, k − t, k − t + 1, and stores level D of
//! plane k − D. Each lane keeps, per level, the centre plane in registers and writes it to shared
//! memory once per step, double-buffered by the step's parity (one barrier per step): north and
//! south come from the neighbouring warps' rows of the current copy, up (plane k − t − 1) from
//! the lane's own row of the previous step's copy, down is the level below just computed, and
//! east and west come by warp shuffles. b waits in a shared ring of D + 1 planes. Two register
//! sets alternate between steps, so no value is copied from one step to the next. Values near the tile's loaded edges are wrong at the levels whose
//! neighbours were never loaded; no stored point depends on them, as in the 2D column stream
//! (`column_stream.cuh`). Every interior update is the stencil's `update` on the neighbours
//! `Sync` reads, so D steps equal D synchronous sweeps bit for bit.

#include <relax/agent/column_stream.cuh>
#include <relax/domain/shape.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <cstddef>
#include <cstdint>

namespace relax::detail {

//! Rows of a streamed 3D tile (loaded, ghost zone included): one warp each.
inline constexpr int plane_stream_rows = tuning::plane_stream_warps;

//! Rows of a 3D tile of depth D that are stored.
template <int D>
inline constexpr int plane_rows_kept = plane_stream_rows - 2 * D;

//! Ghost columns on each side of a 3D tile of depth D: D rounded up to whole 16-byte vectors, so
//! every lane's points are one aligned vector (the interior of a row starts 16-byte aligned).
template <int D, class T>
inline constexpr int plane_ghost_columns = (D + Lane<T>::width - 1) / Lane<T>::width * Lane<T>::width;

//! Columns of a 3D tile of depth D that are stored.
template <int D, class T>
inline constexpr int plane_columns_kept = 32 * Lane<T>::width - 2 * plane_ghost_columns<D, T>;

//! Shared memory of a block of depth d: two copies (step parity) of d centre planes, and a ring
//! of the right-hand sides of the last d + 1 planes.
template <class T>
constexpr std::size_t plane_stream_shared_bytes(int d) {
  return (3 * static_cast<std::size_t>(d) + 1) * plane_stream_rows * 32 * sizeof(Lane<T>);
}

//! Streams the tile whose first loaded column is `x0` (a multiple of the vector width, plus one)
//! and whose loaded rows start at `y0` down planes [z0, z1) of the 3D box `g`, storing level D of
//! the tile's kept part in `out`. Called by every thread of the block (lane = threadIdx.x, row =
//! threadIdx.y); `shared` is the block's `plane_stream_shared_bytes<T>(D)` of shared memory.
template <int D, class S, class T>
__device__ __forceinline__ void stream_planes(const S& s, const T* __restrict__ u, T* __restrict__ out,
                                              const T* __restrict__ b, const Shape& g, std::int64_t x0,
                                              std::int64_t y0, std::int64_t z0, std::int64_t z1, int lane,
                                              int row, Lane<T>* shared) {
  constexpr int W = Lane<T>::width;
  constexpr int strip = 32 * W;
  constexpr int G = plane_ghost_columns<D, T>;
  constexpr int R = plane_stream_rows;
  static_assert(plane_rows_kept<D> >= 1, "relax: the 3D stream's ghost rows leave no row to store");
  const std::int64_t i = y0 + row;       // this warp's row
  const std::int64_t x = x0 + lane * W;  // this lane's first column
  const bool row_in_grid = i >= 0 && i <= g.ny + 1;
  const bool row_interior = i >= 1 && i <= g.ny;
  const bool row_stored = row_interior && row >= D && row < R - D;
  unsigned in_grid = 0, interior = 0, stored = 0;
#pragma unroll
  for (int q = 0; q < W; ++q) {
    const std::int64_t c = x + q;
    const int local = lane * W + q;
    if (row_in_grid && c >= 0 && c <= g.nx + 1) in_grid |= 1u << q;
    if (row_interior && c >= 1 && c <= g.nx) interior |= 1u << q;
    if (row_stored && c >= 1 && c <= g.nx && local >= G && local < strip - G) stored |= 1u << q;
  }
  constexpr unsigned whole = (1u << W) - 1;
  const std::int64_t column = i * g.pitch + x;  // offset of the lane's first point in plane 0
  // Level 0 of plane k and its b (zero outside the grid, b zero outside the interior). The
  // lane's vector is aligned and lies in its row's allocation (rows are padded to whole lines and
  // lead with a padding of at least 16 bytes; the grid is zeroed at allocation).
  auto load = [&](std::int64_t k, Lane<T>& uk, Lane<T>& bk) {
    const bool plane_in_grid = k >= 0 && k <= g.nz + 1;
    const bool plane_interior = k >= 1 && k <= g.nz;
    uk = bk = Lane<T>{};
    if (plane_in_grid && in_grid != 0) uk = *reinterpret_cast<const Lane<T>*>(u + k * g.plane + column);
    if (plane_interior && interior != 0) bk = *reinterpret_cast<const Lane<T>*>(b + k * g.plane + column);
#pragma unroll
    for (int q = 0; q < W; ++q) {
      if (!(in_grid >> q & 1u)) uk.v[q] = T(0);
      if (!(interior >> q & 1u)) bk.v[q] = T(0);
    }
  };
  // Shared memory: centre copies [parity][level][row][lane], then the b ring [slot][row][lane].
  auto centre_at = [&](int parity, int level, int r) -> Lane<T>& {
    return shared[((parity * D + level) * R + r) * 32 + lane];
  };
  Lane<T>* ring = shared + 2 * D * R * 32;
  auto ring_at = [&](int slot) -> Lane<T>& { return ring[(slot * R + row) * 32 + lane]; };
  // The centre copies start at zero. The b ring does not: its slots are read before they are
  // written only in the first D steps, for planes the warm-up never stores (zeroing it too is
  // cheap and would keep uninitialised shared memory out of every register; not yet measured).
  for (int t = 0; t < 2 * D; ++t) shared[(t * R + row) * 32 + lane] = Lane<T>{};

  // One step: plane k enters, level t of plane k − t is computed for t = 1..D from `mid` (the
  // level t − 1 centre planes k − t) into `fresh` (the centre planes of the next step), and level
  // D of plane k − D is stored. Steps alternate the two register sets and the two shared copies.
  const int north = row > 0 ? row - 1 : row;  // the warp's own row at the tile's edge (never stored)
  const int south = row + 1 < R ? row + 1 : row;
  Lane<T> ahead_u, ahead_b;  // plane k + 1, loaded a step early to hide the load behind the barrier
  const std::int64_t first = z0 - D - 1, end = z1 + D;
  load(first, ahead_u, ahead_b);
  int slot = 0;  // the ring slot of plane k's b
  auto step = [&](std::int64_t k, int parity, const Lane<T> (&mid)[D], Lane<T> (&fresh)[D]) {
    fresh[0] = ahead_u;
    ring_at(slot) = ahead_b;
    if (k + 1 < end) load(k + 1, ahead_u, ahead_b);
    // Level t of a row is needed only within D − t rows of the stored rows: rows [t, R − t);
    // level t − 1's centre row is read there and by the rows next to them.
#pragma unroll
    for (int t = 0; t < D; ++t)
      if (row >= t && row < R - t) centre_at(parity, t, row) = mid[t];
    __syncthreads();
#pragma unroll
    for (int t = 1; t <= D; ++t) {
      // Level t of plane p = k − t from level t − 1 of planes p − 1 (up), p (mid), p + 1 (down).
      const std::int64_t p = k - t;
      const Lane<T>& c = mid[t - 1];
      const Lane<T>& down = fresh[t - 1];
      const T west = __shfl_up_sync(0xffffffffu, c.v[W - 1], 1);
      const T east = __shfl_down_sync(0xffffffffu, c.v[0], 1);
      Lane<T> level = c;
      if (row >= t && row < R - t && p >= 1 && p <= g.nz) {  // uniform across the warp
        const Lane<T> n = centre_at(parity, t - 1, north);
        const Lane<T> so = centre_at(parity, t - 1, south);
        const Lane<T> up = centre_at(parity ^ 1, t - 1, row);
        const Lane<T> rhs = ring_at(slot >= t ? slot - t : slot - t + D + 1);
        auto update = [&](int q) {
          const Neighbours<T, 3> nb{c.v[q],  n.v[q], so.v[q], q + 1 < W ? c.v[q + 1] : east,
                                    q > 0 ? c.v[q - 1] : west, up.v[q], down.v[q]};
          return s.update(nb, g.point<3>(p, i, x + q), rhs.v[q]);
        };
        if (interior == whole) {  // one straight block, so the W updates interleave
#pragma unroll
          for (int q = 0; q < W; ++q) level.v[q] = update(q);
        } else {  // a vector at the edge of the box: only its interior points
#pragma unroll
          for (int q = 0; q < W; ++q)
            if (interior >> q & 1u) level.v[q] = update(q);
        }
      }
      if (t < D) {
        fresh[t] = level;
      } else if (p >= z0 && p < z1 && stored != 0) {  // level D of plane k − D
        T* at = out + p * g.plane + column;
        if (stored == whole) {
          *reinterpret_cast<Lane<T>*>(at) = level;
        } else {
#pragma unroll
          for (int q = 0; q < W; ++q)
            if (stored >> q & 1u) at[q] = level.v[q];
        }
      }
    }
    slot = slot == D ? 0 : slot + 1;
  };
  Lane<T> even[D], odd[D];
#pragma unroll
  for (int t = 0; t < D; ++t) even[t] = Lane<T>{};
  for (std::int64_t k = first; k < end; k += 2) {
    step(k, 0, even, odd);
    if (k + 1 < end) step(k + 1, 1, odd, even);
  }
}

}  // namespace relax::detail
