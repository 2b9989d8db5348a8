// Study (not a strategy): the 3D plane stream of `TemporalBlock<D, ColumnStream>`
// (`agent/plane_stream.cuh`) with its per-step bookkeeping taken out of the loop.
//
// Why: Nsight Compute found the stream latency- and issue-bound (0.55 instructions issued a cycle
// and scheduler, two warps a scheduler), not memory-bound (3.1 DRAM bytes a point). In the
// library's stream-K kernel at D = 4 (float, sm_90), a pair of steps is 2007 instructions of code
// that every warp of an interior tile runs, 1024 of them the stencil's FADD and FMUL
// (benchmarks/sass_steps.py; docs/results/sass/lean_plane_stream_steps.txt). Read from the SASS,
// much of the rest is bookkeeping:
// - at the top of every step, the lane's 64-bit addresses of its four rows of u and b in plane
//   k + 1 (`fetch`: eight `cp.async`, each with its own address and zero-fill predicate), and
//   row and column masks that ptxas, at 227 registers, rebuilds instead of keeping;
// - a level where every plane lies in the box still sets its 16 results to the centre values
//   first (the "plane outside the box keeps its value" case) and branches around the real
//   results' last multiply: 16 MOVs, a compare pair and a branch, D times a step.
// Three changes, each a parameter of the form here (`Form`), measured against the library's
// kernel in one process:
// - `Split`: steps whose D planes all lie in [1, nz] (every step but the first and last few of a
//   piece that touches the box's top or bottom face) run a copy of the step with no plane check;
// - `Tma`: plane k + 1 of u and of b come in as two boxes of the tensor memory accelerator
//   (`cp.async.bulk.tensor`, 128 x 32 x 1 points each), issued by one thread and awaited at an
//   mbarrier, double-buffered by the plane's parity (one more plane of shared memory). The boxes
//   fill what lies outside u's grid (ring included) and outside b's interior with zeros, which is
//   what the lanes' copies do now, at the grain of a point instead of a vector (the points that
//   differ lie outside the interior, are restored or never reach a stored point);
// - the block's shape, 12 warps of 3 rows (tile 128 x 36, 28 rows stored at D = 4) instead of 8 of
//   4: three warps a scheduler instead of two, for the latency that two warps leave uncovered,
//   and a ghost zone of 8 rows in 36 instead of 32; a thread then has at most 168 registers.
//   D = 4 fits the shared memory only without the edge rows' padding slots (`Padded`): 222 KiB.
// Static counts of a pair of steps where all planes lie in the box (the file named above):
//   D = 4: library 2007, Split 1632 (-19%), Tma 1944 (-3%), both 1677 (-16%);
//   D = 3: library 1699, Split 1315 (-23%; 1318 as the library's switch compiles it), Tma 1574
//   (-7%), both 1309 (-23%).
// Split costs registers (D = 4: 227 -> 240; with Tma 255 and 40 bytes of spill, in the checked
// steps only); Tma saves them (203). 12 x 3 at D = 4 (a warp's pair of steps is 3/4 of the work
// of a warp of 4 rows): 1633 instructions a pair, 168 registers and 4 bytes of spill; with
// Split 1318 and 84 bytes of spill. Per stored point and step (the whole block's common code
// over its 120 x 24 or 120 x 28 stored points): library 2.79 instructions, Split 2.27, 12 x 3
// 2.92, 12 x 3 with Split 2.35. What the counts are worth in time only the GPU says: the
// stream is also latency-bound (the reason for 12 x 3), and the box loads change the memory
// pipe's traffic. (12 x 3 was measured once, at D = 3 on an earlier form of the agent: 503.8
// against 8 x 4's 493.2 G updates/s; D = 4 did not fit then.)
// Tried and not kept (static counts, this file's form at the time): a third register set so
// that no level copies its fresh plane (the sets rotating with period 3, three steps a pass):
// D = 3, 659 -> 651 instructions a step with Split, still 32-56 MOVs a step; D = 4 spills 84
// bytes. Checked and unchecked pairs in separate loops: no fewer (ptxas copies the register
// sets at the unchecked loop's top instead).
// The library carries Split itself, as `tuning::plane_stream_split` (on for the launched kernels
// since it was measured here, 2026-12-05; RELAX_TUNING_PLANE_STREAM_SPLIT=0 turns it off, and
// the library's launch also folds narrow tiles and weights stream-K's shares, which these forms
// do not), and can be built 12 x 3 without the padding
// (RELAX_TUNING_PLANE_STREAM_WARPS, _ROWS_PER_WARP, _EDGE_PADDING). Build this study with the
// library's defaults: the "library" rows and the forms' default shape follow those settings (the
// output's first line says what they were).
// All variants use the stream-K schedule (`plane_share`, `plane_piece`), as the library does
// from D = 3; the comparison is with the library's stream-K kernel, and it compares bits too.
//
// Not yet run on a GPU: built with the benchmarks (relax_study_lean_stream); run it with no
// arguments (`benchmarks/run_h200.sh study`), or with --one for Nsight Compute (512^3, D = 4,
// each kernel launched twice). It traps (a bounded wait) rather than hangs if a box never lands, and exits 1 if a
// variant's bits differ from the library's anywhere.
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>

