#pragma once
//! \file
//! The block-level worker of a device loop that keeps its tile on chip for a whole solve
//! (`DeviceLoop<TemporalBlock<D, OnChip>>`): the tile and a halo D cells wide, and the tile's
//! right-hand side, live in shared memory from the first sweep to the last. Between batches of
//! at most D sweeps the block refreshes only its halo, from the frames (the owned points within
//! D of the tile's faces) that the adjacent tiles stored in global memory, so a batch is exact
//! (the ghost zone of `TemporalBlock`) and the iterates are Sync's bit for bit.
//!
//! The region is stored row by row with its rows padded to whole 16-byte vectors (the padding is
//! outside the grid). Every cell's class is kept in a byte beside the three arrays: outside the
//! grid, on the boundary ring (loaded once into both buffers, never updated), or interior with
//! its distance to the region's faces. A sweep takes one vector per thread and step (its centre,
//! north, south (and up and down) rows and b as vector loads, the cells beside it from the
//! neighbouring lanes) and updates the cells far enough from the faces for the batch (owned
//! cells always); a vector with nothing to update reads nothing more than its centre, which also
//! keeps every load inside the arrays (a vector on a row or plane face of the region has distance
//! 0 everywhere, and one on a column face reads the neighbouring row's cell beside it). The first version took one cell per thread and step: about 40 instructions and 8
//! shared-memory accesses per cell (ncu at 1024²: 2.9 IPC, shared memory 54% busy).

#include <relax/agent/vector_walk.cuh>
#include <relax/core/arith.hpp>
#include <relax/domain/shape.hpp>
#include <relax/domain/tile.hpp>
#include <relax/stencil/traits.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace relax::detail {

//! The padded layout of a resident region: rows of `pitch` cells (a multiple of the vector).
template <int Rank, class T>
struct ResidentLayout {
  static constexpr int width = Vec16<T>::width;
  TileRegion region;
  int pitch, plane, cells;

  RELAX_HOST_DEVICE explicit ResidentLayout(const TileRegion& r)
      : region(r), pitch((r.rx + width - 1) / width * width), plane(pitch * r.ry), cells(plane * r.rz) {}

  //! Shared memory of a block: three arrays of T and a class byte per cell.
  RELAX_HOST_DEVICE std::size_t shared_bytes() const {
    return static_cast<std::size_t>(cells) * (3 * sizeof(T) + 1);
  }
};

template <int Rank, int Threads, class T>
class ResidentTile {
 public:
  static constexpr bool folds_residual = false;  //!< a check's residual is a pass of its own (`fold_residual`)
  static constexpr signed char outside = -2;  //!< not a grid point: never loaded, read or stored
  static constexpr signed char ring = -1;     //!< boundary ring: loaded once, never updated
  static constexpr int W = Vec16<T>::width;
  static_assert(W == 2 || W == 4, "relax::detail::ResidentTile: T is float or double");
  static_assert(Threads % 32 == 0, "relax::detail::ResidentTile: whole warps (the sweeps shuffle across lanes)");

  //! Tile `tile` of `tiles` for thread `thread` of the block's `Threads`; `smem` (16-byte
  //! aligned) holds `ResidentLayout::shared_bytes()` bytes. Returns with the block synchronised.
  __device__ ResidentTile(const ResidentTiles& tiles, int tile, const Shape& g, T* smem, int thread)
      : layout_(tiles.region<Rank>()), halo_(tiles.halo), thread_(thread) {
    const int tx = tile % tiles.count_x, ty = tile / tiles.count_x % tiles.count_y;
    const int tz = tile / (tiles.count_x * tiles.count_y);
    origin_ = tile_origin<Rank>(tz, ty, tx, tiles.tile_x, tiles.tile_y, tiles.tile_z, halo_);
    cur_ = smem;
    next_ = smem + layout_.cells;
    rhs_ = smem + 2 * layout_.cells;
    level_ = reinterpret_cast<signed char*>(smem + 3 * layout_.cells);
    for_each<1>([&](int c, int ck, int ci, int cj) {
      const std::int64_t k = origin_.k0 + ck, i = origin_.i0 + ci, j = origin_.j0 + cj;
      const int d = distance_to_edge<Rank>(layout_.region, ck, ci, cj);
      level_[c] = cj >= layout_.region.rx || !in_grid<Rank>(g, k, i, j) ? outside
                  : !in_interior<Rank>(g, k, i, j)                      ? ring
                                                                         : static_cast<signed char>(d < 100 ? d : 100);
    });
    __syncthreads();
  }

