#pragma once
//! \file
//! The block-level worker of `TemporalBlock<D, ColumnStream>` in 3D: exact temporal blocking that
//! streams an (x, y) tile down a segment of planes, a queue of D time levels per lane.
//!
//! A block of `plane_stream_warps` warps owns a tile of 32·W columns (W = 16 bytes of points per
//! lane) by `plane_stream_rows` rows, loaded with a ghost zone of D columns (rounded up to whole
//! vectors) and D rows on each side, and a segment of planes (or, where a plane's last column of
//! tiles stores only a few columns, several such narrow tiles side by side in the lanes: a folded
//! tile, `agent/plane_tiling.hpp`). Warp w owns the
//! `plane_rows_per_warp` consecutive rows from w·`plane_rows_per_warp`; a lane owns one vector of
//! each of them. The block walks down z one plane at a time: at step k plane k enters, and for
//! levels t = 1..D the lane computes level t of plane k − t from level t − 1 of planes k − t − 1
//! (up), k − t (centre) and k − t + 1 (down); level D of plane k − D is stored.
//!
//! What lives where, chosen so the shared-memory pipe, which bounded the first form of this
//! kernel (one row per warp, every level's centre and every b read from shared memory: about 20
//! bytes of shared traffic per point and level), moves about half of that:
//! - registers: per level below D, the lane's vectors of two planes (up and centre), the planes
//!   alternating between two register sets so no value is copied from step to step;
//! - neighbours within the warp's rows (north, south), and east and west (warp shuffles), come
//!   from registers;
//! - shared memory: each warp's top and bottom rows of every level, for the warps above and below
//!   (double-buffered by the step's parity: one barrier per step); b of the last D + 2 planes,
//!   and plane k + 1 of u, staged by asynchronous copies that the lane reads back itself (no
//!   register holds a load in flight, and no barrier guards them).
//! Every point of the tile is computed with the stencil's `update` (at a global index clamped into
//! the box, so a stencil reading a coefficient field stays inside it); points outside the interior
//! then take back their value (the boundary ring and what lies beyond it), which only the lanes
//! holding such points do. Values near the tile's loaded edges are wrong at the levels whose
//! neighbours were never loaded; no stored point depends on them. Every interior update is the
//! stencil's `update` on the neighbours `Sync` reads, so D steps equal D synchronous sweeps bit
//! for bit.

#include <relax/agent/async_copy.cuh>
#include <relax/agent/column_stream.cuh>
#include <relax/agent/plane_claims.hpp>
#include <relax/agent/plane_tiling.hpp>
#include <relax/agent/tuning.hpp>
#include <relax/domain/shape.hpp>
#include <relax/stencil/traits.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace relax::detail {

//! Warps of a 3D stream block, rows each warp owns, and rows of the tile (ghost zone included).
inline constexpr int plane_stream_warps = tuning::plane_stream_warps;
inline constexpr int plane_rows_per_warp = tuning::plane_stream_rows_per_warp;
inline constexpr int plane_stream_rows = plane_stream_warps * plane_rows_per_warp;

//! Edge-row slots of a level and parity: one a warp, and with `tuning::plane_stream_edge_padding`
//! one above the first warp and one below the last, which those warps read as their missing
//! neighbour without a branch. Without the padding they read their own slot instead (clamped):
//! either value reaches only the tile's ghost rows, which are never stored.
inline constexpr bool plane_edges_padded = tuning::plane_stream_edge_padding;
inline constexpr int plane_edge_slots = plane_stream_warps + (plane_edges_padded ? 2 : 0);

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

//! The launched 3D stream's tiling of the box's planes for depth D, folded and stacked where that
//! saves tiles (`agent/plane_tiling.hpp`).
template <int D, class T>
RELAX_HOST_DEVICE inline PlaneTiling plane_stream_tiling(const Shape& g) {
  return plane_tiling(g.nx, g.ny, Lane<T>::width, plane_columns_kept<D, T>, plane_rows_kept<D>,
                      plane_ghost_columns<D, T>, D, true, tuning::plane_stream_stack ? plane_rows_per_warp : 0);
}