#include "study_support.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace relax;
using namespace relax::detail;
using study::time_ms;

// ---- The tensor memory accelerator and mbarriers (sm_90) -------------------------------------

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void barrier_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(bar)) : "memory");
}

// Makes the initialised mbarriers visible to the asynchronous proxy (the copies complete on them).
__device__ __forceinline__ void barrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// The one arrival of this phase, announcing `bytes` to come from copies that complete on `bar`.
__device__ __forceinline__ void barrier_expect(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

// Waits until the phase of parity `parity` of `bar` has completed; traps after about 2^26 tries
// (a box that never lands is an error, not a hang).
__device__ __forceinline__ void barrier_wait(std::uint64_t* bar, unsigned parity) {
  for (unsigned tries = 0;; ++tries) {
    unsigned done = 0;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
    if (done) return;
    if (tries > (1u << 26)) __trap();
  }
}

// Starts copying the box at (x, y, z) of `map` into `dst` (shared, 128-byte aligned); it
// completes on `bar`.
__device__ __forceinline__ void box_load(void* dst, const CUtensorMap* map, int x, int y, int z, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(shared_address(bar))
      : "memory");
}

// ---- The agent, with the changes ----------------------------------------------------------

// What a variant changes: the two flags, and the block's shape (warps, rows a warp). The library's
// edge rows keep a padding slot above the first warp and below the last, so those warps read a
// neighbour that is not there without a branch; `Padded = false` drops it (their north or south
// is then their own slot: any finite value does, it reaches only the ghost rows), which is what
// lets 12 warps of 3 rows fit D = 4 in an H200's 227 KiB of shared memory (222 KiB without the
// padding, 238 with it).
template <bool TmaV, bool SplitV, int Warps = plane_stream_warps, int RowsPerWarp = plane_rows_per_warp,
          bool PaddedV = true>
struct Form {
  static constexpr bool tma = TmaV, split = SplitV, padded = PaddedV;
  static constexpr int warps = Warps, rows_per_warp = RowsPerWarp, rows = Warps * RowsPerWarp;
  static constexpr int edge_slots = Warps + (PaddedV ? 2 : 0);
};

// Shared memory: planes first (the staging of u: two planes with Tma, one without; D + 2 of b;
// each a plane of the tile, 16 KiB at 8 x 4, so every plane is 128-byte aligned for the boxes),
// then the edge rows as in the library, then (Tma) two mbarriers. Without Tma, at the library's
// shape, that is the library's size, so both get the same split of the SM's memory between
// shared memory and L1.
template <class F, class T>
constexpr std::size_t lean_plane_bytes = F::rows * 32 * sizeof(Lane<T>);
template <class F, class T>
__host__ __device__ constexpr std::size_t lean_planes_bytes(int d) {
  return ((F::tma ? 2 : 1) + static_cast<std::size_t>(d) + 2) * lean_plane_bytes<F, T>;
}
template <class F, class T>
__host__ __device__ constexpr std::size_t lean_edges_bytes(int d) {
  return 4 * static_cast<std::size_t>(d) * F::edge_slots * 32 * sizeof(Lane<T>);
}
template <class F, class T>
__host__ __device__ constexpr std::size_t lean_shared_bytes(int d) {
  return lean_planes_bytes<F, T>(d) + lean_edges_bytes<F, T>(d) + (F::tma ? 2 * sizeof(std::uint64_t) : 0);
}