  //! Loads the whole region of `u` into both buffers (the ring must be in both) and the
  //! right-hand side: b, or u + source (`arith::add`, as the fused right-hand side of the
  //! diffusion run) when `source` is given. Block-level.
  __device__ void load_all(const T* u, const T* __restrict__ b, const T* __restrict__ source, const Shape& g) {
    __syncthreads();  // a load for the next step: every thread is done with the last
    for_each<1>([&](int c, int ck, int ci, int cj) {
      const bool in = level_[c] != outside;
      const std::int64_t at = in ? global(g, ck, ci, cj) : 0;
      const T v = in ? u[at] : T(0);
      cur_[c] = v;
      next_[c] = v;
      rhs_[c] = level_[c] < 0 ? T(0) : source != nullptr ? arith::add(v, source[at]) : b[at];
    });
    __syncthreads();
  }

  //! Refreshes the interior halo cells from `src` (the adjacent tiles' frames). (Loading four
  //! cells a thread at a time, their loads issued together, changed nothing measurable: 2.46
  //! against 2.48 µs a sweep at 1024², D = 8, no checks.)
  __device__ void load_halo(const T* src, const Shape& g) {
    T* const cur = cur_;
    for_each<1>([&](int c, int ck, int ci, int cj) {
      if (level_[c] >= 0 && level_[c] < halo_) cur[c] = src[global(g, ck, ci, cj)];
    });
    __syncthreads();
  }

  //! `depth` (≤ halo) sweeps in shared memory. Sweep p updates the cells at distance ≥
  //! halo − depth + 1 + p from the faces: those whose neighbours are exact after sweep p − 1,
  //! which leaves every owned cell (distance ≥ halo) exact after the last. A cell that is not
  //! updated keeps its value (ring cells must: they are read).
  template <class S>
  __device__ void sweeps(const S& s, const Shape& g, int depth) {
    if (depth > halo_) __trap();  // the host pairs the kernel's D with the tiling's halo
    const int px = layout_.pitch, vx = px / W, ry = layout_.region.ry, units = layout_.cells / W;
    const int lane = thread_ % 32;
    // The thread's vectors v = thread + q · Threads; a warp's lanes hold consecutive vectors, so
    // the cells beside a vector come from the neighbouring lanes (a shuffle) except at a row's
    // ends and the warp's, where they are read from shared memory.
    const int step_j = Threads % vx, step_i = Threads / vx % ry, step_k = Threads / (vx * ry);
    for (int p = 0; p < depth; ++p) {
      const int reach = halo_ - depth + 1 + p;
      const T* const cur = cur_;
      T* const next = next_;
      int col = thread_ % vx, ci = thread_ / vx % ry, ck = thread_ / (vx * ry);
      for (int base = thread_ - lane; base < units; base += Threads) {  // the same trips for a warp
        const int v = base + lane, c = v * W;
        const bool active = v < units;
        Vec16<T> centre{};
        if (active) centre = vector(cur, c);
        const T from_east = __shfl_down_sync(0xffffffffu, centre.v[0], 1);
        const T from_west = __shfl_up_sync(0xffffffffu, centre.v[W - 1], 1);
        if (active)
          update_vector(s, g, cur, next, c, reach, centre, from_east, lane < 31 && col + 1 < vx, from_west,
                        lane > 0 && col > 0, ck, ci, col * W);
        col += step_j;
        if (col >= vx) col -= vx, ++ci;
        ci += step_i;
        if (ci >= ry) ci -= ry, ++ck;
        ck += step_k;
      }
      __syncthreads();
      next_ = cur_;
      cur_ = next;
    }
  }

  //! Stores the owned cells within `halo` of the faces (what the adjacent tiles' halos read).
  __device__ void store_frame(T* dst, const Shape& g) const {
    const T* const cur = cur_;
    for_each<1>([&](int c, int ck, int ci, int cj) {
      if (level_[c] >= halo_ && level_[c] < 2 * halo_) dst[global(g, ck, ci, cj)] = cur[c];
    });
  }

  //! Stores the inner cells: the owned cells that are not in the frame (nobody else reads them),
  //! so `dst` holding the frame holds every owned cell.
  __device__ void store_inner(T* dst, const Shape& g) const {
    const T* const cur = cur_;
    for_each<1>([&](int c, int ck, int ci, int cj) {
      if (level_[c] >= 2 * halo_) dst[global(g, ck, ci, cj)] = cur[c];
    });
  }

  //! Folds ‖b‖'s part of the calling thread's owned cells into `best`: |s.residual| with the
  //! interior at 0 and the ring as loaded, as `relax::rhs_norm` (call it after `load_all`).
  template <class S>
  __device__ void fold_rhs_norm(arith::bits_t<T>& best, const S& s, const Shape& g) const {
    fold_owned_residual(best, s, g, [&](int c) { return level_[c] == ring ? cur_[c] : T(0); });
  }

  //! Folds |s.residual| of the calling thread's owned cells into `best` (the bits of
  //! `relax::arith::abs_bits`, as the launched residual kernel). The halo must be fresh.
  template <class S>
  __device__ void fold_residual(arith::bits_t<T>& best, const S& s, const Shape& g) const {
    fold_owned_residual(best, s, g, [&](int c) { return cur_[c]; });
  }