//! Shared memory of a block of depth d: the edge rows ([2 parities][d levels][`plane_edge_slots`]
//! [top, bottom]), the b ring (d + 2 planes of the tile) and the staged plane of u, in lanes'
//! vectors.
template <class T>
constexpr std::size_t plane_stream_shared_bytes(int d) {
  const std::size_t edges = 4 * static_cast<std::size_t>(d) * plane_edge_slots;
  const std::size_t planes = (static_cast<std::size_t>(d) + 3) * plane_stream_rows;
  return (edges + planes) * 32 * sizeof(Lane<T>);
}

//! How far a piece streams: to its `z1` (the default), or as far as the block claims from its
//! claim word (`agent/plane_claims.hpp`), `z1` then being the end of what it has claimed so far.
struct FixedEnd {};
struct ClaimedEnd {
  unsigned long long* word;  //!< the block's claim word (global memory)
  int* shared_end;           //!< a shared int: where a claim leaves the claimed end for the block
};

//! Planes claimed at a time (`ClaimedEnd`). A claim is issued when 6 steps are left before the
//! stream would stop fetching planes, and its end is known two step pairs later: a chunk of at
//! least 8 planes keeps the claims ahead of the stream.
inline constexpr int plane_claim_chunk = tuning::plane_stream_steal_chunk;
static_assert(plane_claim_chunk >= 8, "relax: a chunk of claimed planes shorter than a claim's round trip");

//! Calls `f(std::integral_constant<int, t>{})` for t = First .. Last.
template <int First, int Last, class F>
__device__ __forceinline__ void for_each_level(F&& f) {
  if constexpr (First <= Last) {
    f(std::integral_constant<int, First>{});
    for_each_level<First + 1, Last>(f);
  }
}