// `stream_planes` of agent/plane_stream.cuh with the form's changes; everything else as there (its
// comments say why). `phases` holds the parity each mbarrier waits for next (bit j: barrier j),
// kept by every thread alike across calls.
template <int D, class F, class S, class T>
__device__ __forceinline__ void stream_planes_lean(const S& s, const T* u, T* __restrict__ out,
                                                   const T* __restrict__ b, const Shape& g, std::int64_t x0,
                                                   std::int64_t y0, std::int64_t z0, std::int64_t z1, int lane,
                                                   int warp, unsigned char* bytes, const CUtensorMap* u_map,
                                                   const CUtensorMap* b_map, unsigned& phases) {
  constexpr int W = Lane<T>::width;
  constexpr bool Tma = F::tma, Split = F::split;
  constexpr int RW = F::rows_per_warp;
  constexpr int NW = F::warps;
  constexpr int R = F::rows;
  constexpr int G = plane_ghost_columns<D, T>;
  constexpr int slots = D + 2;
  constexpr unsigned whole = (1u << W) - 1;
  constexpr int plane_lanes = R * 32;  // Lane<T>s of one plane
  static_assert(R - 2 * D >= 1, "relax: the 3D stream's ghost rows leave no row to store");

  const std::int64_t x = x0 + lane * W;
  const std::int64_t i0 = y0 + warp * RW;
  unsigned col_grid = 0, col_interior = 0, col_stored = 0, row_grid = 0, row_interior = 0, row_stored = 0;
#pragma unroll
  for (int q = 0; q < W; ++q) {
    const std::int64_t c = x + q;
    const int local = lane * W + q;
    if (c >= 0 && c <= g.nx + 1) col_grid |= 1u << q;
    if (c >= 1 && c <= g.nx) col_interior |= 1u << q;
    if (c >= 1 && c <= g.nx && local >= G && local < 32 * W - G) col_stored |= 1u << q;
  }
#pragma unroll
  for (int r = 0; r < RW; ++r) {
    const std::int64_t i = i0 + r;
    const int local = warp * RW + r;
    if (i >= 0 && i <= g.ny + 1) row_grid |= 1u << r;
    if (i >= 1 && i <= g.ny) row_interior |= 1u << r;
    if (i >= 1 && i <= g.ny && local >= D && local < R - D) row_stored |= 1u << r;
  }
  unsigned keeps = 0;
#pragma unroll
  for (int r = 0; r < RW; ++r)
#pragma unroll
    for (int q = 0; q < W; ++q)
      if (!((row_interior >> r) & (col_interior >> q) & 1u)) keeps |= 1u << (r * W + q);
  asm volatile("" : "+r"(keeps));
  const std::int64_t base = i0 * g.pitch + x;
  const int nz = static_cast<int>(g.nz);
  const int kz0 = static_cast<int>(z0), kz1 = static_cast<int>(z1);
  const unsigned u_rows = col_grid != 0 ? row_grid : 0u, b_rows = col_interior != 0 ? row_interior : 0u;

  Lane<T>* const planes = reinterpret_cast<Lane<T>*>(bytes);
  Lane<T>* const mine = planes + warp * RW * 32 + lane;  // the lane's point of row 0 in plane 0
  // Staging plane j (0, 1) and ring slot s, as whole planes (the boxes' destinations) and as the
  // lane's view (row r at + 32 r).
  auto staged_plane = [&](int j) { return planes + j * plane_lanes; };
  constexpr int stagings = Tma ? 2 : 1;
  auto ring_plane = [&](int slot) { return planes + (stagings + slot) * plane_lanes; };
  Lane<T>* const edges = planes + (stagings + slots) * plane_lanes;
  std::uint64_t* const bars =
      reinterpret_cast<std::uint64_t*>(bytes + lean_planes_bytes<F, T>(D) + lean_edges_bytes<F, T>(D));
  // Edge slot of warp w (−1 .. NW): padded, slot w + 1; unpadded, w clamped into the block.
  auto edge = [&](int parity, int level, int w, int side) -> Lane<T>& {
    const int at = F::padded ? w + 1 : w < 0 ? 0 : w >= NW ? NW - 1 : w;
    return edges[(((parity * D + level) * F::edge_slots + at) * 2 + side) * 32 + lane];
  };
  const T* const u_lane = u + base;
  const T* const b_lane = b + base;
  // The boxes' first column in the maps (which start at column 1 - G) and first rows.
  const int box_x = static_cast<int>(x0 - 1 + G), box_y = static_cast<int>(y0);
  const bool issuer = lane == 0 && warp == 0;
  // Plane k of u into staging plane k & 1 (the lanes' copies use plane 0 only), its b into ring
  // slot `slot`.
  auto fetch = [&](int k, int slot) {
    if constexpr (Tma) {
      if (issuer) {
        std::uint64_t* const bar = bars + (k & 1);
        barrier_expect(bar, 2 * static_cast<unsigned>(lean_plane_bytes<F, T>));
        // A plane beyond the maps (the warm-up and drain at the top and bottom faces) is
        // loaded clamped into them rather than as a box wholly outside: its values reach only
        // points outside the box, which are restored, so any finite value does.
        const int uz = k < 0 ? 0 : k > nz + 1 ? nz + 1 : k, bz = k - 1 < 0 ? 0 : k - 1 > nz - 1 ? nz - 1 : k - 1;
        box_load(staged_plane(k & 1), u_map, box_x, box_y, uz, bar);
        box_load(ring_plane(slot), b_map, box_x, box_y - 1, bz, bar);
      }
    } else {
      const std::int64_t at = k * g.plane;
      const unsigned u_read = k >= 0 && k <= nz + 1 ? u_rows : 0u, b_read = k >= 1 && k <= nz ? b_rows : 0u;
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        const bool read = u_read >> r & 1u;
        copy_async_16(mine + 32 * r, read ? u_lane + at + r * g.pitch : u + 1, read);
      }
      commit_copies();
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        const bool read = b_read >> r & 1u;
        copy_async_16(mine + (stagings + slot) * plane_lanes + 32 * r, read ? b_lane + at + r * g.pitch : b + 1, read);
      }
      commit_copies();
    }
  };

  const int first = kz0 - D, end = kz1 + D;
  for (int t = 0; t < D; ++t)
    for (int side = 0; side < 2; ++side) edge((first - 1) & 1, t, warp, side) = Lane<T>{};
  __syncthreads();
  int slot = ((first % slots) + slots) % slots;
  fetch(first, slot);

  auto step = [&](auto checked, int k, Lane<T>(&up)[D][RW], Lane<T>(&mid)[D][RW]) {
    constexpr bool Checked = decltype(checked)::value;
    const int parity = k & 1;
    const int next_slot = slot + 1 == slots ? 0 : slot + 1;
    Lane<T> fresh[RW];
    if constexpr (Tma) {
      // Staging plane (k + 1) & 1 and ring slot next_slot were last read in step k - 1, which
      // ended at a block barrier: the next boxes may land there now.
      if (k + 1 < end) fetch(k + 1, next_slot);
      barrier_wait(bars + parity, phases >> parity & 1u);
      phases ^= 1u << parity;
      const Lane<T>* const from = staged_plane(parity) + warp * RW * 32 + lane;
#pragma unroll
      for (int r = 0; r < RW; ++r) fresh[r] = from[32 * r];
    } else {
      wait_copies<1>();
#pragma unroll
      for (int r = 0; r < RW; ++r) fresh[r] = mine[32 * r];
      if (k + 1 < end) fetch(k + 1, next_slot);
    }
    edge(parity, 0, warp, 0) = fresh[0];
    edge(parity, 0, warp, 1) = fresh[RW - 1];
    for_each_level<1, D>([&](auto level) {
      constexpr int t = decltype(level)::value;
      const int p = k - t;
      const Lane<T>(&c)[RW] = mid[t - 1];
      const Lane<T> north = edge(parity ^ 1, t - 1, warp - 1, 1);
      const Lane<T> south = edge(parity ^ 1, t - 1, warp + 1, 0);
      const int b_slot = slot - t < 0 ? slot - t + slots : slot - t;
      const Lane<T>* const rhs_row = mine + (stagings + b_slot) * plane_lanes;
      Lane<T> next[RW];
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        const Lane<T> rhs = rhs_row[32 * r];
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
          // The point's global index clamped into the box, as in the library (Stencil7 reads none).
          const std::int64_t kk = p < 1 ? 1 : p > nz ? nz : p;
          const std::int64_t ii = i0 + r < 1 ? 1 : i0 + r > g.ny ? g.ny : i0 + r;
          const std::int64_t jj = x + q < 1 ? 1 : x + q > g.nx ? g.nx : x + q;
          next[r].v[q] = s.update(nb, g.point<3>(kk, ii, jj), rhs.v[q]);
        }
      }
      if (Checked && (p < 1 || p > nz)) {
#pragma unroll
        for (int r = 0; r < RW; ++r) next[r] = c[r];
      } else if (keeps != 0) {
        // Opaque here too: with the register room the split leaves, ptxas would otherwise hoist
        // the 16 bits into 16 registers for the whole stream.
        unsigned mask = keeps;
        asm volatile("" : "+r"(mask));
#pragma unroll
        for (int r = 0; r < RW; ++r)
#pragma unroll
          for (int q = 0; q < W; ++q)
            if (mask >> (r * W + q) & 1u) next[r].v[q] = c[r].v[q];
      }
#pragma unroll
      for (int r = 0; r < RW; ++r) up[t - 1][r] = fresh[r];
      if constexpr (t < D) {
        edge(parity, t, warp, 0) = next[0];
        edge(parity, t, warp, 1) = next[RW - 1];
#pragma unroll
        for (int r = 0; r < RW; ++r) fresh[r] = next[r];
      } else if (p >= kz0 && p < kz1 && row_stored != 0 && col_stored != 0) {
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
    __syncthreads();
  };
  Lane<T> even[D][RW], odd[D][RW];
#pragma unroll
  for (int t = 0; t < D; ++t)
#pragma unroll
    for (int r = 0; r < RW; ++r) even[t][r] = odd[t][r] = Lane<T>{};
  // Steps k and k + 1 check no plane where planes k - D .. k lie in [1, nz].
  for (int k = first; k < end; k += 2) {
    if (Split && k - D >= 1 && k <= nz && k + 1 < end) {
      step(std::false_type{}, k, even, odd);
      step(std::false_type{}, k + 1, odd, even);
    } else {
      step(std::true_type{}, k, even, odd);
      if (k + 1 < end) step(std::true_type{}, k + 1, odd, even);
    }
  }
  if constexpr (!Tma) wait_copies<0>();
}