 private:
  // Calls f(c, ck, ci, cj) for the calling thread's runs of `Step` cells (one cell, or one
  // vector): c = Step · (thread + q · Threads), with the coordinates of its first cell stepped
  // forward (no division after the first).
  template <int Step, class F>
  __device__ __forceinline__ void for_each(F f) const {
    const int rx = layout_.pitch / Step, ry = layout_.region.ry, units = layout_.cells / Step;
    const int step_j = Threads % rx, step_i = Threads / rx % ry, step_k = Threads / (rx * ry);
    int cj = thread_ % rx, ci = thread_ / rx % ry, ck = thread_ / (rx * ry);
    for (int u = thread_; u < units; u += Threads) {
      f(u * Step, ck, ci, cj * Step);
      cj += step_j;
      if (cj >= rx) cj -= rx, ++ci;
      ci += step_i;
      if (ci >= ry) ci -= ry, ++ck;
      ck += step_k;
    }
  }

  // Folds |s.residual| over the owned cells into `best`, cell values read by `value(c)`.
  template <class S, class Value>
  __device__ void fold_owned_residual(arith::bits_t<T>& best, const S& s, const Shape& g, Value value) const {
    const int px = layout_.pitch, plane = layout_.plane;
    for_each<1>([&](int c, int ck, int ci, int cj) {
      if (level_[c] < halo_) return;
      Neighbours<T, Rank> nb;
      if constexpr (Rank == 2) nb = {value(c), value(c - px), value(c + px), value(c + 1), value(c - 1)};
      else nb = {value(c), value(c - px), value(c + px), value(c + 1), value(c - 1), value(c - plane), value(c + plane)};
      const auto bits = arith::abs_bits(s.residual(nb, point(g, ck, ci, cj), rhs_[c]));
      best = best > bits ? best : bits;
    });
  }

  // One vector of a sweep: the cells of vector c whose class reaches `reach` get the update,
  // the others keep their value; a vector with none is left alone (and reads nothing more).
  // The cells beside it come from the neighbouring lanes when `east_in_lane` / `west_in_lane`,
  // else from shared memory, read only once the vector has a cell to update (it is then on no
  // row or plane face of the region, so c − 1 and c + W are inside the array).
  template <class S>
  __device__ __forceinline__ void update_vector(const S& s, const Shape& g, const T* cur, T* next, int c, int reach,
                                                const Vec16<T>& centre, T from_east, bool east_in_lane, T from_west,
                                                bool west_in_lane, int ck, int ci, int cj) const {
    // The W class bytes of the vector in one load (level_ + c is W-byte aligned).
    using Word = std::conditional_t<W == 4, std::uint32_t, std::uint16_t>;
    const Word word = *reinterpret_cast<const Word*>(level_ + c);
    signed char level[W];
    bool any = false;
#pragma unroll
    for (int q = 0; q < W; ++q) {
      level[q] = static_cast<signed char>(word >> (8 * q));
      any |= level[q] >= reach;
    }
    if (!any) return;
    const T east = east_in_lane ? from_east : cur[c + W];
    const T west = west_in_lane ? from_west : cur[c - 1];
    const int px = layout_.pitch;
    const Vec16<T> north = vector(cur, c - px), south = vector(cur, c + px), b = vector(rhs_, c);
    Vec16<T> up{}, down{};
    if constexpr (Rank == 3) {
      up = vector(cur, c - layout_.plane);
      down = vector(cur, c + layout_.plane);
    }
    Vec16<T> out;
#pragma unroll
    for (int q = 0; q < W; ++q) {
      const T e = q + 1 < W ? centre.v[q + 1] : east;
      const T w = q > 0 ? centre.v[q - 1] : west;
      Neighbours<T, Rank> nb;
      if constexpr (Rank == 2) nb = {centre.v[q], north.v[q], south.v[q], e, w};
      else nb = {centre.v[q], north.v[q], south.v[q], e, w, up.v[q], down.v[q]};
      out.v[q] = level[q] >= reach ? s.update(nb, point(g, ck, ci, cj + q), b.v[q]) : centre.v[q];
    }
    *reinterpret_cast<Vec16<T>*>(next + c) = out;
  }

  static __device__ Vec16<T> vector(const T* p, int c) { return *reinterpret_cast<const Vec16<T>*>(p + c); }

  __device__ std::int64_t global(const Shape& g, int ck, int ci, int cj) const {
    return g.at(origin_.k0 + ck, origin_.i0 + ci, origin_.j0 + cj);
  }
  __device__ Point point(const Shape& g, int ck, int ci, int cj) const {
    return g.point<Rank>(origin_.k0 + ck, origin_.i0 + ci, origin_.j0 + cj);
  }

  ResidentLayout<Rank, T> layout_;
  TileOrigin origin_{};
  int halo_;
  int thread_;
  T* cur_;   //!< the iterate
  T* next_;  //!< the other buffer
  T* rhs_;
  signed char* level_;
};

}  // namespace relax::detail