//! Streams `tile` (`agent/plane_tiling.hpp`: its first loaded column `x0`, a multiple of the
//! vector width plus one, its first loaded row `y0`, and its segments) down planes [z0, z1) of the
//! 3D box `g`, storing level D of the tile's kept part in `out`. Called by every thread of the
//! block (lane = threadIdx.x, warp = threadIdx.y); `shared` is the block's
//! `plane_stream_shared_bytes<T>(D)` of shared memory. u is read through L2 only, so a caller may
//! write it between calls (the device loop does). `Split`: `tuning::plane_stream_split`, which
//! see. `Folded` false: `tile` is whole (one segment of 32 lanes), which the code then takes as
//! constants (the persistent loops, whose kernels are as before folding came in). `end`:
//! `FixedEnd`, or `ClaimedEnd` to stream on while the block's claims on its word extend the piece
//! (stealing, `agent/plane_claims.hpp`).
template <int D, bool Split = tuning::plane_stream_split, bool Folded = true, class End = FixedEnd, class S, class T>
__device__ __forceinline__ void stream_planes(const S& s, const T* u, T* __restrict__ out,
                                              const T* __restrict__ b, const Shape& g, const PlaneTile& tile,
                                              std::int64_t z0, std::int64_t z1, int lane, int warp,
                                              Lane<T>* shared, const End& claims = {}) {
  constexpr int W = Lane<T>::width;
  constexpr int RW = plane_rows_per_warp;
  constexpr int NW = plane_stream_warps;
  constexpr int R = plane_stream_rows;
  constexpr int G = plane_ghost_columns<D, T>;
  constexpr int slots = D + 2;
  constexpr unsigned whole = (1u << W) - 1;
  constexpr bool split = Split;
  static_assert(plane_rows_kept<D> >= 1, "relax: the 3D stream's ghost rows leave no row to store");

  // The lane's segment of the tile and its place there (a whole tile: one segment of 32 lanes;
  // lanes past the last segment hold no point), the warp's stacked segment and its place there
  // (a tile not stacked: one of all the warps; warps past the last segment hold no point), then
  // which of its columns and of its rows lie in the grid, in its interior, and are stored by this
  // tile.
  const int lanes = Folded ? tile.lanes : 32;
  const int segment = Folded ? lane / lanes : 0, segment_lane = lane - segment * lanes;
  const bool stacked = Folded && tile.stacks > 1;
  const int stack_warps = stacked ? tile.stack_warps : NW;  // warps of the warp's stacked segment
  const int stack = stacked ? warp / stack_warps : 0, stack_warp = warp - stack * stack_warps;
  const bool in_segment = !Folded || (segment < tile.segments && stack < tile.stacks);
  const std::int64_t x = tile.x0 + std::int64_t{stack} * plane_columns_kept<D, T> + segment_lane * W;
  const std::int64_t i0 = tile.y0 + segment * plane_rows_kept<D> + stack_warp * RW;  // the warp's first row
  unsigned col_grid = 0, col_interior = 0, col_stored = 0, row_grid = 0, row_interior = 0, row_stored = 0;
#pragma unroll
  for (int q = 0; q < W; ++q) {
    const std::int64_t c = x + q;
    const int local = segment_lane * W + q;
    if (in_segment && c >= 0 && c <= g.nx + 1) col_grid |= 1u << q;
    if (in_segment && c >= 1 && c <= g.nx) col_interior |= 1u << q;
    if (in_segment && c >= 1 && c <= g.nx && local >= G && local < lanes * W - G) col_stored |= 1u << q;
  }
#pragma unroll
  for (int r = 0; r < RW; ++r) {
    const std::int64_t i = i0 + r;
    const int local = stack_warp * RW + r;
    if (i >= 0 && i <= g.ny + 1) row_grid |= 1u << r;
    if (i >= 1 && i <= g.ny) row_interior |= 1u << r;
    if (i >= 1 && i <= g.ny && local >= D && local < stack_warps * RW - D) row_stored |= 1u << r;
  }
  // The lanes holding points outside the interior (the ring and beyond): those points keep their
  // value, which the lanes restore after each level.
  unsigned keeps = 0;  // bit r·W + q: the lane's point (r, q) is outside the interior
#pragma unroll
  for (int r = 0; r < RW; ++r)
#pragma unroll
    for (int q = 0; q < W; ++q)
      if (!((row_interior >> r) & (col_interior >> q) & 1u)) keeps |= 1u << (r * W + q);
  asm volatile("" : "+r"(keeps));  // kept in a register: ptxas otherwise rebuilds it at every level
  const std::int64_t base = i0 * g.pitch + x;  // the lane's first point of row i0 in plane 0
  const int nz = static_cast<int>(g.nz);       // the launch checks that planes fit an int
  constexpr bool claimed = std::is_same_v<End, ClaimedEnd>;
  const int kz0 = static_cast<int>(z0);
  int kz1 = static_cast<int>(z1);  // with claims, the end of the planes claimed so far
  // Rows of plane k the lane copies: u where row and column are in the grid, b where interior.
  const unsigned u_rows = col_grid != 0 ? row_grid : 0u, b_rows = col_interior != 0 ? row_interior : 0u;

  Lane<T>* const edges = shared;
  constexpr int ES = plane_edge_slots;
  Lane<T>* const ring = shared + 4 * D * ES * 32 + warp * RW * 32 + lane;  // slot s, row r: + (s R + r) 32
  Lane<T>* const staged = shared + 4 * D * ES * 32 + slots * R * 32 + warp * RW * 32 + lane;  // row r: + 32 r
  // Edge row `side` (0: top, 1: bottom) of level `level` of warp `w` (−1 .. NW: the padding, or
  // the warp's own slot without it).
  auto edge = [&](int parity, int level, int w, int side) -> Lane<T>& {
    if constexpr (plane_edges_padded) {
      return edges[(((parity * D + level) * (NW + 2) + w + 1) * 2 + side) * 32 + lane];
    } else {
      const int at = w < 0 ? 0 : w >= NW ? NW - 1 : w;
      return edges[(((parity * D + level) * NW + at) * 2 + side) * 32 + lane];
    }
  };
  // Plane k of u into the staging rows, then its b into ring slot `slot`: two groups of copies,
  // so a step can wait for u alone. Each copy is tested: zeros where the point lies outside the
  // grid (u) or the interior (b).
  const T* const u_lane = u + base;
  const T* const b_lane = b + base;
  auto fetch = [&](int k, int slot) {
    const std::int64_t at = k * g.plane;
    const unsigned u_read = k >= 0 && k <= nz + 1 ? u_rows : 0u, b_read = k >= 1 && k <= nz ? b_rows : 0u;
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      const bool read = u_read >> r & 1u;
      copy_async_16(staged + 32 * r, read ? u_lane + at + r * g.pitch : u + 1, read);
    }
    commit_copies();
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      const bool read = b_read >> r & 1u;
      copy_async_16(ring + (slot * R + r) * 32, read ? b_lane + at + r * g.pitch : b + 1, read);
    }
    commit_copies();
  };
  // The global index of the lane's point (p, r, q), clamped into the box: the update of a point
  // outside the interior is computed and then dropped, and must not read outside a coefficient
  // field (unused by stencils that read no field, so it costs them nothing).
  auto point = [&](int p, int r, int q) {
    const std::int64_t k = p < 1 ? 1 : p > nz ? nz : p;
    const std::int64_t i = i0 + r < 1 ? 1 : i0 + r > g.ny ? g.ny : i0 + r;
    const std::int64_t j = x + q < 1 ? 1 : x + q > g.nx ? g.nx : x + q;
    return g.point<3>(k, i, j);
  };

  const int first = kz0 - D;
  int end = kz1 + D;  // steps [first, end)
  // The first step reads the edge rows of the parity before it: zeros.
  for (int t = 0; t < D; ++t)
    for (int side = 0; side < 2; ++side) edge((first - 1) & 1, t, warp, side) = Lane<T>{};
  __syncthreads();  // also: the caller's previous tile is done with the shared memory
  int slot = ((first % slots) + slots) % slots;  // the ring slot of plane k's b
  fetch(first, slot);

  // One step: `up` and `mid` hold level t − 1 of planes k − t − 1 and k − t for t = 1..D; after
  // the step `up` holds planes k − t + 1 (the two sets swap roles at every step). Every warp
  // computes every level, also a warp whose rows no stored point needs at that level (the first
  // and last warps at the deepest levels): a branch around it would cost every warp register
  // copies at the join.
  //
  // `checked` (std::true_type or std::false_type) says whether a level's plane may lie outside the
  // box; with `tuning::plane_stream_split` the steps whose planes all lie in it run a copy
  // without that check (see the loop below).
  auto step = [&](auto checked, int k, Lane<T> (&up)[D][RW], Lane<T> (&mid)[D][RW]) {
    constexpr bool Checked = decltype(checked)::value;
    const int parity = k & 1;
    const int next_slot = slot + 1 == slots ? 0 : slot + 1;
    wait_copies<1>();  // plane k of u is staged (its b, first read at step k + 1, may still be on its way)
    Lane<T> fresh[RW];  // level t − 1 of plane k − t + 1
#pragma unroll
    for (int r = 0; r < RW; ++r) fresh[r] = staged[32 * r];
    if (k + 1 < end) fetch(k + 1, next_slot);
    edge(parity, 0, warp, 0) = fresh[0];
    edge(parity, 0, warp, 1) = fresh[RW - 1];
    for_each_level<1, D>([&](auto level) {
      constexpr int t = decltype(level)::value;
      const int p = k - t;
      const Lane<T>(&c)[RW] = mid[t - 1];
      Lane<T> next[RW];
      // With the split, a checked step computes no level that keeps its value or that no stored
      // point needs: a plane outside the box, and, in the stream's first 2D steps, level t before
      // step first + 2t (level t of plane p is needed from p = z0 − (D − t), which step p + t
      // computes; the level's value is then the previous level's, which nothing needed reads).
      // A piece's warm-up so computes D(D − 1) levels instead of 2D · D. Without the split
      // every step is checked, and this branch would cost all of them its join.
      if (split && Checked && (p < 1 || p > nz || k < first + 2 * t)) {
#pragma unroll
        for (int r = 0; r < RW; ++r) next[r] = c[r];
      } else {
        const Lane<T> north = edge(parity ^ 1, t - 1, warp - 1, 1);
        const Lane<T> south = edge(parity ^ 1, t - 1, warp + 1, 0);
        const int b_slot = slot - t < 0 ? slot - t + slots : slot - t;
#pragma unroll
        for (int r = 0; r < RW; ++r) {
          const Lane<T> rhs = ring[(b_slot * R + r) * 32];
          const T west = __shfl_up_sync(0xffffffffu, c[r].v[W - 1], 1);
          const T east = __shfl_down_sync(0xffffffffu, c[r].v[0], 1);
          const Lane<T>& n = r > 0 ? c[r > 0 ? r - 1 : 0] : north;
          const Lane<T>& so = r + 1 < RW ? c[r + 1 < RW ? r + 1 : r] : south;
#pragma unroll
          for (int q = 0; q < W; ++q) {
            const Neighbours<T, 3> nb{c[r].v[q],
                                      n.v[q],
                                      so.v[q],
                                      q + 1 < W ? c[r].v[q + 1 < W ? q + 1 : q] : east,
                                      q > 0 ? c[r].v[q > 0 ? q - 1 : 0] : west,
                                      up[t - 1][r].v[q],
                                      fresh[r].v[q]};
            next[r].v[q] = s.update(nb, point(p, r, q), rhs.v[q]);
          }
        }
        // A plane outside the interior keeps its value (the same for the whole block).
        if (Checked && (p < 1 || p > nz)) {
#pragma unroll
          for (int r = 0; r < RW; ++r) next[r] = c[r];
        } else if (keeps != 0) {  // so do the lane's points outside the interior
          // With the split, opaque here too: with the registers the unchecked steps leave, ptxas
          // would otherwise hoist the mask's 16 bits into 16 registers for the whole stream.
          unsigned mask = keeps;
          if constexpr (split) asm volatile("" : "+r"(mask));
#pragma unroll
          for (int r = 0; r < RW; ++r)
#pragma unroll
            for (int q = 0; q < W; ++q)
              if (mask >> (r * W + q) & 1u) next[r].v[q] = c[r].v[q];
        }
      }
#pragma unroll
      for (int r = 0; r < RW; ++r) up[t - 1][r] = fresh[r];
      if constexpr (t < D) {
        edge(parity, t, warp, 0) = next[0];
        edge(parity, t, warp, 1) = next[RW - 1];
#pragma unroll
        for (int r = 0; r < RW; ++r) fresh[r] = next[r];
      } else if (p >= kz0 && p < kz1 && row_stored != 0 && col_stored != 0) {  // level D of plane k − D
        T* const at = out + p * g.plane + base;
#pragma unroll
        for (int r = 0; r < RW; ++r) {
          if (!(row_stored >> r & 1u)) continue;
          T* const row = at + r * g.pitch;
          if (col_stored == whole) {
            *reinterpret_cast<Lane<T>*>(row) = next[r];
          } else {
#pragma unroll
            for (int q = 0; q < W; ++q)
              if (col_stored >> q & 1u) row[q] = next[r].v[q];
          }
        }
      }
    });
    slot = next_slot;
    __syncthreads();  // this step's edge rows are in place; the last step's have been read
  };
  Lane<T> even[D][RW], odd[D][RW];