// Stream-K over all tiles' planes, as `plane_stream_k_kernel`, with the study's agent.
template <int D, class F, class S, class T>
__global__ void __launch_bounds__(32 * F::warps, 1)
    lean_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                std::int64_t tiles_x, std::int64_t planes, const __grid_constant__ CUtensorMap u_map,
                const __grid_constant__ CUtensorMap b_map) {
  extern __shared__ __align__(128) unsigned char lean_bytes[];
  if constexpr (F::tma) {
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      auto* bars = reinterpret_cast<std::uint64_t*>(lean_bytes + lean_shared_bytes<F, T>(D) - 2 * sizeof(std::uint64_t));
      barrier_init(bars);
      barrier_init(bars + 1);
      barrier_init_fence();
    }
    // stream_planes_lean's first block barrier orders the initialisation before any use.
  }
  unsigned phases = 0;
  const PlaneShare share = plane_share(planes, blockIdx.x, gridDim.x);
  for (std::int64_t at = share.first; at < share.last;) {
    const PlanePiece piece = plane_piece(at, share.last, g.nz);
    const std::int64_t x0 = (piece.tile % tiles_x) * plane_columns_kept<D, T> + 1 - plane_ghost_columns<D, T>;
    const std::int64_t y0 = (piece.tile / tiles_x) * (F::rows - 2 * D) + 1 - D;
    stream_planes_lean<D, F>(s, u, out, b, g, x0, y0, piece.z0, piece.z1, threadIdx.x, threadIdx.y, lean_bytes,
                             &u_map, &b_map, phases);
    at += piece.z1 - piece.z0;
  }
}

// ---- Host side ---------------------------------------------------------------------------------

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    RELAX_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled is not available from the driver\n");
      std::exit(1);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A map of `columns` x `rows` x `planes` points of a grid whose point (0, 0, 0) of the map is at
// `corner`, boxes of one 3D stream tile-plane (32 lanes' vectors x `box_rows` rows x 1).
template <class T>
CUtensorMap plane_map(const T* corner, std::int64_t columns, std::int64_t rows, std::int64_t planes, const Shape& g,
                      int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(planes)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(g.pitch) * sizeof(T), static_cast<cuuint64_t>(g.plane) * sizeof(T)};
  const cuuint32_t box[3] = {32 * Lane<T>::width, static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t steps[3] = {1, 1, 1};
  const CUresult status = encode_tiled()(
      &map, sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3,
      const_cast<T*>(corner), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(status));
    std::exit(1);
  }
  return map;
}

enum class Variant { library, split, tma, tma_split, w12, w12_split };
const char* name_of(Variant v) {
  switch (v) {
    case Variant::library: return "library";
    case Variant::split: return "split";
    case Variant::tma: return "tma";
    case Variant::tma_split: return "tma+split";
    case Variant::w12: return "12x3";
    case Variant::w12_split: return "12x3+split";
  }
  return "?";
}