#pragma unroll
  for (int t = 0; t < D; ++t)
#pragma unroll
    for (int r = 0; r < RW; ++r) even[t][r] = odd[t][r] = Lane<T>{};
  // Claims (`ClaimedEnd`), one step pair at a time: 0, none in flight: thread (0, 0) issues one
  // when 6 steps are left before the stream would stop fetching; 1, in flight: it leaves the end
  // it claimed in shared memory (the step pair's barriers show it to the block); 2: every thread
  // takes the end, and 3 once a claim got nothing (the word was spent or cut at the claimed end).
  int claim_state = 0;
  unsigned long long claim_old = 0;
  for (int k = first; k < end; k += 2) {
    if constexpr (claimed) {
      const bool leader = lane == 0 && warp == 0;
      if (claim_state == 2) {
        const int z = *claims.shared_end;
        claim_state = z > kz1 ? 0 : 3;
        kz1 = z;
        end = kz1 + D;
      } else if (claim_state == 1) {
        if (leader) *claims.shared_end = static_cast<int>(plane_claimed_end(claim_old, kz1, plane_claim_chunk));
        claim_state = 2;
      } else if (claim_state == 0 && k + 6 >= end) {
        if (leader) claim_old = atomicAdd(claims.word, plane_claim_increment(plane_claim_chunk));
        claim_state = 1;
      }
    }
    if constexpr (split) {
      // Steps k and k + 1 compute planes k - D .. k: where those all lie in [1, nz], past the
      // stream's warm-up, neither checks its plane. Checked: the first 2D steps (the warm-up,
      // whose checked form skips the levels nothing needs), at the bottom face about the last D,
      // and the lone last step of a stream with an odd number of steps.
      if (k - D >= 1 && k <= nz && k + 1 < end && k >= first + 2 * D) {
        step(std::false_type{}, k, even, odd);
        step(std::false_type{}, k + 1, odd, even);
        continue;
      }
    }
    step(std::true_type{}, k, even, odd);
    if (k + 1 < end) step(std::true_type{}, k + 1, odd, even);
  }
  wait_copies<0>();  // nothing may land in the caller's shared memory after the return
}

}  // namespace relax::detail