template <int D, class F, class S, class T>
void launch_lean(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out, const DeviceGrid<T>& b) {
  constexpr int G = plane_ghost_columns<D, T>;
  const Shape g = shape_of(u.layout());
  const std::int64_t tiles_x = tile_count(g.nx, plane_columns_kept<D, T>);
  const std::int64_t tiles = tiles_x * tile_count(g.ny, F::rows - 2 * D);
  // u: columns 1 - G .. nx + 1, rows 0 .. ny + 1, planes 0 .. nz + 1 (zeros beyond: the grid);
  // b: columns 1 - G .. nx, rows and planes 1 .. n (zeros beyond: the interior, but for the
  // G columns left of it, which belong to no stored point). Only the Tma forms read them.
  CUtensorMap u_map{}, b_map{};
  if constexpr (F::tma) {
    u_map = plane_map(u.origin() + 1 - G, g.nx + 1 + G, g.ny + 2, g.nz + 2, g, F::rows);
    b_map = plane_map(b.origin() + g.plane + g.pitch + 1 - G, g.nx + G, g.ny, g.nz, g, F::rows);
  }
  auto kernel = lean_kernel<D, F, S, T>;
  const std::size_t bytes = lean_shared_bytes<F, T>(D);
  // As plane_stream_resident, for the form's block size.
  RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  int per_sm = 0;
  RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * F::warps, bytes));
  if (per_sm < 1) {
    std::fprintf(stderr, "a block of %d warps with %zu bytes of shared memory does not fit on an SM\n", F::warps, bytes);
    std::exit(1);
  }
  const std::int64_t resident = static_cast<std::int64_t>(per_sm) * current_sm_count();
  const auto blocks = static_cast<unsigned>(std::min(resident, tiles * g.nz));
  kernel<<<blocks, dim3(32, F::warps), bytes>>>(s, u.origin(), out.origin(), b.origin(), g, tiles_x, tiles * g.nz,
                                                u_map, b_map);
  RELAX_CUDA_CHECK_LAUNCH();
}

template <int D, class S, class T>
void launch(Variant v, const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out, const DeviceGrid<T>& b) {
  switch (v) {
    case Variant::library: launch_plane_stream<D>(s, u, out, b, nullptr, PlaneSchedule::stream_k); break;
    case Variant::split: launch_lean<D, Form<false, true>>(s, u, out, b); break;
    case Variant::tma: launch_lean<D, Form<true, false>>(s, u, out, b); break;
    case Variant::tma_split: launch_lean<D, Form<true, true>>(s, u, out, b); break;
    case Variant::w12: launch_lean<D, Form<false, false, 12, 3, false>>(s, u, out, b); break;
    case Variant::w12_split: launch_lean<D, Form<false, true, 12, 3, false>>(s, u, out, b); break;
  }
}

int failures = 0;

// Every variant against the library's stream-K kernel on one box: bits, then time (twice,
// interleaved). The whole output array is compared, ring and padding included.
template <int D>
void compare(std::int64_t nx, std::int64_t ny, std::int64_t nz, int rounds = 2, int reps = 0) {
  const Stencil7<float> s(10.0);
  study::Box box(Extents(nx, ny, nz));
  if (reps == 0) reps = nx * ny * nz > 50'000'000 ? 20 : 5;
  const double points = double(nx) * ny * nz * D;
  for (int round = 0; round < rounds; ++round) {
    const float ms_ref = time_ms(reps, [&] { launch<D>(Variant::library, s, box.u, box.ref, box.b); });
    std::printf("%lldx%lldx%lld D=%d round %d: library stream-K %.3f ms %.1f G/s\n", (long long)nx, (long long)ny,
                (long long)nz, D, round, ms_ref, points / ms_ref / 1e6);
    for (Variant v : {Variant::split, Variant::tma, Variant::tma_split, Variant::w12, Variant::w12_split}) {
      box.reset();
      const float ms = time_ms(reps, [&] { launch<D>(v, s, box.u, box.got, box.b); });
      const std::int64_t differing = box.differing();
      failures += differing != 0;
      std::printf("  %-10s %.3f ms %.1f G/s  speed-up %.3f over the library  differing %lld\n", name_of(v), ms,
                  points / ms / 1e6, ms_ref / ms, (long long)differing);
    }
  }
}

int main(int argc, char** argv) {
  int device = 0;
  cudaDeviceProp prop{};
  RELAX_CUDA_CHECK(cudaGetDevice(&device));
  RELAX_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs; the library's plane stream built with %d warps of %d rows, edge padding %d, split %d\n",
              prop.name, prop.multiProcessorCount, tuning::plane_stream_warps, tuning::plane_stream_rows_per_warp,
              int(tuning::plane_stream_edge_padding), int(tuning::plane_stream_split));
  if (argc > 1 && std::strcmp(argv[1], "--one") == 0) {
    // For Nsight Compute: 512^3, D = 4, each kernel launched twice (a warm-up and one timed).
    compare<4>(512, 512, 512, 1, 1);
    return failures == 0 ? 0 : 1;
  }
  // Awkward boxes first (bits): one plane, one row, one column, partial tiles on every axis, a
  // box narrower than a tile, D from 1 to 4.
  compare<4>(33, 17, 5);
  compare<2>(70, 40, 1);
  compare<3>(1, 1, 64);
  compare<1>(130, 1, 7);
  compare<2>(250, 49, 61);
  compare<4>(121, 25, 300);
  compare<3>(500, 77, 33);
  // The figures.
  compare<4>(512, 512, 512);
  compare<3>(512, 512, 512);
  compare<4>(256, 256, 256);
  compare<4>(768, 768, 768);
  std::printf("%s: %d variant runs differ from the library\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
